"""Failure signatures of memory in training (round 40 of issue 45): a GPU allocation whose size is no memory shortage
but a garbage size, and ZeRO-Infinity's NVMe swap files. Each pattern is the wording of the component that prints it,
never one log's: PyTorch's CUDA allocators (c10/cuda/CUDACachingAllocator.cpp and CUDAMallocAsyncAllocator.cpp refuse
any request of 1 EB or more with TORCH_CHECK_WITH(OutOfMemoryError, ..., "CUDA out of memory. Tried to allocate more
than 1EB memory.")), and DeepSpeed's async I/O handle (csrc/aio/py_lib/deepspeed_py_aio_handle.cpp, later
deepspeed_py_io_handle.cpp: on a read it prints "<file>: buffer nbytes != file bytes N != M" and asserts
`static_cast<long long int>(buffer.nbytes()) == num_file_bytes`). sigmessages.py places this table before PyTorch's
own, so the size's own rule comes before the plain out-of-memory one (signatures.py's cuda-oom). The real logs they
are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

MEMORY_SIGNATURES: tuple[Signature, ...] = (
    # More than an exabyte is no model's tensor: the size came from a corrupted length (an object collective's size
    # header read out of step, ranks that ran different numbers of steps, a timed-out broadcast's buffer).
    _sig("cuda-oom-bogus-size", r"Tried to allocate more than 1EB memory",
         "A GPU allocation asked for more than an exabyte: no real shortage of memory but a corrupted size, most often "
         "read from a collective that went wrong (ranks out of step: a different number of batches per rank, a "
         "timed-out or failed broadcast, an object collective's size header) just before.",
         "Look above for the first failure (a collective timeout, a rank that exited or finished early) and fix that; "
         "give every rank the same number of steps (drop_last, an equal-length sampler). Lowering the batch size will "
         "not help.", retry=False),
    # The swap file read back is not the tensor's size: the asynchronous write before it was short or failed.
    _sig("nvme-swap-short", r"\.swp: buffer nbytes != file bytes \d+ != \d+|"
         r"Assertion `static_cast<long long int>\(buffer\.nbytes\(\)\) == num_file_bytes' failed",
         "ZeRO-Infinity's NVMe offload read back a swap file (*.tensor.swp under nvme_path) whose size is not the "
         "tensor's: the asynchronous write before it was short or failed (a tensor tail not aligned to the device's "
         "block size in older DeepSpeed, a full disk, or a filesystem that does not take O_DIRECT writes well).",
         "Point nvme_path at a local NVMe filesystem with room (not a network or overlay filesystem), delete the old "
         "swap folder, and upgrade DeepSpeed; check the config's aio block_size and the offload buffer_size against "
         "the device (DeepSpeed's ds_nvme_tune).", retry=False),
)
