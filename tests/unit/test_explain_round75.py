"""Round 75's rules (issue 45), from threads about out-of-memory in multi-GPU jobs: a GPU filled by other processes (the
other ranks, each with a CUDA context or tensors on GPU 0) as PyTorch's own out-of-memory message lists them, a GPU
filled inside torch.load while it put a checkpoint back on the device it was saved from, and a rank killed while
DeepSpeed merged the ZeRO checkpoint it had read into its optimizer in host memory: a second wording of each, in
another version's or caller's words than the corpus case it was written from, and near misses that must not be read
as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("cuda-oom-other-ranks-on-gpu", "cuda-oom-torch-load-device")

_ZERO_READ = ("[2024-03-05 22:14:09,311] [INFO] [engine.py:3040:_get_all_zero_checkpoint_state_dicts] successfully read "
              "8 ZeRO state_dicts for rank 3\n")


@pytest.mark.parametrize("text,expected", [
    # qibin0506/llm_trainer#2 (torch 2.x, four ranks on one node): three other processes on GPU 0, the message wrapped
    # by the terminal after them
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 79.32 GiB "
     "of which 6.88 MiB is free. Process 1563103 has 9.89 GiB memory in use. Process 1563102 has 35.03 GiB memory in "
     "use. Process 1563104 has 23.79 GiB memory in use. Includ\n", "cuda-oom-other-ranks-on-gpu"),
    # Lightricks/LTX-2#57 (accelerate FSDP, 4 processes, in a container: NVML's PIDs are not the process's own, so
    # it lists itself as a "Process" too, and no "this process" part)
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 79.10 GiB "
     "of which 15.19 MiB is free. Process 16746 has 20.84 GiB memory in use. Process 16747 has 20.33 GiB memory in use. "
     "Process 16748 has 18.94 GiB memory in use. Process 16749 has 18.94 GiB memory in use. Of the allocated memory "
     "19.60 GiB is allocated by PyTorch, and 225.59 MiB is reserved by PyTorch but unallocated.\n",
     "cuda-oom-other-ranks-on-gpu"),
    # reportProcessMemoryInfo lists the processes in NVML's order: the rank itself between two others (composed from
    # CUDACachingAllocator.cpp's words)
    ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a total capacity of "
     "39.39 GiB of which 512.00 KiB is free. Process 311 has 2.10 GiB memory in use. Including non-PyTorch memory, "
     "this process has 35.02 GiB memory in use. Process 312 has 2.10 GiB memory in use. Of the allocated memory 33.10 "
     "GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n",
     "cuda-oom-other-ranks-on-gpu"),
    # torch 1.x's restore (serialization.py's _cuda_deserialize makes the saved device current, then obj.cuda): the
    # driver's out-of-memory as it creates a context on GPU 0 (frame names of torch 1.13's serialization.py)
    ("Traceback (most recent call last):\n"
     "  File \"tools/train.py\", line 96, in <module>\n"
     "    ckpt = torch.load(args.resume)\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 789, in load\n"
     "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 1131, in _load\n"
     "    result = unpickler.load()\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 1101, in persistent_load\n"
     "    load_tensor(dtype, nbytes, key, _maybe_decode_ascii(location))\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 1083, in load_tensor\n"
     "    wrap_storage=restore_location(storage, location),\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 215, in default_restore_location\n"
     "    result = fn(storage, location)\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/serialization.py\", line 187, in _cuda_deserialize\n"
     "    return obj.cuda(device)\n"
     "  File \"/opt/conda/lib/python3.9/site-packages/torch/_utils.py\", line 80, in _cuda\n"
     "    untyped_storage = torch.UntypedStorage(\n"
     "RuntimeError: CUDA error: out of memory\n", "cuda-oom-torch-load-device"),
    # the same under torchrun's rank prefix, with a map_location dict (serialization.py's restore_location closure)
    # that still leaves cuda:0 where it was
    ("[rank5]:   File \"/usr/local/lib/python3.10/dist-packages/torch/serialization.py\", line 1941, in "
     "restore_location\n"
     "[rank5]:     return default_restore_location(storage, location)\n"
     "[rank5]:   File \"/usr/local/lib/python3.10/dist-packages/torch/serialization.py\", line 734, in "
     "default_restore_location\n"
     "[rank5]:     result = fn(storage, location)\n"
     "[rank5]:   File \"/usr/local/lib/python3.10/dist-packages/torch/serialization.py\", line 668, in _deserialize\n"
     "[rank5]:     return obj.to(device=device)\n"
     "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.64 GiB. GPU 0 has a total capacity of "
     "79.33 GiB of which 1.11 GiB is free.\n", "cuda-oom-torch-load-device"),
    # DeepSpeed's launcher after the read (launch.py's sigkill_handler: a line per process, then the return code)
    (_ZERO_READ +
     "[2024-03-05 22:14:40,102] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 4410\n"
     "[2024-03-05 22:14:40,131] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 4411\n"
     "[2024-03-05 22:14:41,660] [ERROR] [launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
     "'--local_rank=3', '--deepspeed', 'ds_config.json'] exits with return code = -9\n", "memcg-oom"),
    # torchrun's agent after the read (torch/distributed/elastic/multiprocessing/api.py's "failed (exitcode: N)")
    (_ZERO_READ +
     "W0305 22:14:40.102000 4400 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4411 closing "
     "signal SIGTERM\n"
     "E0305 22:14:41.660000 4400 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
     "local_rank: 3 (pid: 4413) of binary: /usr/bin/python\n", "memcg-oom"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # andimarafioti/florence2-finetuning#17 (one GPU, in a container): the one process listed is the process itself
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 108.00 MiB. GPU 0 has a total capacty of 15.89 GiB of "
     "which 65.12 MiB is free. Process 2670 has 15.82 GiB memory in use. Of the allocated memory 15.36 GiB is allocated "
     "by PyTorch, and 168.02 MiB is reserved by PyTorch but unallocated.\n", "cuda-oom-other-ranks-on-gpu"),
    # netease-youdao/QAnything#303: one other process with 662 MiB next to this process's 22.90 GiB
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB. GPU 0 has a total capacty of 23.64 "
     "GiB of which 67.06 MiB is free. Process 250345 has 662.00 MiB memory in use. Including non-PyTorch memory, this "
     "process has 22.90 GiB memory in use. Of the allocated memory 18.70 GiB is allocated by PyTorch, and 353.02 MiB is "
     "reserved by PyTorch but unallocated.\n", "cuda-oom-other-ranks-on-gpu"),
    # meta-llama/llama-cookbook#949 (torchrun, GPU 2): no other process on the rank's own GPU
    ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 2 has a total capacity of "
     "14.61 GiB of which 1.99 GiB is free. Including non-PyTorch memory, this process has 12.62 GiB memory in use. Of "
     "the allocated memory 8.50 GiB is allocated by PyTorch, and 3.96 GiB is reserved by PyTorch but unallocated.\n",
     "cuda-oom-other-ranks-on-gpu"),
    # torch.load onto the CPU that runs out of host memory (c10's DefaultCPUAllocator, while serialization.py's
    # load_tensor reads the storage): no GPU's shortage
    ("  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 2147, in load_tensor\n"
     "    wrap_storage = restore_location(storage, location)\n"
     "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 734, in default_restore_location\n"
     "    result = fn(storage, location)\n"
     "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to "
     "allocate 4294967296 bytes.\n", "cuda-oom-torch-load-device"),
    # deepspeedai/DeepSpeed#4153: the HF Trainer moving the whole model onto the GPU (module.to), after a load
    ("  File \"/venv/lib/python3.8/site-packages/transformers/trainer.py\", line 741, in _move_model_to_device\n"
     "    model = model.to(device)\n"
     "  File \"/venv/lib/python3.8/site-packages/torch/nn/modules/module.py\", line 1145, in to\n"
     "    return self._apply(convert)\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 1; 23.65 GiB total capacity; "
     "22.98 GiB already allocated; 81.56 MiB free; 22.98 GiB reserved in total by PyTorch)\n",
     "cuda-oom-torch-load-device"),
    # safetensors' load_file(device="cuda") (huggingface/lerobot#4009's loader): not torch.load's restore
    ("  File \"/opt/venv/lib/python3.12/site-packages/safetensors/torch.py\", line 315, in load_file\n"
     "    result[k] = f.get_tensor(k)\n"
     "torch.AcceleratorError: CUDA error: out of memory\n", "cuda-oom-torch-load-device"),
    # the ZeRO read, then the load's end ("loading N zero partition checkpoints"): a kill later is not the load's
    (_ZERO_READ +
     "[2024-03-05 22:14:21,870] [INFO] [engine.py:2984:_load_zero_checkpoint] loading 8 zero partition checkpoints for "
     "rank 3\n"
     "[2024-03-05 22:20:02,410] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 4410\n", "memcg-oom"),
    # the read, then a rank that crashed (launch.py's return code -11: SIGSEGV)
    (_ZERO_READ +
     "[2024-03-05 22:14:40,102] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 4410\n"
     "[2024-03-05 22:14:41,660] [ERROR] [launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits "
     "with return code = -11\n", "memcg-oom"),
    # the read, then the rank's own error (torch's load_state_dict refusing the optimizer's groups)
    (_ZERO_READ +
     "Traceback (most recent call last):\n"
     "  File \"train.py\", line 77, in <module>\n"
     "    engine.load_checkpoint(args.ckpt)\n"
     "ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group\n"
     "[2024-03-05 22:14:40,102] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 4410\n", "memcg-oom"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_plain_out_of_memory_stays_the_plain_one():
    # the near misses above are still GPU shortages of their own process
    assert sig("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 2 has a total "
               "capacity of 14.61 GiB of which 1.99 GiB is free. Including non-PyTorch memory, this process has 12.62 "
               "GiB memory in use.\n") == "cuda-oom"


def test_new_signatures_have_their_texts_and_logs():
    by_name = translated_and_final(NEW)
    assert all(by_name[n].cause for n in NEW)
