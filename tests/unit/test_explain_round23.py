"""Round 23's rules (issue 45), failures users post in DeepSpeed's own repositories (sigdeepspeed.py, sigmessages.py):
DeepSpeed looking for the ranks in MPI because no launcher set them, an extension linked without the CUDA library it
calls, a bug in an installed package's own code, a ZeRO-3 weight used while partitioned, NVMe offload without a path,
zero_to_fp32.py's partitions that do not add up, and a keyword an installed package's function does not take: a second
wording of each, in another version's or another caller's words than the corpus case it was written from, and near
misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigdeepspeed import DEEPSPEED_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed's own line before its MPI discovery, under torch's [rankN]: prefix (the cases: the bare
    # ModuleNotFoundError, and comm.py's frame without the line)
    ("[2024-05-02 10:00:00,000] [INFO] [comm.py:637:init_distributed] Not using the DeepSpeed or dist launchers, "
     "attempting to detect MPI environment...\n"
     "[rank0]: Traceback (most recent call last):\n"
     "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py\", line 677, in mpi_discovery\n"
     "[rank0]:     from mpi4py import MPI\n"
     "[rank0]: ModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    # DeepSpeed before 0.6: deepspeed/utils/distributed.py
    ("  File \"/usr/lib/python3/dist-packages/deepspeed/utils/distributed.py\", line 51, in mpi_discovery\n"
     "    from mpi4py import MPI\n"
     "ModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    # cuBLAS's C function missing from a JIT-built op (the case: cuRAND's from a pre-built one)
    ("ImportError: /home/u/.cache/torch_extensions/py310_cu121/cpu_adam/cpu_adam.so: undefined symbol: "
     "cublasCreate_v2\n", "link-lib-missing"),
    # CPython's NameError in transformers' own file, under [rankN]: (the case: DeepSpeed's, bare)
    ("[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/transformers/trainer.py\", line 2280, in "
     "_inner_training_loop\n"
     "[rank0]:     if is_torch_xla_available():\n"
     "[rank0]: NameError: name 'is_torch_xla_available' is not defined\n", "package-too-old"),
    # addmm's words under F.linear in a second model under ZeRO-3, with torch's [rankN]: prefix
    ("[rank1]:   File \"/opt/venv/lib/python3.10/site-packages/torch/nn/functional.py\", line 1848, in linear\n"
     "[rank1]:     ret = torch.addmm(bias, input, weight.t())\n"
     "[rank1]: RuntimeError: tensors must be 2-D\n", "zero3-param-partitioned"),
    # older DeepSpeed's wording of zero.Init's check (OFFLOAD_PARAM_NVME_PATH, unquoted)
    ("AssertionError: nvme_path in DeepSpeed Config cannot be None if remote device is nvme\n", "ds-config-invalid"),
    # zero_to_fp32.py of DeepSpeed 0.5.3, run from the checkpoint's directory (the case: the same check, another count)
    ("  File \"zero_to_fp32.py\", line 244, in _get_fp32_state_dict_from_zero_checkpoint\n"
     "    f\"consumed {offset} numels out of {avail_numel} - something is wrong\")\n"
     "ValueError: consumed 255381772 numels out of 255381776 - something is wrong\n", "package-too-old"),
    # a keyword DeepSpeed's initialize does not take (the case: zero.Init's)
    ("  File \"pretrain.py\", line 212, in main\n"
     "    model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, mesh_param=(2, 4))\n"
     "TypeError: initialize() got an unexpected keyword argument 'mesh_param'\n", "import-name"),
    # TRL's trainer under Python 3.11's carets and torch's [rankN]: prefix
    ("[rank0]:   File \"/work/sft.py\", line 40, in <module>\n"
     "[rank0]:     trainer = trl.SFTTrainer(model=model, tokenizer=tok, args=cfg)\n"
     "[rank0]:               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "[rank0]: TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'\n",
     "hf-trainer-tokenizer-renamed"),  # round 170: the rename itself (processing_class), no longer the generic answer
])
def test_a_second_wording(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # another package whose name starts like mpi4py, and a submodule of an installed mpi4py
    ("ModuleNotFoundError: No module named 'mpi4py_fft'\n", "not-launched"),
    ("ModuleNotFoundError: No module named 'mpi4py.futures'\n", "not-launched"),
    # a CUDA symbol missing from torch's own library (an older cuDNN/cuBLAS/runtime loaded), a versioned symbol, a
    # C++ symbol of torch's (an extension built against another torch)
    ("ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
     "cudaGraphInstantiateWithFlags\n", "link-lib-missing"),
    ("OSError: /opt/venv/lib/python3.10/site-packages/nvidia/cublas/lib/libcublas.so.12: undefined symbol: "
     "cublasLtGetStatusString, version libcublasLt.so.12\n", "link-lib-missing"),
    ("ImportError: /root/.cache/torch_extensions/py38_cu117/fused_adam/fused_adam.so: undefined symbol: "
     "_ZN3c104cuda20CUDACachingAllocator9allocatorE\n", "link-lib-missing"),
    # a NameError in the script's own file is its own bug
    ("  File \"train.py\", line 40, in main\n    model = build(cfg)\nNameError: name 'build' is not defined\n",
     "package-too-old"),
    # a keyword the script's own function does not take
    ("  File \"train.py\", line 88, in <module>\n    run(lr=1e-4, warmup=10)\n"
     "TypeError: run() got an unexpected keyword argument 'warmup'\n", "import-name"),
])
def test_a_near_miss(text, not_expected):
    assert sig(text) != not_expected


def test_the_near_misses_keep_their_own_answers():
    assert sig("ImportError: /root/.cache/torch_extensions/py38_cu117/fused_adam/fused_adam.so: undefined symbol: "
               "_ZN3c104cuda20CUDACachingAllocator9allocatorE\n") == "undefined-symbol"
    assert sig("ModuleNotFoundError: No module named 'mpi4py_fft'\n") == "module-not-found"


def test_every_new_text_has_a_zh_tw_translation():
    catalog = FAILURES_ZH
    missing = [t for s in DEEPSPEED_SIGNATURES for t in (s.cause, s.fix) if t not in catalog]
    assert missing == []


def test_no_restart_for_what_repeats():
    assert all(not s.retry for s in DEEPSPEED_SIGNATURES)


def test_deepspeed_looking_for_mpi_is_no_failure_by_itself():
    # Under an MPI launcher the discovery succeeds: the INFO line before a later error is not the cause.
    text = ("[2024-05-02 10:00:00,000] [INFO] [comm.py:637:init_distributed] Not using the DeepSpeed or dist launchers, "
            "attempting to detect MPI environment...\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; "
            "77.10 GiB already allocated)\n")
    assert sig(text) == "cuda-oom"
