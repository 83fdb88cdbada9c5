"""Failure signatures of customising the Hugging Face Trainer, from round 198 of issue 45 (live: broken users' scripts
run for real on transformers 5.23, torch 2.13, CPU, 2 processes): a compute_metrics that returns no dict, a
TrainerCallback that returns something other than the TrainerControl or whose hook takes no **kwargs, a data collator
whose batch is no mapping, prediction_step / compute_loss / training_step / create_optimizer overrides returning the
wrong thing, and optimizers= given no (optimizer, scheduler) pair. Each pattern is Python's or torch's own words at the
Trainer's own line that consumes the value (transformers/trainer.py's evaluation_loop, _run_epoch, training_step,
compute_loss, create_scheduler and __init__, trainer_callback.py's CallbackHandler.call_event), never one log's. These
lines and names are the Trainer's since transformers 4.x. sigrounds.py places this table just before the exception
messages' (sigmessages.py). Each is a bug in the script: none lets a restart help."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature, then
from dscluster.sigtypes import sig as _sig

# TrainerCallback's hooks (trainer_callback.py 5.23) and the keywords CallbackHandler.call_event passes every one of
# them besides args, state, control (model, processing_class, optimizer, lr_scheduler, the dataloaders; 4.x's
# tokenizer) or an event's own (metrics, logs).
_HOOKS = (r"on_(?:init_end|train_begin|train_end|epoch_begin|epoch_end|step_begin|pre_optimizer_step|optimizer_step|"
          r"substep_end|step_end|evaluate|predict|save|log|prediction_step|push_begin)")
_HOOK_KWARGS = r"model|processing_class|tokenizer|optimizer|lr_scheduler|train_dataloader|eval_dataloader|metrics|logs"

HFTRAINER_SIGNATURES: tuple[Signature, ...] = (
    # evaluation_loop: `metrics = self.compute_metrics(EvalPrediction(...))`, then `metrics[f"{metric_key_prefix}_loss"]
    # = ...` and `for key in list(metrics.keys())`: a float, None or tuple from compute_metrics fails at either.
    _sig("hf-metrics-not-dict",
         r", in evaluation_loop\n[^\n]*\bmetrics\b[^\n]*\n" + CARET_LINE + r"[^\n]*?(?P<ev>TypeError: '\w+' object does "
         r"not support item assignment|AttributeError: '\w+' object has no attribute 'keys')",
         "compute_metrics returned something other than a dict (a number, None, a tuple): the Trainer's "
         "evaluation_loop adds the eval loss to what compute_metrics returns and reads its keys, so it must be a dict "
         "of metric names to values.",
         "Return a dict from compute_metrics: return {\"perplexity\": math.exp(nll)} (or {\"accuracy\": acc, \"f1\": "
         "f1}); the Trainer prefixes the names with eval_. A restart fails the same way.", retry=False),
    # CallbackHandler.call_event: `result = getattr(callback, event)(...); if result is not None: control = result`,
    # then the Trainer reads control.should_log / should_evaluate / should_save / should_training_stop /
    # should_epoch_stop (TrainerControl's fields) of whatever a hook returned.
    _sig("hf-callback-return-not-control",
         r"(?P<ev>AttributeError: '\w+' object has no attribute "
         r"'should_(?:log|evaluate|save|training_stop|epoch_stop)')",
         "A TrainerCallback hook returned something other than the TrainerControl (a bool, a dict, a string): the "
         "Trainer takes whatever a hook returns, when it is not None, as its new control object, and then reads "
         "control.should_log, should_save, should_training_stop... of it.",
         "In the hook, set the flag on the control it was given and return that control (or nothing): "
         "control.should_training_stop = True; return control. A restart fails the same way.", retry=False),
    # CallbackHandler.call_event calls `getattr(callback, event)(args, state, control, model=..., processing_class=...,
    # optimizer=..., lr_scheduler=..., train_dataloader=..., eval_dataloader=..., **kwargs)`: a hook written without
    # **kwargs refuses the first keyword; one without args/state/control gets too many positional arguments (4 with
    # self: Lightning's hooks of the same names are given 3, trainer and pl_module).
    _sig("hf-callback-hook-signature",
         r"(?P<ev>TypeError: (?:\w+\.)?" + _HOOKS + r"\(\) (?:got an unexpected keyword argument '(?:" + _HOOK_KWARGS +
         r")'|takes [1-3] positional arguments? but 4 were given))",
         "A TrainerCallback hook is defined with a signature the Trainer does not call it with: the Trainer's "
         "CallbackHandler calls every hook as hook(args, state, control, model=..., processing_class=..., "
         "optimizer=..., lr_scheduler=..., train_dataloader=..., eval_dataloader=..., plus the event's own such as "
         "logs= or metrics=), so a hook without **kwargs (or without args, state, control) refuses the call.",
         "Define each hook as def on_epoch_begin(self, args, state, control, **kwargs) (take the keywords you use, "
         "e.g. logs=None or model=None, then **kwargs). A restart fails the same way.", retry=False),
    # Trainer.compute_loss: `inputs = {**inputs, **kwargs}` (a model that takes loss kwargs) or `model(**inputs)`:
    # a collator (or a dataset without one) that yields a tuple or list, as for a plain DataLoader loop.
    _sig("hf-batch-not-mapping",
         r", in compute_loss\n(?:[^\n]*\n){0,4}?[^\n]*?(?P<ev>TypeError: (?:'(?:tuple|list)' object is not a "
         r"mapping|[^\n]{0,80}argument after \*\* must be a mapping, not (?:tuple|list)))",
         "The batches the Trainer trains on are tuples or lists, not dicts: the data collator (or the dataset, with "
         "the default collator) returns (input_ids, labels) as for a plain DataLoader loop, and the Trainer calls "
         "model(**inputs), which needs a mapping of the model's argument names to tensors.",
         "Return a dict from the collator: return {\"input_ids\": input_ids, \"labels\": labels} (the keys the "
         "model's forward takes; labels for the loss). A restart fails the same way.", retry=False),
    # evaluation_loop: `losses, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ...)`: an
    # override returning one tensor (iterating a 0-d tensor fails), one of another length, or None; the error at that
    # line (or in torch's Tensor.__iter__), never one raised inside the override.
    _sig("hf-prediction-step-return",
         then(r"= self\.prediction_step\(", r"\n", r"[^\n]") + CARET_LINE + r"(?:[^\n]*_tensor\.py\"?, line \d+, in __iter__\n[^\n]*\n)?"
         r"[^\n]*?(?P<ev>TypeError: iteration over a 0-d tensor|"
         r"ValueError: (?:too many|not enough) values to unpack[^\n]{0,40}|TypeError: cannot unpack non-iterable "
         r"[^\n]{0,40})",
         "A Trainer subclass overrides prediction_step and returns something other than the triple (loss, logits, "
         "labels) that the Trainer's evaluation_loop unpacks (only the loss, a pair, None).",
         "Return all three, None for what is not computed: return (loss, None, None) when only the loss is wanted "
         "(or when prediction_loss_only), else (loss, logits, labels). A restart fails the same way.", retry=False),
    # _prepare_for_training -> create_scheduler: `optimizer = self.optimizer`, then get_scheduler(...) builds the
    # schedule on it: a create_optimizer override that returns its optimizer without assigning self.optimizer leaves it
    # None, and the scheduler's constructor reads None.param_groups.
    _sig("hf-create-optimizer-unset",
         r", in create_scheduler\n(?:[^\n]*\n){0,16}?[^\n]*?"
         r"(?P<ev>AttributeError: 'NoneType' object has no attribute 'param_groups')",
         "The Trainer has no optimizer when it builds the learning-rate scheduler: a Trainer subclass's "
         "create_optimizer override creates an optimizer and returns it without storing it in self.optimizer, which "
         "is where the Trainer (create_scheduler, the training loop) reads it.",
         "Assign it in the override: self.optimizer = torch.optim.SGD(...); return self.optimizer (only when "
         "self.optimizer is None, as the Trainer's own does), or pass it as Trainer(optimizers=(optimizer, None)). A "
         "restart fails the same way.", retry=False),
    # Trainer.__init__: `self.optimizer, self.lr_scheduler = optimizers`: an optimizer alone, or a 1-tuple / 3-tuple.
    _sig("hf-optimizers-not-pair",
         r"self\.optimizer, self\.lr_scheduler = optimizers\n" + CARET_LINE + r"[^\n]*?(?P<ev>TypeError: cannot unpack "
         r"non-iterable \w+ object|ValueError: (?:not enough|too many) values to unpack[^\n]{0,40})",
         "The Trainer's optimizers= argument was not a pair: it takes a tuple (optimizer, lr_scheduler) and was given "
         "the optimizer alone (or a tuple of another length).",
         "Pass the pair: Trainer(..., optimizers=(optimizer, None)) to keep the Trainer's default schedule, or "
         "(optimizer, scheduler). A restart fails the same way.", retry=False),
    # Trainer.training_step: `loss = self.compute_loss(...)`, then `loss = loss.mean()` (several GPUs, DataParallel)
    # and `self.accelerator.backward(loss)`, whose first step divides it by the gradient accumulation steps: a
    # compute_loss override that returns (loss, outputs) whatever return_outputs asks for hands it a tuple. Only under
    # those two lines of the Trainer's (a LightningModule's training_step is another frame of that name).
    _sig("hf-compute-loss-tuple",
         r", in training_step\n[^\n]*(?:self\.accelerator\.backward\(loss|loss = loss\.mean\(\))[^\n]*\n"
         r"(?:[^\n]*\n){0,4}?[^\n]*?(?P<ev>TypeError: unsupported operand type\(s\) for [/*]: "
         r"'tuple' and '(?:int|float)'|AttributeError: 'tuple' object has no attribute '(?:mean|backward|detach)')",
         "The loss the Trainer's training_step got from compute_loss is a tuple: a Trainer subclass's compute_loss "
         "override returns (loss, outputs) every time, while the Trainer asks for the outputs only with "
         "return_outputs=True (in prediction_step) and needs the loss tensor alone for backward.",
         "Honour return_outputs in the override: return (loss, outputs) if return_outputs else loss. A restart fails "
         "the same way.", retry=False),
    # Trainer._run_epoch: `tr_loss_step = self.training_step(model, inputs, num_items_in_batch)`, then
    # torch.isnan(tr_loss_step) (logging_nan_inf_filter, on by default) or `tr_loss_step.device`: an override that
    # returns loss.item() (a float) or nothing.
    _sig("hf-training-step-not-tensor",
         then(r"torch\.is(?:nan|inf)\(tr_loss_step\)|tr_loss_step\.device", r"\n", r"[^\n]") + CARET_LINE +
         r"[^\n]*?(?P<ev>TypeError: "
         r"is(?:nan|inf)\(\): argument 'input' \(position 1\) must be Tensor, not \w+|AttributeError: '\w+' object "
         r"has no attribute 'device')",
         "A Trainer subclass overrides training_step and returns something other than a tensor (loss.item(), a "
         "float, or nothing): the Trainer checks the step's loss with torch.isnan and adds it to its running loss "
         "tensor, so training_step must return the loss as a (detached) tensor.",
         "Return the loss tensor: return loss.detach() (divided by the gradient accumulation steps as the Trainer's "
         "own training_step does, for the logged loss); log a number with loss.item() elsewhere. A restart fails the "
         "same way.", retry=False),
)
