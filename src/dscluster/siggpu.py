"""Failure signatures only a GPU shows, from round 210 of issue 45 (live: broken users' scripts run for real on one
H100, torch 2.11 + CUDA 13, DeepSpeed 0.19.8, NCCL): a Dataset that returns CUDA tensors to a DataLoader that pins
memory, a cuBLAS call that fails because an earlier kernel already failed (an embedding looked up past its table,
reported at the next matrix product) or the GPU had no memory for cuBLAS's handle, and a script reading an attribute
that DeepSpeed's optimizer wrapper does not have (optimizer.cur_scale on 0.19's fp16 optimizer without ZeRO). Each
pattern is the wording of the component that prints it (torch/utils/data/_utils/pin_memory.py's Tensor.pin_memory,
ATen's cuBLAS checks, Python's AttributeError naming DeepSpeed's wrapper classes), never one log's. sigrounds.py places
this table with the other round tables, before the exception messages' (sigmessages.py) and the generic answers."""

from __future__ import annotations

from dscluster.sigtypes import OWN_FRAME, Signature
from dscluster.sigtypes import sig as _sig

# DeepSpeed's optimizer wrappers, as deepspeed.initialize returns them (runtime/fp16/unfused_optimizer.py,
# fp16/fused_optimizer.py, bf16_optimizer.py, zero/stage_1_and_2.py, zero/stage3.py).
_DS_OPTIMIZERS = r"(?:FP16_UnfusedOptimizer|FP16_Optimizer|BF16_Optimizer|DeepSpeedZeroOptimizer\w{0,20})"
# The traceback's last frame is the user's own file (not site-packages): the script read the attribute itself. Read by
# DeepSpeed's own code ('ipg_index' after a plain loss.backward(), ds-loss-backward's) or by a library (Accelerate's
# integration with another DeepSpeed: the versions' answers), it is another failure.
_OWN_LAST_FRAME = OWN_FRAME + r"(?:(?![^\n]{0,300}File \")[^\n]{0,300}\n){1,2}?[^\n]{0,100}?"

GPU_SIGNATURES: tuple[Signature, ...] = (
    # torch/utils/data/_utils/pin_memory.py, pin_memory(): `return data.pin_memory()` on each tensor of the batch;
    # ATen: "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned".
    _sig("pin-memory-cuda-tensor",
         r"(?P<ev>cannot pin 'torch\.cuda\.\w{1,40}' only dense CPU tensors can be pinned)",
         "The DataLoader pins its batches (pin_memory=True) and a batch holds a tensor already on the GPU: the "
         "Dataset's __getitem__ (or the collate_fn) moves samples to CUDA itself, and only tensors in CPU memory can "
         "be pinned. (Moving samples to the GPU inside the Dataset also breaks with num_workers > 0: CUDA cannot be "
         "used in forked workers.)",
         "Return CPU tensors from the Dataset and collate_fn, and move the batch to the rank's GPU in the training "
         "loop (batch.to(device, non_blocking=True), which the pinned memory speeds up); or, where the data must be "
         "made on the GPU, set pin_memory=False and num_workers=0. A restart fails the same way.", retry=False),
    # ATen's cuBLAS checks (aten/src/ATen/cuda/CUDABlas.cpp, CublasHandlePool.cpp): "CUDA error:
    # CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`", "CUBLAS_STATUS_EXECUTION_FAILED when calling
    # `cublasSgemm( handle, ...)`", "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`" (NOT_SUPPORTED is
    # bf16 on a GPU without it: sigmessages' precision-unsupported, before this table's words are reached).
    _sig("cublas-after-fault",
         r"(?P<ev>CUBLAS_STATUS_(?:INTERNAL_ERROR|EXECUTION_FAILED|ALLOC_FAILED) when calling `?cublas\w{0,40})",
         "cuBLAS failed in a matrix product (a Linear layer, matmul, the LM head), most often not because of that "
         "product: an earlier GPU kernel had already failed and CUDA reports it at the next call. Usually an index "
         "out of range: a token id at or past the embedding's rows (a tokenizer larger than the model's vocabulary, "
         "added special tokens without resize_token_embeddings), a position past the position table, a label past "
         "the classes; CUDA kernels run asynchronously, so the traceback points at a later operation. Otherwise the "
         "GPU had no memory left when cuBLAS created its handle and workspace at the first matrix product "
         "(ALLOC_FAILED; INTERNAL_ERROR at cublasCreate too): another process on that GPU, or this one's tensors.",
         "Find the operation that failed: run again with CUDA_LAUNCH_BLOCKING=1 (or the same batch on the CPU, where "
         "an index error names itself); check max(input_ids) < model.get_input_embeddings().num_embeddings (resize "
         "the embeddings to len(tokenizer)), positions below max_position_embeddings and labels below the number of "
         "classes. If memory is the cause, check nvidia-smi for other processes on the rank's GPU and lower the "
         "batch. A restart fails the same way.", retry=False),
    # Python's AttributeError on the optimizer deepspeed.initialize returned: "'FP16_UnfusedOptimizer' object has no
    # attribute 'cur_scale'" (0.19 keeps the fp16 loss scale in loss_scale_config; ZeRO-1/2's optimizer still has a
    # cur_scale property), raised in the user's own frame. add_param_group has its own answer (sigpgroup.py, an
    # earlier round table).
    _sig("ds-optimizer-wrapper-attribute",
         _OWN_LAST_FRAME + r"(?P<ev>AttributeError: '" + _DS_OPTIMIZERS + r"' object has no attribute '\w{1,60}')",
         "The script reads an attribute the optimizer deepspeed.initialize returned does not have: that object is "
         "DeepSpeed's wrapper (FP16_Optimizer, FP16_UnfusedOptimizer, BF16_Optimizer, DeepSpeedZeroOptimizer) "
         "around the optimizer the script built, and its attributes differ by DeepSpeed version and ZeRO stage. "
         "Code written for another release fails this way: DeepSpeed 0.19's fp16 optimizer without ZeRO keeps the "
         "loss scale in loss_scale_config and has no cur_scale (ZeRO-1/2's still has one).",
         "Read the loss scale as optimizer.loss_scale (every DeepSpeed fp16 optimizer has it) or leave it to "
         "DeepSpeed's own logging (steps_per_print); the wrapped torch optimizer is optimizer.optimizer, and "
         "param_groups is forwarded by every wrapper. Use only what the installed DeepSpeed's wrapper defines, or "
         "install the DeepSpeed release the code was written for. A restart fails the same way.", retry=False),
)
