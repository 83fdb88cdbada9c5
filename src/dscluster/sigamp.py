"""Failure signatures of dtypes and mixed precision in the user's own code, from round 204 of issue 45 (live: broken
users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8 on CPU under DDP): an indexed in-place write (index_add_,
scatter_, index_copy_, index_put_) from a source of another dtype (autocast's bfloat16 output into a float32
accumulator), an RNN fed another dtype than its weights, a normalization layer's low-precision parameters against a
float32 input (CPU's mixed-dtype check), a float32 input to a model made float64 (torch.set_default_dtype), attention's
query, key and value of different dtypes, GradScaler.update() with no step recorded (gradient accumulation) and an
operation with no bfloat16 kernel applied to a bf16 model's output. Each pattern is ATen's or torch's own wording (the
indexing kernels' dtype checks, nn.RNNBase's check, aten's mixed_dtype check, addmm/mm, sdpa's input check,
torch/amp/grad_scaler.py, the dispatch macros and linalg's low-precision check), never one log's. sigrounds.py places
this table with the other round tables, before the exception messages' (siglibs' dtype-mismatch and float64-input,
signumerics' gradscaler-no-grads, sigtraining's half-on-cpu read after it)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

AMP_SIGNATURES: tuple[Signature, ...] = (
    # ATen's indexing kernels, which do not convert their source as copy_ does: index_add_/index_reduce_ ("self (Float)
    # and source (BFloat16) must have the same scalar type"), scatter_/scatter_add_/scatter_reduce_ ("scatter():
    # Expected self.dtype to be equal to src.dtype"), index_copy_, index_put_ (and `t[idx] = src`), masked_scatter_.
    _sig("index-op-source-dtype",
         r"index_(?:add|reduce)_\(\): self \((\w+)\) and source \((?!\1\))\w+\) must have the same scalar type|"
         r"scatter(?:_add|_reduce)?\(\): Expected self\.dtype to be equal to src\.dtype|"
         r"index_copy_\(\): self and source expected to have the same dtype|"
         r"Index put requires the source and destination dtypes match|"
         r"masked_scatter_?: expected self and source to have same dtypes",
         "An indexed in-place write (index_add_, scatter_add_/scatter_, index_copy_, index_put_ or t[idx] = src, "
         "masked_scatter_) got a source of another dtype than the tensor it writes into; unlike copy_ and plain "
         "assignment these operations never convert. Most often the source comes out of torch.autocast (or a model "
         "cast with .half()/.to(torch.bfloat16), DeepSpeed's bf16/fp16) in bfloat16/float16 while the accumulator was "
         "made float32 with torch.zeros; or a float64 numpy source meets a float32 buffer.",
         "Cast the source to the destination's dtype where it is written: buf.index_add_(0, idx, src.to(buf.dtype)) "
         "(likewise scatter_add_, index_copy_, buf[idx] = src.to(buf.dtype)); keep accumulators float32 (summing in "
         "bfloat16 loses precision) rather than making the buffer low precision. A restart fails the same way.",
         retry=False),
    # torch/nn/modules/rnn.py (RNNBase._check_input's dtype check, torch 2.x): "RNN input dtype (torch.bfloat16) does
    # not match weight dtype (torch.float32). Convert input: ..., or convert model: ...".
    _sig("rnn-input-dtype", r"RNN input dtype \(torch\.(\w+)\) does not match weight dtype \(torch\.(?!\1\))\w+\)",
         "An nn.LSTM / nn.GRU / nn.RNN was given an input of another dtype than its weights: part of the model was "
         "cast alone (the embedding table or an encoder before the RNN made bfloat16/float16 to save memory, while the "
         "RNN stayed float32), or the model was cast (.to(torch.bfloat16), .half(), DeepSpeed's bf16/fp16) while its "
         "input stays float32, or the reverse.",
         "Give the whole model one dtype (cast the model, not one layer: model.to(dtype), and the floating-point "
         "inputs with it), or convert at the boundary: self.rnn(x.to(self.rnn.weight_ih_l0.dtype)); to save memory "
         "with float32 weights elsewhere, use torch.autocast(\"cpu\", dtype=torch.bfloat16) instead of casting "
         "layers. A restart fails the same way.", retry=False),
    # ATen's mixed-dtype check of the CPU normalization kernels (aten/src/ATen/native/mixed_dtype.h, LayerNorm,
    # BatchNorm, GroupNorm): a bfloat16/float16 input with float32 parameters is allowed, any other mix (a float32
    # input to low-precision or float64 parameters) is refused with "mixed dtype (CPU): expect parameter to have
    # scalar type of Float".
    _sig("cpu-norm-param-dtype", r"mixed dtype \(CPU\): expect parameter to have scalar type of \w+",
         "A normalization layer (BatchNorm, LayerNorm, GroupNorm) on the CPU got a float32 input while its own weight "
         "and bias are of another dtype: the model was cast to bfloat16/float16 (model.to(torch.bfloat16), .half(), "
         "DeepSpeed's bf16) or to float64 while the batch reaching the norm stays float32 (the DataLoader's float32 "
         "features, a tensor the script makes); torch's CPU kernels accept only a low-precision input with float32 "
         "parameters, not a float32 input with low-precision ones.",
         "Cast the floating-point inputs to the model's dtype before the forward (x = x.to(torch.bfloat16), or "
         "x.to(next(model.parameters()).dtype)); or keep the model float32 and run the forward under "
         "torch.autocast(\"cpu\", dtype=torch.bfloat16) instead of casting it. A restart fails the same way.",
         retry=False),
    # The reverse of signumpy's float64-input: the input (mat1, the conv's input) is the float32 one and the weights
    # (mat2, the conv's bias) are float64 (ATen's addmm "mat1 and mat2 must have the same dtype, but got Float and
    # Double", the CPU mm's "expected m1 and m2 to have the same dtype, but got: float != double", conv's "Input type
    # (float) and bias type (double)").
    _sig("float32-input-double-model",
         r"mat1 and mat2 must have the same dtype, but got Float and Double|expected (?:mat1 and mat2|m1 and m2) to "
         r"have the same dtype, but got: float != double|Input type \(float\) and bias type \(double\) should be the "
         r"same|Input type \(torch\.FloatTensor\) and weight type \(torch\.DoubleTensor\) should be the same",
         "The model's weights are float64 (double) and its input is float32: torch.set_default_dtype(torch.float64) "
         "ran before the model was built (or model.double() was called), so its layers are double, while the data "
         "stays float32 (numpy float32 arrays through torch.from_numpy, a dataset or tensors saved as float32, tensors "
         "made before the default changed); a default dtype changes what torch creates, never existing data.",
         "Give both one dtype: convert the inputs where they become tensors (torch.from_numpy(x).to("
         "torch.get_default_dtype()), x.astype(np.float64), or .double() in the dataset), or, if float64 was not "
         "needed, drop torch.set_default_dtype / model.double() and train in float32. A restart fails the same way.",
         retry=False),
    # torch's scaled_dot_product_attention input check (aten/src/ATen/native/transformers/sdp_utils_cpp.h): "Expected
    # query, key, and value to have the same dtype, but got query.dtype: c10::BFloat16 key.dtype: float and
    # value.dtype: float instead."
    _sig("sdpa-qkv-dtype", r"Expected query, key, and value to have the same dtype, but got query\.dtype",
         "F.scaled_dot_product_attention got query, key and value of different dtypes: one comes from a part of the "
         "model in bfloat16/float16 (a decoder cast with .to(torch.bfloat16), autocast, DeepSpeed's bf16/fp16) and "
         "another from a float32 part (a frozen encoder's features used as keys and values, a cache or memory bank, a "
         "tensor the script makes), or autocast covered only some of the projections.",
         "Cast at the boundary between the parts: k, v = k.to(q.dtype), v.to(q.dtype) (memory.to(q.dtype) for an "
         "encoder's features), or give both parts one dtype (cast the encoder too, or run the whole forward under "
         "torch.autocast instead of casting one part). A restart fails the same way.", retry=False),
    # torch/amp/grad_scaler.py (torch/cuda/amp/grad_scaler.py before 2.3), GradScaler.update: "No inf checks were
    # recorded prior to update." -- update() with no step()/unscale_() since the last update. Read before signumerics'
    # gradscaler-no-grads, which keeps step()'s "for this optimizer" (no gradients found).
    _sig("gradscaler-update-without-step", r"No inf checks were recorded prior to update",
         "scaler.update() ran with no scaler.step(optimizer) (or unscale_) since the previous update: with gradient "
         "accumulation, update() is called after every micro-batch's backward while step() runs only every Nth, or a "
         "condition skipped step() and not update(). GradScaler adjusts its scale from the inf checks step() "
         "records, so an update() without one is refused.",
         "Call scaler.update() only right after scaler.step(optimizer), in the same block: scaler.scale(loss)."
         "backward() on every micro-batch, then at the accumulation boundary scaler.step(optimizer); scaler.update(); "
         "optimizer.zero_grad(). A restart fails the same way.", retry=False),
    # ATen's dispatch macros ("\"cdist\" not implemented for 'BFloat16'", "\"linalg_svd_cpu\" ...", "\"geqrf_cpu\"
    # ...") and linalg's low-precision check ("linalg.inv: Low precision dtypes not supported. Got BFloat16"), and
    # quantile's ("quantile() input tensor must be either float or double dtype"). Half's "not implemented" stays
    # sigtraining's half-on-cpu (float16 on the CPU).
    _sig("bf16-op-unsupported",
         r"\"[\w:]+\" not implemented for 'BFloat16'|: Low precision dtypes not supported\. Got (?:BFloat16|Half)\b|"
         r"quantile\(\) input tensor must be either float or double dtype",
         "An operation that has no bfloat16 (low-precision) kernel got a bfloat16 tensor: the model runs in bf16 "
         "(DeepSpeed's bf16, model.to(torch.bfloat16), torch.autocast) and the script's own code applies to its "
         "output or weights an operation torch computes only in float32/float64: linear algebra (svd, qr, eigh, inv, "
         "cholesky, matrix norms, orthogonal init), torch.cdist, quantile; most often a loss, a regularizer or a "
         "metric written for float32.",
         "Compute that part in float32: convert before the operation (torch.cdist(a.float(), b.float()), "
         "torch.linalg.svdvals(w.float()), torch.quantile(x.float(), q)); a loss computed from the model's bf16 output "
         "is better in float32 anyway (loss_fn(out.float(), target)). A restart fails the same way.", retry=False),
)
