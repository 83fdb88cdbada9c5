"""Failure signatures written from the libraries' own sources before a user's log showed them (issue 45): the
user-facing error messages that torch (autograd, torch.distributed, torch.load, torch.cuda), DeepSpeed (ZeRO's
gradient reduction, zero_to_fp32), transformers (TrainingArguments, the Trainer, the tokenizers, from_pretrained's
attention checks) and accelerate raise for a cause they name, and that users report most in public threads. Until
these, such a log was answered only with the exception's type ("rank N raised ValueError").

Each pattern is the library's own wording (older versions' where they differ); every one is deterministic: the
same code, data and checkpoint meet it again, so none lets a restart help. sigmessages.py places this table right
after the training stack's (sigtraining.py), before the devices' facts."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

LIBRARY_SIGNATURES: tuple[Signature, ...] = (
    # torch.distributed's _get_default_group (older: an AssertionError "is not initialized").
    _sig("pg-not-initialized", r"Default process group (?:has not been|is not) initialized",
         "torch.distributed was used (get_rank, barrier, a collective; or a library helper that calls them) before "
         "any process group existed: the script ran as a plain python process without a launcher, or called it "
         "before deepspeed.init_distributed() / init_process_group (before the Trainer's TrainingArguments or the "
         "Accelerator were created).",
         "Start it through a launcher (deepspeed, torchrun, accelerate launch, dscluster launch) and call "
         "deepspeed.init_distributed() (or torch.distributed.init_process_group) before any distributed call; guard "
         "code that may run in one process with torch.distributed.is_initialized().", retry=False),
    # Round 160: torch/distributed/distributed_c10d.py, init_process_group, when the default group already exists:
    # ValueError "trying to initialize the default process group twice!" (a RuntimeError in torch 1.x). DeepSpeed's
    # init_distributed, accelerate's PartialState and the Trainer check is_initialized() first, so it is the script's
    # own second call: a setup helper after its own init, init inside a loop or a retry, a notebook cell run again.
    # Not pg-not-initialized (above), nor DeepSpeed's INFO "Distributed backend already initialized" (no failure).
    _sig("pg-initialized-twice", r"trying to initialize the default process group twice",
         "torch.distributed.init_process_group was called in a process whose default process group already exists: "
         "the script initializes it and then calls something that initializes it again (a setup helper from "
         "another codebase, an init inside a loop, a retry or a function called twice, a notebook cell run again).",
         "Initialize once per process: remove the second call, or guard it with `if not "
         "torch.distributed.is_initialized():` (call torch.distributed.destroy_process_group() first where a new "
         "group is really meant). A restart fails the same way.", retry=False),
    # Round 160: the process groups' check of all_gather's output list against the group's size: gloo's
    # ProcessGroupGloo::allgather "invalid output tensor list at index I (expected length N, got M)"
    # (torch/csrc/distributed/c10d/ProcessGroupGloo.cpp; torch 2.13's libtorch_cpu); NCCL's (ProcessGroupNCCL.cpp,
    # flatten_for_scatter_gather, also reduce_scatter's input list) "Tensor list input to scatter/gather must match
    # number of collective participants" (torch 2.x adds "but got N inputs with world_size W and D devices."). Not
    # gloo's "requires input/output tensor lists to have the same length" (several devices' lists), nor its "invalid
    # tensor size/type at index" (a tensor of the list of another shape or dtype).
    _sig("all-gather-list-length", r"ProcessGroup\w{0,16}::allgather: invalid output tensor list at index \d+ \(expected "
         r"length \d+, got \d+\)|Tensor list input to scatter/gather must match number of collective participants",
         "A collective's tensor list does not hold one tensor per rank of its process group: all_gather's output "
         "list (or reduce_scatter's input list) was built for another count than the group's size, e.g. a "
         "hard-coded number, the GPUs of one node, a subgroup's size used for the whole world or the reverse.",
         "Build the list from the group it runs on: [torch.empty_like(t) for _ in "
         "range(torch.distributed.get_world_size(group))], or use all_gather_into_tensor with an output "
         "get_world_size(group) times as large. A restart fails the same way.", retry=False),
    # Round 160: dscluster's own hang detection (runs/supervising/hang.py, _mismatch) writes this on the launcher's
    # log when the ranks' progress shows two of them waiting in different operations at the same collective of one
    # group (the same sequence number): "rank A waits in OP1 and rank B in OP2, the same collective (#N of group G)
    # called differently: they can never meet". Only that form: not its stalled or quiet-rank forms.
    _sig("collective-mismatch", r"\bthe same collective \(#\d+ of group [^)\n]+\) called differently: they can never "
         r"meet",
         "The ranks called different collectives at the same point: dscluster saw one rank wait in one operation "
         "(e.g. all_reduce) while another waited in a different one (e.g. barrier) at the same collective of the "
         "same group. Code runs a collective on some ranks only (inside `if rank == 0:`, evaluation or logging on "
         "the main rank), or the ranks take different branches or numbers of steps.",
         "Make every rank run the same collectives in the same order: move the collective out of the rank-only "
         "branch (compute on every rank, print on one), give the ranks the same number of steps. A restart meets "
         "it again.", retry=False),
    # ProcessGroupNCCL's check of a collective's tensors; torch 2.x's words when the group has no CPU backend.
    _sig("collective-cpu-tensor", r"Tensors must be CUDA and dense|No backend type associated with device type cpu",
         # Review 157: the call may be a library's (unsloth#2584: Unsloth's free release, one GPU only, at import)
         "A collective (all_reduce, broadcast, all_gather, ...) was given a CPU tensor on a process group that only "
         "has the NCCL backend, which moves CUDA tensors only. The call may be a library's, not the script's: one "
         "made for a single GPU, run in every rank of a multi-GPU launch.",
         "Move the tensor to the rank's GPU before the collective (t.to(torch.cuda.current_device())), or run CPU "
         "tensors through a gloo group (torch.distributed.new_group(backend=\"gloo\"), or init_process_group("
         "backend=\"cpu:gloo,cuda:nccl\")). If the traceback's frames are a library's, check that it supports "
         "several GPUs (else train on one).", retry=False),
    # torch's lerp (aten/src/ATen/native/Lerp.cpp TORCH_META_FUNC(lerp_Tensor), older cuda/Lerp.cu): "expected dtype {self}
    # for `end` but got dtype {end}", met in Adam/AdamW's `exp_avg.lerp_(grad, 1 - beta1)`: the optimizer's state in one
    # dtype, the gradient in another. Round 57: transformers 4.46's Trainer under FSDP (huggingface/transformers#34702,
    # fixed by #34645). Only the `end` operand: lerp's `weight` check is another argument; markdown may eat the backticks.
    _sig("optimizer-state-dtype", r"expected dtype [\w:]+ for `?end`? but got dtype [\w:]+",
         "An optimizer update (Adam/AdamW's lerp_ of its exp_avg state toward the gradient) met its state and the "
         "gradient in two dtypes, float32 and bfloat16/float16: the parameters or their gradients changed precision "
         "after the optimizer state was made. A known regression of transformers 4.46's Trainer under FSDP (its "
         "gradient-accumulation changes, fixed by huggingface/transformers#34645); otherwise the model cast to half "
         "precision after the optimizer's first step, or optimizer state resumed into a model of another dtype.",
         "With the HF Trainer (or TRL) under FSDP, upgrade transformers to its latest release (the same on every "
         "node); in your own loop keep parameters, gradients and optimizer state in one dtype: cast the model before "
         "creating the optimizer and before loading its state, or let mixed precision (autocast, accelerate's "
         "mixed_precision, FSDP's MixedPrecision) keep float32 weights. A restart fails the same way.", retry=False),
    # Round 167: the user's own model, loss and data code (torch's ATen checks, called from the script). A Linear or
    # matmul whose inner sizes differ: aten/src/ATen/native/LinearAlgebra.cpp (addmm/mm's meta): "mat1 and mat2 shapes
    # cannot be multiplied (AxB and CxD)"; torch <= 1.7's TH: "size mismatch, m1: [A x B], m2: [C x D] at ...". Not a
    # weight of 0 or 1 rows (ZeRO-3's partitioned placeholder, bitsandbytes' packed 4-bit weight: another cause), nor
    # DTensor's sharding propagation failing on it (a tensor-parallel plan's layouts: sigparallel's tp-plan-layout-mismatch).
    _sig("linear-shape-mismatch", r"mat1 and mat2 shapes cannot be multiplied \(\d+x\d+ and (?![01]x)\d+x(?!0\))\d+\)"
         r"(?![^\n]*\n[^\n]{0,40}Sharding propagation failed)|"
         r"size mismatch, m1: \[\d+ x \d+\], m2: \[(?![01] x)\d+ x (?!0\])\d+\]",
         "A Linear layer (or a matrix product) got input whose feature size is not the layer's in_features: in the "
         "message the first shape is the input (rows x features), the second the layer's weight transposed "
         "(in_features x out_features), and their inner numbers must be equal. Most often the in_features of the "
         "Linear after a Flatten was computed for another image size or convolution output, the model was built for "
         "another input width or hidden size than the data has, or the input was not flattened or reshaped as the "
         "layer expects; or an output layer was tied to an embedding of another width (head.weight = embed.weight "
         "where the embedding's dim is not the hidden size): the second shape is then the embedding's (dim x vocab).",
         "Make in_features the size the input really has (the first shape's second number): print x.shape before the "
         "layer or compute it from one dummy forward, or use torch.nn.LazyLinear; check the data's width, the image "
         "size and the model's config against each other; a head tied to the embedding needs the embedding's width: "
         "project the hidden states down to it before the head (or do not tie). A restart fails the same way.",
         retry=False),
    # Class-index targets out of range: aten/src/ATen/native/LossNLL.cpp (nll_loss's and nll_loss2d's
    # TORCH_CHECK_INDEX, an IndexError): "Target 10 is out of bounds."; torch 1.x's THNN ClassNLLCriterion: "Assertion
    # `cur_target >= 0 && cur_target < n_classes' failed." (On a GPU a device-side assert: device-assert.)
    _sig("loss-target-out-of-bounds", r"\bTarget -?\d+ is out of bounds\.|"
         r"Assertion [`'](?:cur_)?target >= 0 && (?:cur_)?target < n_classes' failed",
         "A classification loss (cross_entropy, nll_loss) got a class label outside 0..C-1 for a model with C outputs: "
         "labels numbered from 1 instead of 0, more classes in the data than the head has outputs (num_labels, "
         "out_features), or a negative label meant as 'no label' other than the loss's ignore_index; in contrastive "
         "training, labels offset by rank (arange(B) + rank * B) against a similarity matrix whose columns are only "
         "the local batch (the other side never gathered); in multi-task training, one task's labels given to another "
         "task's head (the batches of two loaders mixed up).",
         "Map the labels to 0..C-1 (labels - 1 where they start at 1), give the head as many outputs as the data has "
         "classes (num_labels=C), and mark positions to skip with ignore_index (-100 by default); pair each task's head "
         "with its own task's labels; check the labels' "
         "min and max before training; with in-batch negatives offset the labels by rank only when the "
         "columns are every rank's gathered embeddings (else arange(B)). A restart fails the same way.", retry=False),
    # Class-index targets of a float (or int32) dtype: LossNLL.cpp's check in torch 2.x's newest wording ("expected
    # target dtype to be Long or Byte, but got Float"); before it nll_loss's "expected scalar type Long but found Float"
    # (read only under a cross_entropy/nll_loss frame: elsewhere it is dtype-mismatch), torch 1.0-1.4's "Expected object
    # of scalar type Long but got scalar type Float for argument #2 'target'", and CUDA's kernel dispatch
    # ("nll_loss_forward_reduce_cuda_kernel_2d_index" not implemented for 'Float').
    _sig("loss-target-dtype", r"expected target dtype to be Long(?: or Byte)?, but got \w+|"
         r"Expected object of scalar type Long but got scalar type \w+ for argument #2 'target'|"
         r"\"nll_loss\w{0,40}\" not implemented for '(?:Float|Double|Half|BFloat16|Int)'|"
         r"\bin (?:cross_entropy|nll_loss)\n(?:[^\n]*\n){0,6}?[^\n]*expected scalar type Long but found \w+",
         "A classification loss (cross_entropy, nll_loss) got class-index targets of a floating-point (or int32) "
         "dtype; class indices must be int64 (torch.long). The labels were read as floats: a numpy or pandas column, "
         "a label column sliced from a float feature table, torch.Tensor(labels) or torch.FloatTensor.",
         "Convert the labels to int64 where the batch is made (y = y.long(), torch.tensor(labels, dtype=torch.long) "
         "in the dataset or collate_fn); for soft labels pass float probabilities of the logits' shape [N, C] "
         "instead. A restart fails the same way.", retry=False),
    # The DataLoader's default collate stacking samples of different shapes: torch/utils/data/_utils/collate.py
    # (collate_tensor_fn, before torch 1.13 default_collate: `return torch.stack(batch, 0, out=out)`), ATen's stack
    # check "stack expects each tensor to be equal size, but got [A] at entry 0 and [B] at entry 1"; torch <= 1.4's TH
    # "Sizes of tensors must match except in dimension 0". Read only under collate's frame: a torch.stack of the
    # script's own is another matter.
    _sig("collate-unequal-size", r"\bin (?:collate_tensor_fn|default_collate)\n(?:[^\n]*\n){0,4}?[^\n]*"
         r"(?:stack expects each tensor to be equal size|Sizes of tensors must match except in dimension 0)",
         "The DataLoader's default collate stacks a batch's samples into one tensor, and the samples have different "
         "shapes: sequences of different lengths (token ids, audio, a variable number of boxes) not padded to one, "
         "or images of different sizes not resized.",
         "Pad in a collate_fn (torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=PAD), or "
         "transformers' DataCollatorWithPadding for tokenized text), or pad/truncate every sample to one length in "
         "the dataset (tokenizer(..., padding=\"max_length\", truncation=True)); resize images to one size in the "
         "transform. A restart fails the same way.", retry=False),
    # torch's dtype checks (matmul/addmm, conv's input vs weight, a loss's backward), in their older wordings too; round
    # 189: the CPU addmm/mm check behind `@` (ATen's "expected m1 and m2 to have the same dtype, but got: A != B").
    # Round 214: a float32 layer kept in a plain list (no submodule), which DeepSpeed's bf16 cast did not reach.
    _sig("dtype-mismatch", r"expected scalar type \w+ but found \w+|Expected object of scalar type \w+ but got scalar "
         r"type \w+|Found dtype \w+ but expected \w+|expected (?:mat1 and mat2|m1 and m2) to have the same dtype|"
         r"mat1 and mat2 must have the same dtype|Input type \((?:torch\.)?(?:cuda\.)?(\w+?)Tensor\) and weight type "
         r"\((?:torch\.)?(?:cuda\.)?(?!\1Tensor)\w+Tensor\) should be the same|"
         r"Input type \(c10::(?:Half|BFloat16)\) and bias type \(float\)|Input type \(float\) and bias type \(c10::",
         "One operation got tensors of two precisions (float16/bfloat16 and float32): the model runs in half "
         "precision (DeepSpeed's fp16/bf16 casts the model) while an input, a buffer or a tensor the script makes "
         "stays float32, or the reverse; or parameters created after the model was cast (LoRA or other adapters, a "
         "new layer, added after deepspeed.initialize or model.half()/.to(torch.bfloat16)) stay float32; or layers "
         "kept in a plain Python list or dict (self.blocks = [...]) instead of nn.ModuleList / nn.ModuleDict: they are "
         "no submodules, so the engine's (or model.half()'s) cast never reaches them, nor the optimizer.",
         "Cast the inputs to the model's dtype (batch = batch.to(engine.module.dtype) for floating-point inputs), make "
         "new tensors with dtype= of the tensor they meet, or run that part under torch.autocast; with DeepSpeed's "
         "fp16/bf16 the model is half, so its inputs must be too; add adapters and new layers before "
         "deepspeed.initialize (so that the engine casts and trains them), or create them in the model's dtype; keep "
         "sub-layers in nn.ModuleList / nn.ModuleDict (a plain list or dict of layers is neither cast, moved, saved "
         "nor trained).",
         retry=False),
    # torch.load's restricted unpickler (weights_only=True, the default since torch 2.6).
    _sig("ckpt-weights-only", r"WeightsUnpickler error: Unsupported (?:global|class)|"
         r"Unsupported global: GLOBAL [\w.]+ was not an allowed global",
         "torch 2.6 and later load checkpoints with weights_only=True by default, and this checkpoint holds Python "
         "objects besides tensors (DeepSpeed's optimizer states: its LossScaler, ZeroStageEnum; numpy values in the "
         "Trainer's rng_state.pth; the script's own classes, a dataclass or argparse.Namespace saved in its own "
         "checkpoint dict) that the restricted loader refuses: the DeepSpeed or transformers release that loads it "
         "predates the change, or the script's own torch.load does not allow them.",
         "Upgrade deepspeed and transformers (newer releases load their own checkpoints with the objects they need "
         "allowed), or allow the global the message names (torch.serialization.add_safe_globals([...]) before "
         "resuming); in your own resume code, torch.load(path, weights_only=False) for a checkpoint you trust, or "
         "save plain values (dataclasses.asdict(state), vars(args)); or, for a checkpoint you trust, "
         "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 for every rank; or pin torch<2.6.", retry=False),
    # autograd's engine: the loss backward() was called on reaches no tensor that requires grad.
    _sig("loss-no-grad", r"element 0 of tensors does not require grad and does not have a grad_fn",
         "The loss has no path back to any parameter that requires a gradient: everything it was computed from is "
         "frozen or detached. Most often adapters (LoRA/PEFT) with gradient checkpointing on frozen input embeddings "
         "(reentrant checkpointing drops the graph when a block's inputs need no gradient); or every parameter "
         "frozen, or the loss computed under torch.no_grad() or from .detach()/.item() values (or from an output a "
         "custom autograd.Function marked with ctx.mark_non_differentiable), or, in contrastive training across "
         "ranks, a loss built only from embeddings gathered with torch.distributed.all_gather, whose outputs carry "
         "no gradient.",
         "With gradient checkpointing and adapters call model.enable_input_require_grads() (or use non-reentrant "
         "checkpointing: gradient_checkpointing_kwargs={\"use_reentrant\": False}); check that some parameters have "
         "requires_grad=True (model.print_trainable_parameters()); compute the loss outside no_grad from undetached "
         "outputs. For in-batch negatives from every rank gather with "
         "torch.distributed.nn.functional.all_gather (it keeps the gradient), or put the local tensor back at its "
         "rank's index of dist.all_gather's list.", retry=False),
    # autograd's version counter check; DDP's _sync_buffers copies the broadcast buffers in place before every forward
    # (torch/nn/parallel/distributed.py, broadcast_buffers=True; pytorch/pytorch#70260).
    _sig("autograd-inplace", r"one of the variables needed for gradient computation has been modified by an "
         r"inplace operation",
         "An in-place operation (x += ..., x[...] = ..., an inplace=True activation, a buffer updated in the forward) "
         "changed a tensor that autograd had saved for the backward pass; under DistributedDataParallel also DDP's own "
         "copy of rank 0's buffers (BatchNorm's running statistics) into the module before each forward, when the "
         "module runs twice before one backward.",
         "Replace that in-place operation with one that makes a new tensor (x = x + y, inplace=False); "
         "torch.autograd.set_detect_anomaly(True) names the operation. Under DDP a buffer broadcast between two "
         "forward passes does the same: DistributedDataParallel(broadcast_buffers=False).", retry=False),
    _sig("backward-twice", r"Trying to backward through the graph a second time",
         "backward() ran a second time through a graph whose saved tensors the first backward had freed: a tensor "
         "from an earlier step (a hidden state, a cached output, a running loss) reused without detach, or two losses "
         "that share part of a graph each given their own backward.",
         "Detach what is carried from one step to the next (h = h.detach()), add the losses and call backward once, "
         "or pass retain_graph=True to the first backward where the graph must be reused.", retry=False),
    # transformers' tokenizer pad() without a pad token (Llama, Mistral, GPT-2 ship none).
    _sig("pad-token-missing", r"Asking to pad but the tokenizer does not have a padding token",
         "The tokenizer was asked to pad a batch but has no padding token: many causal language models' tokenizers "
         "(Llama, Mistral, GPT-2, Qwen base) ship without one.",
         "Set one before tokenizing or training: tokenizer.pad_token = tokenizer.eos_token (or add a [PAD] token "
         "with tokenizer.add_special_tokens and model.resize_token_embeddings(len(tokenizer))).", retry=False),
    # transformers' BatchEncoding.convert_to_tensors (the DataCollator's batch of unequal lengths).
    _sig("batch-unpadded", r"Unable to create tensor, you should probably activate truncation and/or padding",
         "A batch's examples have different lengths and were not padded to one: the collator does not pad (the "
         "default collator, or one that pads input_ids but not labels), or columns the model does not take (text, "
         "lists kept by remove_unused_columns=False) reached it.",
         "Pad in the collator (DataCollatorWithPadding, DataCollatorForSeq2Seq for labels, "
         "DataCollatorForLanguageModeling) or tokenize with padding and truncation to max_length; drop the columns "
         "the model does not take.", retry=False),
    # torch.optim's Optimizer.__init__.
    _sig("optimizer-empty-params", r"optimizer got an empty parameter list",
         "The optimizer was given no parameters: every parameter is frozen (requires_grad=False: adapters not "
         "added, or a name filter that matched nothing), the parameter generator was already used up "
         "(model.parameters() iterated before the optimizer got it), or the model was quantized before training "
         "(torch.ao.quantization's quantize_dynamic or convert replace Linear / Conv layers with int8 modules whose "
         "packed weights are not parameters).",
         "Make the parameters to train trainable before building the optimizer (check sum(p.numel() for p in "
         "model.parameters() if p.requires_grad)), and pass a list (list(model.parameters())) where it is used twice; "
         "train a quantized model in float or with quantization-aware training (prepare_qat's fake-quant) and "
         "quantize (quantize_dynamic / convert) only after training.",
         retry=False),
    # DeepSpeed ZeRO-1/2's gradient reduction (stage_1_and_2.py).
    _sig("zero-grad-twice", r"has already been reduced\.?\s*Gradient computed twice for this partition",
         "DeepSpeed ZeRO-2 reduces each gradient as soon as backward computes it, and one parameter's gradient was "
         "computed twice in one backward: reentrant gradient checkpointing re-running a block, a module or weight "
         "used twice in the forward (shared or tied weights, one encoder run on two inputs before backward), or two "
         "backward calls per step.",
         "Use non-reentrant gradient checkpointing (gradient_checkpointing_kwargs={\"use_reentrant\": False}) or turn "
         "it off; run a shared module once on the concatenated inputs; one backward per step; or ZeRO stage 1, "
         "which reduces after backward.", retry=False),
    # torch's copy from a meta tensor (Module.to, load_state_dict, ZeRO-3's partitioning of such a parameter).
    _sig("meta-tensor", r"Cannot copy out of meta tensor",
         # Review 157: a 4-bit (QLoRA) model under ZeRO-3 too (Qwen-VL-Series-Finetune#7, the repository's answer).
         "A parameter still on the meta device (created without data: low_cpu_mem_usage, a device_map, "
         "init_empty_weights, a model's own empty_init) was copied (moved to a GPU, partitioned by ZeRO-3, loaded into) "
         "before its weights were loaded. Or a quantized model (bitsandbytes 4-bit, QLoRA) was given to ZeRO-3, which "
         "the training code does not support: its quantized weights stay on the meta device.",
         "Load the model without device_map/low_cpu_mem_usage when DeepSpeed places it (with ZeRO-3 create the "
         "TrainingArguments before from_pretrained so zero.Init builds it; remote-code models: empty_init=False); or "
         "model.to_empty(device=...) and load the weights before use. For QLoRA use ZeRO-2 unless the training code "
         "says it supports ZeRO-3 with 4-bit models.", retry=False),
    # The HF Trainer's compute_loss without labels.
    _sig("trainer-no-loss", r"The model did not return a loss from the inputs",
         "The Trainer found no loss in the model's output: the batches carry no labels (the dataset has no "
         "`labels` column, remove_unused_columns dropped it as the model's forward does not name it, or label_names "
         "names another key).",
         "Give the batches labels (a `labels` column, or a collator that makes them such as "
         "DataCollatorForLanguageModeling(mlm=False)), set label_names to the key the model takes, or override "
         "compute_loss.", retry=False),
    # torch's F.embedding given a weight that is no matrix: ZeRO-3's partitioned placeholder.
    _sig("zero3-param-partitioned", r"'weight' must be 2-D",
         "An embedding's weight was not a matrix when the forward ran. Under DeepSpeed ZeRO-3 each rank holds only "
         "an empty placeholder of a partitioned parameter, gathered by the engine's forward: a second model (a "
         "reference, teacher or reward model) not wrapped by deepspeed.initialize, a forward or generate outside the "
         "engine, or weights touched outside zero.GatheredParameters.",
         "Run every model that computes under ZeRO-3 through a DeepSpeed engine (deepspeed.initialize it too, or "
         "load it outside zero.Init: before the TrainingArguments/HfDeepSpeedConfig exist); gather with "
         "deepspeed.zero.GatheredParameters for code outside the engine; or use ZeRO-2.", retry=False),
    # transformers' TrainingArguments.__post_init__ (both checks of load_best_model_at_end).
    _sig("best-model-strategy", r"--load_best_model_at_end requires the (?:save and eval strategy to match|saving "
         r"steps to be a (?:round )?multiple of the evaluation steps)",
         "TrainingArguments refused load_best_model_at_end: the best checkpoint can be kept only if one is saved at "
         "every evaluation, so the save strategy must equal the evaluation strategy (which defaults to \"no\") and, "
         "with \"steps\", save_steps must be a multiple of eval_steps.",
         "Set --eval_strategy (evaluation_strategy in older transformers) to the save strategy, with save_steps a "
         "multiple of eval_steps, or drop --load_best_model_at_end.", retry=False),
    # transformers' from_pretrained check for flash_attention_2, and flash-attn's own.
    _sig("flash-attn-dtype", r"Flash Attention (?:2(?:\.0)?|\d) only supports torch\.float16 and torch\.bfloat16|"
         r"FlashAttention only supports? fp16 and bf16 data type",
         "FlashAttention computes only in float16 or bfloat16, and the model (or the attention's inputs) is "
         "float32: loaded without torch_dtype, or run without fp16/bf16.",
         "Load the model with torch_dtype=torch.bfloat16 (float16 on GPUs without bf16) and train with bf16/fp16 "
         "on, or use attn_implementation=\"sdpa\" to stay in float32.", retry=False),
    # Round 126: flash-attn's varlen kernels check the packed batch's cumulative sequence lengths with CHECK_SHAPE
    # (csrc/flash_attn/flash_api.cpp mha_varlen_fwd/mha_varlen_bwd, hopper/flash_api.cpp, and torch's own copy in
    # aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp: `#x " must have shape (" #__VA_ARGS__ ")"`),
    # cu_seqlens_q/k of batch_size + 1 entries. Not its dtype or layout checks ("cu_seqlens_q must have dtype int32",
    # "cu_seqlens_k must be contiguous") nor the shapes of q/k/v/out.
    _sig("flash-varlen-cu-seqlens", r"cu_seqlens_[qk] must have shape \(batch_size \+ 1\)",
         "flash-attn's variable-length kernel (flash_attn_varlen_func, which transformers' flash_attention_2 uses for "
         "packed, padding-free and padded batches) got cumulative sequence lengths (cu_seqlens_q/k) that do not have "
         "one entry more than the batch has sequences: the code before it built them wrong. From position_ids: "
         "transformers' preparation did so after its change #39474 (reverted by #39653), and so does a collator whose "
         "position_ids do not restart at 0 for each packed sequence. From the attention mask: the unpadding expects a "
         "2D (batch, seq_len) padding mask, and a 4D mask (batch, 1, q_len, k_len) that the model's own code passes "
         "(Qwen2-Audio's audio encoder, a custom 4D mask) or a transformers release whose flash-attention path mishandled "
         "it (4.35) makes cu_seqlens of another shape.",
         "Use a transformers release with the fixed preparation (or the one the trainer pins) and give packed batches "
         "position_ids that restart at 0 for each sequence, without an attention mask (DataCollatorWithFlattening); "
         "where the model builds a 4D mask, load it with attn_implementation=\"sdpa\" (or give flash_attention_2 a 2D "
         "padding mask). A restart fails the same way.", retry=False),
    # DeepSpeed's zero_to_fp32.py and ds_to_universal.py given a directory they do not expect; its checkpoint reader
    # (deepspeed/checkpoint: ZeROCheckpoint, under DeepSpeedCheckpoint and Megatron-DeepSpeed's converters) finding no
    # zero_pp_rank_* optimizer-state file in the global_stepN directory it was given.
    _sig("zero-ckpt-dir", r"Unable to find 'latest' file at|can't find model states file at|"
         r"can't find \S*(?:optim|model)_states\S* files in directory|can't find ZeRO Stage 3 model state files|"
         r"No ZeRO files found in",
         "DeepSpeed's checkpoint converter or reader (zero_to_fp32.py, ds_to_universal, the DeepSpeedCheckpoint reader "
         "of Megatron-DeepSpeed's converters) was pointed at a directory that is not the DeepSpeed checkpoint it "
         "expects: without a tag it needs the directory holding `latest` (the name of the global_stepN to read), and "
         "that tag directory must hold the *_model_states.pt and ZeRO's *_optim_states.pt files (zero_pp_rank_*).",
         "Give it the checkpoint directory that holds `latest` and global_stepN/ (the Trainer's checkpoint-N), or "
         "name the tag (-t global_stepN); a reader given global_stepN/ itself needs the zero_pp_rank_* files there; a "
         "checkpoint saved without optimizer states (save_only_model, a consolidated model) is no DeepSpeed "
         "checkpoint: load its weights directly.", retry=False),
    # peft's inject_adapter check (LoraConfig.target_modules naming no module of this model).
    _sig("lora-target-modules", r"not found in the base model\. Please check the target modules",
         "The adapter's target_modules (LoraConfig) name modules this model does not have: module names differ from "
         "one architecture to the next (q_proj/v_proj in Llama, c_attn/c_proj in GPT-2, query_key_value in "
         "Falcon/BLOOM).",
         "Set target_modules to names the model has (print(model) or [n for n, _ in model.named_modules()] lists "
         "them), or target_modules=\"all-linear\" in recent peft.", retry=False),
    # torch.serialization's location restore: CUDA tensors read where no GPU is visible.
    _sig("ckpt-cuda-on-cpu", r"Attempting to deserialize object on (?:a )?CUDA device",
         "A checkpoint saved from GPU tensors was loaded in a process that sees no GPU (or fewer GPUs than the "
         "device it names): a CPU-only torch or node, a container without GPU access, or CUDA_VISIBLE_DEVICES "
         "hiding them.",
         "Load with torch.load(..., map_location=\"cpu\") (or the rank's own device) where that is intended; "
         "otherwise give the process its GPU (a CUDA build of torch, --gpus all for containers, "
         "CUDA_VISIBLE_DEVICES).", retry=False),
    # torch's CPU embedding/index_select bound check (on a GPU the same index is a device-side assert).
    _sig("embedding-index", r"IndexError: index out of range in self",
         "An embedding lookup (or index_select) got an index at least as large as its table: a token id >= the "
         "vocabulary size (tokens added to the tokenizer without resizing the model's embeddings, another model's "
         "tokenizer), a position beyond max_position_embeddings (sequences longer than the model takes), or a "
         "negative id such as -100 left in input_ids; or ids numbered from 1 (task, category, speaker or user ids) "
         "looked up in a table of as many rows (nn.Embedding(num_ids, dim)).",
         "After adding tokens call model.resize_token_embeddings(len(tokenizer)); use the model's own tokenizer; "
         "truncate sequences to the model's maximum length; keep -100 in labels only; number other ids from 0 (or "
         "give their table max_id + 1 rows).", retry=False),
    # transformers' Trainer.compute_loss (trainer.py: `outputs = model(**inputs)`) calling a forward that lacks one of
    # its required arguments: the batch had no key of that name (the dataset's own key is another, or
    # remove_unused_columns dropped it: RemoveColumnsCollator / _remove_unused_columns keep only the keys the forward
    # names). Python's own words, 3.10+ qualified (`Model.forward() missing 1 required positional argument: 'x'`),
    # older bare (`forward() missing 2 required positional arguments`). Not the script's own call of a forward.
    _sig("trainer-columns-removed", r"in compute_loss\n[^\n]*outputs = model\(\*\*inputs\)\n(?:[^\n]*\n){0,40}?[^\n]*"
         r"TypeError: [\w.]*forward\(\) missing \d+ required (?:positional|keyword-only) arguments?",
         "The Trainer called the model's forward with the batch's keys as arguments, and the batch lacked one the "
         "forward requires: the dataset (or the collator) names that input otherwise, or remove_unused_columns (on by "
         "default) dropped the keys the forward's signature does not name, as happens with a custom nn.Module whose "
         "forward takes other names, **kwargs or one dict.",
         "Make the dataset's keys the forward's argument names (input_ids, labels, ...), or set "
         "remove_unused_columns=False in TrainingArguments (then every key reaches the forward), or override "
         "compute_loss to call the model your way.", retry=False),
    # transformers' PreTrainedModel.gradient_checkpointing_enable (4.x: "{cls} does not support gradient
    # checkpointing.") and 5.x's _activation_checkpointing_enable ("... does not support activation checkpointing."):
    # the class does not set supports_gradient_checkpointing (a user's own PreTrainedModel, some remote-code models).
    _sig("gradient-checkpointing-unsupported", r"ValueError: \w+ does not support (?:gradient|activation) checkpointing\.",
         "gradient_checkpointing was turned on (TrainingArguments(gradient_checkpointing=True) or "
         "model.gradient_checkpointing_enable()) for a transformers model class that does not declare "
         "supports_gradient_checkpointing: a model class of the user's own, or a remote-code model written without it.",
         "Turn gradient_checkpointing off for this model; or, in a class of your own whose blocks can be recomputed, "
         "set supports_gradient_checkpointing = True and wrap the blocks with torch.utils.checkpoint (or use "
         "torch.utils.checkpoint in forward yourself). A restart fails the same way.", retry=False),
    # transformers' Trainer.train with resume_from_checkpoint=True (trainer.py: "No valid checkpoint found in output
    # directory ({output_dir})" when get_last_checkpoint finds no checkpoint-N folder); a rank that lists the
    # output_dir before any rank made it fails inside get_last_checkpoint's os.listdir (trainer_utils.py).
    _sig("resume-no-checkpoint", r"No valid checkpoint found in output directory|in get_last_checkpoint\n"
         r"(?:[^\n]*\n){0,3}?[^\n]*FileNotFoundError: \[Errno 2\]",
         "trainer.train(resume_from_checkpoint=True) found no checkpoint-N folder in output_dir: a first launch into "
         "a fresh output_dir, another output_dir than the earlier run's, or no checkpoint saved yet (save_strategy "
         "\"no\", or the run stopped before its first save_steps).",
         "Resume only when a checkpoint exists: pass resume_from_checkpoint=True only if "
         "transformers.trainer_utils.get_last_checkpoint(output_dir) is not None (or a checkpoint's path), and "
         "point output_dir at the earlier run's. A restart fails the same way until a checkpoint is saved.",
         retry=False),
)
