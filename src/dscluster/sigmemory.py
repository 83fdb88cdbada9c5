"""Failure signatures of memory in training (round 40 of issue 45): a GPU allocation whose size is no memory shortage
but a garbage size, and ZeRO-Infinity's NVMe swap files. Each pattern is the wording of the component that prints it,
never one log's: PyTorch's CUDA allocators (c10/cuda/CUDACachingAllocator.cpp and CUDAMallocAsyncAllocator.cpp refuse
any request of 1 EB or more with TORCH_CHECK_WITH(OutOfMemoryError, ..., "CUDA out of memory. Tried to allocate more
than 1EB memory.")), and DeepSpeed's async I/O handle (csrc/aio/py_lib/deepspeed_py_aio_handle.cpp, later
deepspeed_py_io_handle.cpp: on a read it prints "<file>: buffer nbytes != file bytes N != M" and asserts
`static_cast<long long int>(buffer.nbytes()) == num_file_bytes`). sigmessages.py places this table before PyTorch's
own, so the size's own rule comes before the plain out-of-memory one (signatures.py's cuda-oom). Round 75 (out-of-memory in
multi-GPU jobs) added two GPU shortages that a smaller batch does not cure: other processes (most often the other ranks)
holding memory on the GPU, as the allocator's own message lists them, and torch.load restoring a checkpoint onto the
GPU it was saved from. Round 132 (ZeRO-Offload and ZeRO-Infinity) added the async_io op's own failures: its completion
assertion (deepspeed_aio_common.cpp _do_io_complete), a swap file whose name is too long for the file system (its
report_file_error line), and an async_io library built without all of DeepSpeed's own sources (an undefined deepspeed_*
symbol). Review 145 added the Hugging Face Trainer's evaluation running out of GPU memory while it concatenates the
predictions it keeps (trainer_pt_utils.py nested_concat / torch_pad_and_concatenate). The real logs they are measured on
are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

# A size as PyTorch's allocator formats it (c10/cuda/CUDACachingAllocator.cpp format_size: bytes, KiB, MiB, GiB).
_SIZE = r"[\d.]+ (?:bytes|[KMG]iB)"
# Where torch.load puts a saved tensor back on its device (torch/serialization.py): the frames of the restore, torch
# 1.x-2.x's _cuda_deserialize, 2.x's _deserialize("cuda", ...) behind default_restore_location.
_RESTORE = r"torch[/\\]serialization\.py\"?, line \d+, in (?:_cuda_deserialize|default_restore_location|_deserialize)\b"
# torch.load told where to put the tensors (review 89): map_location naming a CUDA device ("cuda", f"cuda:{rank}",
# torch.device("cuda", rank)) or a dict of locations, on the call's line the traceback shows (a DDP script's
# `torch.load(args.loadmodel, map_location=torch.device('cuda', rank))`): the restore then fills the GPU it was told,
# the rank's own or not, and the out-of-memory is not a location saved with the tensors.
_MAPPED_TO_GPU = then(r"torch\.load\(", r"map_location\s*=\s*(?:torch\.device\(\s*)?(?:f?['\"]cuda|\{)")

# Review 145: the Hugging Face Trainer's evaluation keeps every batch's predictions on the GPU until the end of the
# evaluation set (or every eval_accumulation_steps steps) and grows them with transformers' trainer_pt_utils.py
# nested_concat -> torch_pad_and_concatenate (`torch.cat((tensor1, tensor2), dim=0)` or `tensor1.new_full(new_shape,
# padding_index)`, the same words since transformers 4.0; EvalLoopContainer.add calls it from 4.41). An out-of-memory
# raised in one of those two frames, with no other file's frame after it (the evaluation batch's own forward stays
# cuda-oom), is the accumulated predictions: the plain traceback's 'File "...trainer_pt_utils.py", line N, in
# torch_pad_and_concatenate' and IPython's 'File .../trainer_pt_utils.py:N, in torch_pad_and_concatenate(...)'.
_EVAL_CONCAT = r"trainer_pt_utils\.py(?:\"?, line \d+,|:\d+,?) in (?:nested_concat|torch_pad_and_concatenate)\b"
_NO_OTHER_FRAME = r"(?:(?![^\n]*\bFile [\"/~.\w])[^\n]*\n){0,16}?"

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
    # Round 132 (ZeRO-Offload and ZeRO-Infinity): DeepSpeed's async I/O op waits for its swap reads and writes with
    # io_(p)getevents and asserts it got at least the completions asked for (csrc/aio/common/deepspeed_aio_common.cpp
    # _do_io_complete: `assert(n_completes >= min_completes)`, the same words since 2021): the call returned an error.
    # Before 0.15.1 the bytes each I/O thread moves were an int (io_op_desc_t::_num_bytes_per_thread, PR 6410 "Fix Type
    # Mismatch"): a swap tensor over 2 GiB per thread overflowed it and the completion count asked went negative.
    _sig("nvme-aio-io-complete-failed", r"Assertion `n_completes >= min_completes' failed",
         "ZeRO-Infinity's NVMe offload (DeepSpeed's async_io op) got an error back from the kernel while it waited for "
         "its swap-file reads and writes, and the op's C assertion in _do_io_complete aborted the process. In DeepSpeed "
         "before 0.15.1 the bytes each I/O thread moves were kept in an int, so a swapped tensor of more than 2 GiB per "
         "I/O thread (a large sub_group_size or buffer_size) overflowed it and made the request invalid.",
         "Upgrade DeepSpeed to 0.15.1 or later (pull request 6410 keeps the size in 64 bits), then clear "
         "~/.cache/torch_extensions so async_io is rebuilt; until then keep each swapped tensor under 2 GiB per I/O "
         "thread (a smaller sub_group_size, offload buffer_size, or more aio thread_count). Check that nvme_path is a "
         "local file system that takes O_DIRECT (not NFS, tmpfs or overlay).", retry=False),
    # DeepSpeed's async I/O could not open a swap file (report_file_error in deepspeed_aio_common.cpp: "deepspeed_aio:
    # open for write  failed on FILE error = ERRNO") because the file's own name passes the file system's 255 bytes:
    # errno 36 (ENAMETOOLONG), or, where the errno is cut off, a last path component of 256 characters or more. ZeRO-3
    # named each optimizer sub-group's swap file after every parameter id of the sub-group joined by '_' (stage3.py's
    # ds_id) until 0.13.3 (PR 5176, "Reduce ds_id name length", for DeepSpeed#5087). Other errnos (a missing folder,
    # no permission) are not read here.
    _sig("nvme-swap-name-too-long", r"deepspeed_aio:\s+open for (?:write|read)\s+failed on (?:(?:[^/\s]*/)*[^/\s]{256}|"
         r"\S+ error = 36\b)",
         "ZeRO-3's NVMe offload could not create a swap file because its name is longer than the file system allows "
         "(255 bytes per name, ENAMETOOLONG): DeepSpeed before 0.13.3 named each optimizer sub-group's swap file after "
         "the ids of every parameter in the sub-group joined by '_', so a sub-group of many parameters gets a name of "
         "thousands of characters.",
         "Upgrade DeepSpeed to 0.13.3 or later (it names the file after the sub-group's first and last parameter); "
         "until then lower sub_group_size in zero_optimization so each sub-group holds fewer parameters. Delete the "
         "partial swap folder under nvme_path before the next run; a restart meets the same name.", retry=False),
    # DeepSpeed's own symbol undefined in the async I/O op it built: the .so declares a function of csrc/aio's
    # deepspeed_* classes (deepspeed_io_handle_t, deepspeed_aio_handle_t, ...; mangled _ZN<len>deepspeed_... or a free
    # function's _Z<len>deepspeed_...) that none of its compiled sources defines, so the op builder's source list lacks
    # files (op_builder/npu/async_io.py in 0.18.7, missing deepspeed_py_io_handle.cpp and two more: PR 7894). A
    # library's symbol (libaio's io_pgetevents, curand's, torch's _ZN3c10...) stays undefined-symbol or link trouble.
    _sig("ds-op-incomplete-sources", r"\.so: undefined symbol: _ZN?K?\d+deepspeed_\w",
         "DeepSpeed's async I/O op (async_io, used by ZeRO-Infinity's NVMe offload) was built without all of its own "
         "C++ sources: the library references a function of DeepSpeed's own aio classes that was never compiled into "
         "it. That DeepSpeed release's op builder for this accelerator lists too few source files (0.18.7's Ascend NPU "
         "builder, fixed in 0.18.8), so rebuilding the same version gives the same library; it is not a stale build.",
         "Upgrade DeepSpeed to a release whose op builder for your accelerator lists every aio source (0.18.8 or later "
         "for Ascend NPU), then clear ~/.cache/torch_extensions (or TORCH_EXTENSIONS_DIR) so async_io is rebuilt; until "
         "then offload to the CPU (offload_optimizer / offload_param device \"cpu\") instead of nvme.", retry=False),
    # Review 145 (huggingface/transformers#17089, #7158: "CUDA out of memory in evaluation_loop"): see _EVAL_CONCAT.
    _sig("hf-eval-preds-gpu-oom", r"(?P<ev>" + _EVAL_CONCAT + r"[^\n]*\n" + _NO_OTHER_FRAME +
         r"[^\n]*(?:CUDA out of memory|CUDA error: out of memory))",
         "A GPU ran out of memory in the Hugging Face Trainer's evaluation while it joined this batch's predictions to "
         "those of the batches before (trainer_pt_utils' nested_concat / torch_pad_and_concatenate): unless "
         "eval_accumulation_steps is set, the Trainer keeps the predictions of the whole evaluation set on the GPU "
         "until the end, and a language model's logits (batch x sequence x vocabulary) fill it after some steps. "
         "Training fit; the accumulated evaluation outputs do not.",
         "Set eval_accumulation_steps (a few steps) so the predictions move to the CPU as the evaluation goes, and "
         "keep less of them: preprocess_logits_for_metrics returning logits.argmax(-1) instead of the logits, or "
         "prediction_loss_only (no compute_metrics) when only the loss is needed. A smaller training batch does not "
         "help, and a restart fails at the same evaluation.", retry=False),
    # PyTorch 2.1+'s out-of-memory message lists every process that holds memory on the GPU (CUDACachingAllocator.cpp
    # reportProcessMemoryInfo, from NVML): "Process <pid> has <size> memory in use." for each other process, "Including
    # non-PyTorch memory, this process has <size> memory in use." for itself (in a container, whose PIDs NVML does not
    # see, itself too as "Process <pid>"). Two such processes on the OOM's GPU: other processes hold its memory, in a
    # multi-GPU job the other ranks, each of which created a CUDA context on (or put tensors on) this GPU: no
    # torch.cuda.set_device(local_rank) before its first CUDA call, a bare "cuda" device, a load without map_location.
    # One listed process may be the rank itself, or a small leftover: not read.
    _sig("cuda-oom-other-ranks-on-gpu", then(r"CUDA out of memory\. Tried to allocate",
                                             r"Process \d+ has " + _SIZE + r" memory in use\. (?:Including non-PyTorch "
                                             r"memory, this process has " + _SIZE + r" memory in use\. )?Process \d+ has"),
         "A GPU ran out of memory that other processes hold: PyTorch's message lists them (\"Process N has X memory in "
         "use\"). In a multi-GPU job these are most often the other ranks, each of which also created a CUDA context "
         "or allocated on this GPU (usually GPU 0) besides its own: no torch.cuda.set_device(local_rank) before its "
         "first CUDA call, a tensor or model sent to a bare \"cuda\" device, a checkpoint loaded without map_location; "
         "or processes of an earlier run or another job still on the GPU.",
         "Make each rank use only its own GPU: call torch.cuda.set_device(local_rank) at the very start, before any "
         "CUDA work, use \"cuda:N\" with N the local rank (not \"cuda\" or \"cuda:0\"), and load checkpoints with "
         "map_location=\"cpu\" or the rank's own device. `nvidia-smi` shows which processes hold each GPU; end the "
         "leftovers of earlier runs. A smaller batch does not free what the other processes hold.", retry=False),
    # torch.load (torch/serialization.py) puts each saved tensor back on the device it was saved from (its location
    # tag, "cuda:0" for what rank 0 saved) unless map_location says otherwise: an out-of-memory raised inside that
    # restore (the caching allocator's "CUDA out of memory", or the driver's "CUDA error: out of memory" as it makes a
    # context there) is the checkpoint landing on a GPU, in a multi-GPU job every rank's copy on GPU 0.
    _sig("cuda-oom-torch-load-device", r"\A(?![\s\S]*" + _MAPPED_TO_GPU + r")[\s\S]*?(?P<ev>" + _RESTORE +
         r"[^\n]*\n(?:[^\n]*\n){0,12}?[^\n]*(?:CUDA out of memory|OutOfMemoryError|CUDA error: out of memory))",
         "A GPU ran out of memory inside torch.load, while it put the checkpoint's tensors back on a GPU: without "
         "map_location each tensor returns to the device it was saved from (cuda:0 for what rank 0 saved), so in a "
         "multi-GPU job every rank loads its copy of the checkpoint (an optimizer state often twice the model) onto "
         "GPU 0, next to what is there already.",
         "Load checkpoints onto the CPU or the rank's own device: torch.load(path, map_location=\"cpu\") (or "
         "map_location=\"cuda:N\" with N the local rank), then load_state_dict; the model's and optimizer's load_state_dict "
         "move the values to their parameters' devices. Lowering the batch size does not help.", retry=False),
    # PyTorch's CPU allocator (c10/core/impl/alloc_cpu.cpp alloc_cpu, CPUAllocator.cpp before 1.12): posix_memalign
    # refused one block, `DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes. Error code 12
    # (Cannot allocate memory)` (since pytorch#20618, 2019; `[enforce fail at CPUAllocator.cpp:64]` or
    # `alloc_cpu.cpp:75] err == 0.` before it), Windows' _aligned_malloc `DefaultCPUAllocator: not enough memory: you
    # tried to allocate N bytes.`, and before 2019 `posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0`. One
    # allocation, of the size it names, not a process killed by the kernel (memcg-oom) nor a fork refused (host-memory).
    # Round 164: numpy's refusal of one array (numpy/_core/_exceptions.py, _ArrayMemoryError.__str__: "Unable to
    # allocate {size} for an array with shape {shape} and data type {dtype}"; numpy 1.17's first form "Unable to
    # allocate array with shape ..."), raised where malloc fails, for RAM or a ulimit -v (RLIMIT_AS). Not Slurm's
    # "Unable to allocate resources" (no array).
    _sig("host-alloc-refused", r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to "
         r"allocate \d+ ?(?:bytes|GB)|\bposix_memalign\(&data, gAlignment, nbytes\) == 0\. 12 vs 0|"
         r"\bUnable to allocate (?:\d+(?:\.\d*)? ?[KMGTPE]?i?B for an )?array with shape \(",
         "PyTorch's CPU allocator (or numpy, for an array) could not get one block of host memory of the size the "
         "message names (you tried to allocate N bytes; Unable to allocate N GiB for an array): that one tensor or "
         "array is larger than the RAM left on the node, or than the process's memory limit (ulimit -v, a job's "
         "or container's limit). A size beyond the machine's "
         "memory is a shape computed wrong or a whole-dataset buffer (a sample count, vocabulary or sequence length "
         "where a batch's belongs, features of a whole corpus cached at once); a size of gigabytes is a real "
         "shortage, e.g. every rank of the node loading the full model in fp32 on the CPU.",
         "Compare the size with the node's memory (free -g) and the process's limit (ulimit -v): allocate per batch or memory-map the data (numpy.memmap, "
         "a dataset read lazily) instead of one buffer for all of it, and check the shape that gives the size; for a "
         "model, load it once per node or in half precision with low_cpu_mem_usage, or start fewer ranks per node. "
         "A restart asks for the same size again.", retry=False),
)

# Read before a rank's vague error like the plain out-of-memory (signatures.py's BEFORE_THE_ERROR): another rank's
# NCCL error may come first.
# Round 132: DeepSpeed's aio line for a swap file it could not open stands before Python's bare AssertionError
# (swap_tensor/utils.py swap_out_tensors: `assert (swap_handle.async_pwrite(buffer, path) == 0)`).
# Review 145: the Trainer's evaluation frames stand before the out-of-memory line too.
MEMORY_BEFORE_VAGUE = frozenset({"cuda-oom-other-ranks-on-gpu", "cuda-oom-torch-load-device", "nvme-swap-name-too-long",
                                 "hf-eval-preds-gpu-oom"})
# Review 145: read with the lines before a rank's error too (sigmessages.READS_BEFORE): IPython shows the Trainer's
# frames above a bare "OutOfMemoryError: CUDA out of memory" line, outside the error's block.
MEMORY_READS_BEFORE = tuple(s for s in MEMORY_SIGNATURES if s.name == "hf-eval-preds-gpu-oom")
