"""Round 24's rules (issue 45), PyTorch's own distributed machinery (sigtorch.py; DeviceMesh in sigframeworks.py, the
distributed checkpoint in sigmessages.py, DDP's buffer copy in siglibs.py's autograd answer): DDP given a module not
on its one GPU, FSDP on a process whose current device is not the rank's, a collective on a dtype its backend lacks, a
torch built without distributed, NCCL refused /dev/shm, the launcher's forwarded SIGHUP, a mesh bigger than the world,
a key the distributed checkpoint lacks: a second wording of each, in another version's or another caller's words than
the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain, rankerror
from dscluster.sigtorch import TORCH_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # DDP 1.6-1.7's wording with the module's devices (the cases: 1.8+'s CPU module, and the bare older line)
    ("AssertionError: DistributedDataParallel device_ids and output_device arguments only work with single-device "
     "CUDA modules, but got device_ids [0], output_device 0, and module parameters {device(type='cuda', index=0), "
     "device(type='cpu')}.\n", "ddp-module-device"),
    # FSDP's constructor check (the case was its forward's assertion)
    ("[rank1]: ValueError: Inconsistent compute device and `device_id` on rank 1: cuda:0 vs cuda:1\n",
     "fsdp-current-device"),
    # torchcomms' NCCL backend (the cases were ProcessGroupNCCL 1.2's and gloo's)
    ("Traceback (most recent call last):\n  File \"init.py\", line 20, in <module>\n    mask.any()\n"
     "RuntimeError: Unsupported tensor data type for NCCL\n", "collective-dtype-unsupported"),
    # gloo's dispatch inside a whole traceback (the case was pasted from its frame on)
    ("Traceback (most recent call last):\n  File \"t.py\", line 14, in worker\n    dist.all_reduce(tensor)\n"
     "  File \"/usr/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py\", line 1320, in all_reduce\n"
     "    work.wait()\nRuntimeError: Invalid scalar type\n", "collective-dtype-unsupported"),
    # another core name, and a source build without c10d (the case was init_process_group on macOS)
    ("AttributeError: module 'torch.distributed' has no attribute 'is_initialized'\n", "dist-unavailable"),
    ("ModuleNotFoundError: No module named 'torch._C._distributed_c10d'; 'torch._C' is not a package\n",
     "dist-unavailable"),
    # NCCL 2.x's older shm.h words (the explain log has shmutils.cc's)
    ("node3:1201:1288 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
     "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled system error, NCCL "
     "version 2.7.8\n", "dev-shm-permission"),
    # the agent's own exception, alone (the case was its SIGHUP forwarding lines)
    ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 8665 got signal: 1\n", "sighup"),
    # DeviceMesh's newer wording, with the world size (pytorch/pytorch#135271)
    ("RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!\n",
     "world-size-indivisible"),
    # the checkpoint planner's own line (the case had it only in a frame's source line)
    ("[rank0]:     raise RuntimeError(f\"Missing key in checkpoint state_dict: {fqn}.\")\n"
     "[rank0]: RuntimeError: Missing key in checkpoint state_dict: layer.weight.\n", "ckpt-model-mismatch"),
    # autograd's words for DDP's buffer copy stay its answer, which now names DDP's copy
    ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.cuda.FloatTensor [768]] is at version 3; expected version 2 instead.\n", "autograd-inplace"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a newer API an older torch lacks: another version, not a build without distributed
    ("AttributeError: module 'torch.distributed' has no attribute 'device_mesh'\n", "dist-unavailable"),
    # torch's type dispatch elsewhere, not in a collective
    ("Traceback (most recent call last):\n  File \"m.py\", line 3, in <module>\n    y = op(x)\n"
     "RuntimeError: Invalid scalar type\n", "collective-dtype-unsupported"),
    # the agent stopping the other workers after one failed
    ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 5012 closing signal SIGTERM\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 5011)\n", "sighup"),
    # /dev/shm full, not refused
    ("gpu07:41822:41901 [1] misc/shmutils.cc:71 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-3kPq1a (size 9637888), error: No space left on device (28)\n", "dev-shm-permission"),
    # DDP of a module with nothing to train (round 21's)
    ("RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
     "gradient.\n", "ddp-module-device"),
    # FSDP run forward on a CPU model: another check
    ("RuntimeError: An FSDP-managed module unexpectedly has parameters on cpu. Make sure to move the module to cuda:0 "
     "before training.\n", "fsdp-current-device"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_frame_pasted_without_its_indentation_stays_with_its_error():
    text = ('File "/x/site-packages/torch/distributed/distributed_c10d.py", line 2290, in scatter\n'
            "    work.wait()\nRuntimeError: Invalid scalar type\n")
    (err,) = [e for s in rankerror.streams(text) for e in rankerror.errors(s)]
    assert "distributed_c10d.py" in err.block and err.type == "RuntimeError"


def test_the_new_texts_are_translated_and_only_the_hang_up_restarts():
    zh = FAILURES_ZH
    for s in TORCH_SIGNATURES:
        assert s.cause in zh and s.fix in zh, s.name
        # round 30's MASTER_ADDR that does not resolve (yet) restarts too: a scheduler names the master once it is up;
        # round 109's name no resolver answered for at all ("Temporary failure in name resolution") does not, nor
        # round 141's address the kernel refuses to connect to (the name resolved: the same address again)
        assert s.retry is (s.name in ("sighup", "master-unreachable") and "no answer at all" not in s.cause
                           and "refuses to connect to" not in s.cause), s.name
    inplace = explain.explain("RuntimeError: one of the variables needed for gradient computation has been modified "
                              "by an inplace operation: [torch.cuda.FloatTensor [1, 32]] is at version 3\n")
    assert inplace.cause in zh and "DistributedDataParallel" in inplace.cause
    assert "broadcast_buffers=False" in inplace.fix
