"""Failure signatures of normalization layers, buffers and running statistics, from round 197 of issue 45 (live:
broken users' scripts run for real on torch 2.13 under DDP, CPU and gloo): SyncBatchNorm on CPU modules,
BatchNorm's batch of one sample in training mode, BatchNorm given its channels in the wrong dimension, GroupNorm's
groups that do not divide its channels (its two arguments swapped), LayerNorm's normalized_shape against another
trailing size, a leaf tensor that requires grad (a running statistic kept as an nn.Parameter) updated in place, and a
weights file whose only difference from the model is keys the model does not keep (a buffer now non-persistent).
Each pattern is the wording of torch's own check (torch/nn/modules/batchnorm.py, normalization.py, functional.py,
torch/nn/parallel/distributed.py, ATen's batch_norm and layer_norm, autograd's in-place check, Module.load_state_dict),
never one log's. sigrounds.py places this table just before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

NORM_SIGNATURES: tuple[Signature, ...] = (
    # torch/nn/parallel/distributed.py's _check_sync_bn... in DDP's constructor ("SyncBatchNorm layers only work with
    # GPU modules") and SyncBatchNorm.forward's own device check in its older and newer wordings.
    _sig("syncbn-cpu",
         r"SyncBatchNorm layers only work with GPU modules|SyncBatchNorm expected input tensor to be on GPU",
         "The model holds SyncBatchNorm layers (nn.SyncBatchNorm.convert_sync_batchnorm, or a recipe's sync_bn option) "
         "but runs on CPU: SyncBatchNorm computes its statistics across ranks with GPU kernels only (CUDA and a few "
         "other accelerators), and DistributedDataParallel or SyncBatchNorm refuses a CPU module.",
         "On CPU nodes (gloo) keep plain BatchNorm (leave out convert_sync_batchnorm, or turn the recipe's sync_bn "
         "off), or use GroupNorm/LayerNorm, which need no statistics across ranks; keep SyncBatchNorm for GPU runs "
         "(NCCL). A restart fails the same way.", retry=False),
    # torch/nn/functional.py's _verify_batch_size, called by batch_norm in training mode.
    _sig("batchnorm-single-sample", r"Expected more than 1 value per channel when training, got input size",
         "A BatchNorm layer in training mode got a batch holding one value per channel (a batch of one sample, or one "
         "sample of size 1 after pooling): it cannot compute a batch variance from one value. Most often the last "
         "batch of an epoch (a dataset not divisible by the batch size times the number of ranks, without "
         "drop_last), a per-rank batch size of 1, or evaluation run without model.eval().",
         "Drop the incomplete last batch (DataLoader(..., drop_last=True); DistributedSampler's own drop_last only "
         "evens the ranks), use a per-rank batch size above 1, call model.eval() before evaluating, or use a "
         "normalization that does not depend on the batch (GroupNorm, LayerNorm) for tiny batches. A restart fails "
         "the same way.", retry=False),
    # ATen's batch_norm checks of running_mean/running_var against the input's dimension 1 (Normalization.cpp).
    _sig("batchnorm-channels-mismatch", r"running_(?:mean|var) should contain \d+ elements not \d+",
         "A BatchNorm layer got an input whose dimension 1 (the channels for BatchNorm1d/2d/3d: (N, C), (N, C, L), "
         "(N, C, H, W)) is not the num_features it was built with; the message gives both. Most often BatchNorm1d "
         "applied to channels-last (batch, seq, hidden) activations, where dimension 1 is the sequence, or a layer "
         "built for another width.",
         "Give BatchNorm the channels in dimension 1 (x.transpose(1, 2) before and after it for (batch, seq, "
         "hidden)), use LayerNorm(hidden) for channels-last activations, or build the layer with the input's "
         "number of channels. A restart fails the same way.", retry=False),
    # torch/nn/modules/normalization.py GroupNorm.__init__ ("num_channels must be divisible by num_groups"; torch 2.x
    # adds the values: "num_channels (8) must be divisible by num_groups (64)").
    _sig("groupnorm-groups-not-dividing",
         r"num_channels (?:\(\d+\) )?must be divisible by num_groups",
         "nn.GroupNorm(num_groups, num_channels) was built with a number of groups that does not divide its number "
         "of channels (the message gives both): its arguments given in the other order (GroupNorm(channels, "
         "groups)), or a group count that does not fit this layer's width.",
         "Call nn.GroupNorm(num_groups, num_channels) in that order (e.g. GroupNorm(8, 64)), with a group count that "
         "divides every layer's channels (or computed per layer, e.g. min(32, channels)). A restart fails the same "
         "way.", retry=False),
    # ATen's layer_norm input check (layer_norm.cpp _check_layer_norm_inputs).
    _sig("layernorm-shape-mismatch",
         r"Given normalized_shape=\[[\d, ]*\], expected input with shape \[\*, [\d, ]*\], but got input of size",
         "A LayerNorm (or F.layer_norm) normalises the input's last dimensions and got an input whose trailing size is "
         "not its normalized_shape (the message gives both): most often LayerNorm(channels) applied to a channels-first "
         "(N, C, H, W) or (N, C, L) tensor, whose last dimension is the width or the length, or a layer built for "
         "another hidden size.",
         "Put the normalised dimension last (x.permute(0, 2, 3, 1) before and back after, as ConvNeXt does), or use a "
         "channels-first normalization (GroupNorm(1, C), or a LayerNorm written over dimension 1); otherwise build the "
         "LayerNorm with the input's trailing size. A restart fails the same way.", retry=False),
    # autograd's check of in-place operations on leaves (VariableTypeUtils.h check_inplace).
    _sig("leaf-inplace-requires-grad",
         r"a (?:view of a )?leaf Variable that requires grad (?:is being|has been) used in an in-place operation",
         "An in-place operation (mul_, add_, copy_, zero_, clamp_, +=, x[...] = ...) changed a leaf tensor that "
         "requires grad while autograd was recording: a parameter updated, clipped, re-initialised or copied by hand "
         "outside torch.no_grad() (an EMA or mean-teacher copy updated from the trained model: copy.deepcopy keeps "
         "requires_grad), or a running statistic (a mean, a count) kept as an nn.Parameter and updated in forward.",
         "Do such updates under torch.no_grad() (decorate an EMA update with @torch.no_grad()) and make a copy that "
         "is never trained not require grad (ema.requires_grad_(False); torch.optim.swa_utils.AveragedModel does "
         "both); keep statistics that are not trained in a buffer (self.register_buffer(\"running_mean\", "
         "torch.zeros(d))), which moves with .to() and is saved too, updated under torch.no_grad(). A restart fails "
         "the same way.", retry=False),
    # Module.load_state_dict's message with unexpected keys and no missing key (torch puts "Missing key(s)" first,
    # then "Unexpected key(s)", then each "size mismatch"): the file has more than the model keeps, nothing less.
    _sig("ckpt-unexpected-keys-only",
         r"Error\(s\) in loading state_dict for [\w.]+:\s*\n(?:[^\n]*?\]:)?\s*Unexpected key\(s\) in state_dict: "
         r"[^\n]*(?=\n|\Z)(?!\n[^\n]*size mismatch for)",
         "The weights file holds entries the model does not keep in its state_dict, and nothing the model needs is "
         "missing: tensors the model's code no longer saves (a buffer now registered with persistent=False, such as "
         "a position_ids or mask buffer; a removed layer or head), written by an earlier version of the model code or "
         "by a model with extra parts.",
         "If those entries are not needed, drop them before loading (for k in unexpected: sd.pop(k)) or load with "
         "model.load_state_dict(sd, strict=False) and check that the returned missing_keys is empty; if the model "
         "should have them, register the buffer as persistent (persistent=True) or add the part back. A restart fails "
         "the same way.", retry=False),
)
