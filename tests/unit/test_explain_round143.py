"""Round 143's rules (issue 45), from threads of distributed training without NVIDIA's NCCL (CPU-only and Intel CPU/XPU
runs, gloo, oneCCL, MPI, Apple's MPS): Intel's oneCCL bindings without point-to-point send/recv (DeepSpeed's pipeline on
CPU), oneCCL unable to learn the local rank under a launcher that is not MPI's, distributed training on Apple's MPS
device (gloo given MPS tensors, Lightning's refusal, torch's BackendConfig), a torch built without MPI asked for the mpi
backend, and gloo's "Invalid scalar type" for a dtype its dispatch lacks told by gloo named before it: a second wording
of each, in another version's or caller's words than the corpus case it was written from, and near misses that must
not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ccl-p2p-unsupported", "ccl-local-rank-unknown", "mps-distributed-unsupported", "mpi-backend-not-built")


@pytest.mark.parametrize("text,expected", [
    # intel/torch-ccl before #85 (src/ProcessGroupCCL.cpp): the receiving stage's words
    ("Traceback (most recent call last):\n"
     "  File \"/usr/lib/python3.9/site-packages/deepspeed/runtime/pipe/p2p.py\", line 81, in recv\n"
     "    return dist.recv(tensor, src_rank)\n"
     "RuntimeError: ProcessGroupCCL does not support recv\n", "ccl-p2p-unsupported"),
    # torch-ccl since #85, its CPU stub (src/dispatch_stub.h fail(), "implementd" as printed)
    ("RuntimeError: oneccl_bindings_for_pytorch: send isn't implementd on backend [cpu].\n", "ccl-p2p-unsupported"),
    # oneCCL 2021.11's pmix branch of global.cpp, raised through torch-ccl ("oneCCL: FILE:LINE FUNC: EXCEPTION: MSG",
    # intel/torch-ccl#54's form)
    ("2023:12:01-08:00:12:(4411) |CCL_WARN| could not get local_idx/count from environment variables, trying to get "
     "them from ATL\n"
     "RuntimeError: oneCCL: global.cpp:200 getenv_local_coord: EXCEPTION: to get local_idx/count from ATL, set "
     "CCL_ZE_IPC_EXCHANGE=sockets explicitly\n", "ccl-local-rank-unknown"),
    # torch 2.x's BackendConfig for init_process_group without a backend on a Mac (deepspeedai/DeepSpeed#7148)
    ("E   ValueError: We detected accelerator mps on your machine. But we don't know which communication backend to "
     "use for this accelerator. Please specify the `backend` argument in the `init_process_group` call.\n",
     "mps-distributed-unsupported"),
    # Lightning Fabric's connector (fabric/connector.py), the strategy given as a string
    ("ValueError: You set `strategy=ddp` but strategies from the DDP family are not supported on the MPS "
     "accelerator. Either explicitly set `accelerator='cpu'` or change the strategy.\n", "mps-distributed-unsupported"),
    # ProcessGroupGloo.cpp's check from DDP's module-state broadcast (another op, float parameters)
    ("RuntimeError: ProcessGroupGloo::broadcast: invalid tensor type at index 0 (expected TensorOptions(dtype=float, "
     "device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_format="
     "(nullopt)), got TensorOptions(dtype=float, device=mps:0, layout=Strided, requires_grad=false (default), "
     "pinned_memory=false (default), memory_format=(nullopt)))\n", "mps-distributed-unsupported"),
    # torch before the source-build hint (distributed_c10d.py's shorter message)
    ("  File \"/opt/venv/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py\", line 512, in "
     "_new_process_group_helper\n"
     "    raise RuntimeError(\"Distributed package doesn't have MPI built in\")\n"
     "RuntimeError: Distributed package doesn't have MPI built in\n", "mpi-backend-not-built"),
    # DDP's construction of a bfloat16 model over gloo: the module-state broadcast's frames, not distributed_c10d.py's
    ("Traceback (most recent call last):\n"
     "  File \"/work/train.py\", line 40, in <module>\n"
     "    model = DistributedDataParallel(model)\n"
     "  File \"/usr/lib/python3.10/site-packages/torch/nn/parallel/distributed.py\", line 798, in __init__\n"
     "    _sync_module_states(\n"
     "  File \"/usr/lib/python3.10/site-packages/torch/distributed/utils.py\", line 318, in _sync_module_states\n"
     "    _sync_params_and_buffers(process_group, module_states, broadcast_bucket_size, src)\n"
     "  File \"/usr/lib/python3.10/site-packages/torch/distributed/utils.py\", line 329, in _sync_params_and_buffers\n"
     "    dist._broadcast_coalesced(\n"
     "RuntimeError: Invalid scalar type\n", "collective-dtype-unsupported"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # intel/torch-ccl#33: a collective the binding lacked on IPEX's old XPU device, not point-to-point
    ("RuntimeError: oneccl_bindings_for_pytorch: broadcast isn't implemented on backend [xpu].\n",
     "ccl-p2p-unsupported"),
    # torch-ccl's own refusal of a coalesced collective (src/ProcessGroupCCL.cpp)
    ("RuntimeError: ProcessGroupCCL does not support allgather_coalesced\n", "ccl-p2p-unsupported"),
    # intel/torch-ccl#54: oneCCL's worker thread not started (pthread_create 22), after the same warnings
    ("2023:11:28-16:35:45:(35980) |CCL_WARN| could not get local_idx/count from environment variables, trying to get "
     "them from ATL\n"
     "2023:11:28-16:35:45:(35980) |CCL_ERROR| base_thread.cpp:36 start: error while creating worker thread #0 "
     "pthread_create returns 22\n"
     "RuntimeError: oneCCL: exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 0\n",
     "ccl-local-rank-unknown"),
    # huggingface/accelerate#3664: the warnings of a start that goes on (later oneCCL falls back by itself)
    ("2025:07:27-12:04:20:(555537) |CCL_WARN| did not find MPI-launcher specific variables, switch to ATL/OFI, to "
     "force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi\n"
     "2025:07:27-12:04:20:(555537) |CCL_WARN| could not get local_idx/count from environment variables, trying to "
     "get them from ATL\n", "ccl-local-rank-unknown"),
    # intel/ipex-llm#11877: oneCCL's fallback warning, not an error
    ("(RayWorkerVllm pid=7746) 2024:08:21-10:24:26:( 7746) |CCL_WARN| fallback to 'sockets' mode of ze exchange "
     "mechanism, to use CCL_ZE_IPC_EXHANGE=drmfd, set CCL_LOCAL_RANK/SIZE explicitly  or use process launcher\n",
     "ccl-local-rank-unknown"),
    # gloo given a CUDA tensor beside CPU ones: a device mix, not MPS
    ("RuntimeError: ProcessGroupGloo::allreduce: invalid tensor type at index 1 (expected TensorOptions(dtype=float, "
     "device=cuda:0, layout=Strided, requires_grad=false (default)), got TensorOptions(dtype=float, device=cpu, "
     "layout=Strided, requires_grad=false (default)))\n", "mps-distributed-unsupported"),
    # gloo's dtype check on the CPU (another dtype, same device)
    ("RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected TensorOptions(dtype=float, "
     "device=cpu), got TensorOptions(dtype=double, device=cpu))\n", "mps-distributed-unsupported"),
    # the NCCL wording of the same distributed_c10d.py check stays nccl-unavailable's
    ("RuntimeError: Distributed package doesn't have NCCL built in\n", "mpi-backend-not-built"),
    # pytorch/pytorch#92573: torch 2.0's nightly source build with MPI, a registry regression, not a build without MPI
    ("AssertionError: Unknown c10d backend type MPI\n", "mpi-backend-not-built"),
    # a Python library's own "Invalid scalar type" (a ValueError, not torch's TORCH_CHECK) after a gloo mention
    ("dist.init_process_group(\"gloo\")\n"
     "  File \"/work/geometry/mat3.py\", line 58, in __mul__\n"
     "    raise ValueError(\"Invalid scalar type\")\n"
     "ValueError: Invalid scalar type\n", "collective-dtype-unsupported"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_nccl_built_in_is_still_nccl_unavailable():
    assert sig("RuntimeError: Distributed package doesn't have NCCL built in\n") == "nccl-unavailable"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
