"""Failure signatures of learning-rate schedulers and of the DeepSpeed config's optimizer and scheduler sections, from
round 207 of issue 45 (live: broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8 under DDP and
deepspeed.initialize): torch schedulers' own contracts (ReduceLROnPlateau.step without its metric, a LambdaLR
function returning None, SequentialLR's milestones, LinearLR's start factor), and what deepspeed.initialize does with
the scheduler and optimizer it is given (scheduler.params a scheduler does not take, a step function where it calls a
scheduler factory, parameters in the optimizer's place). Each pattern is the wording of the component that prints it
(torch/optim/lr_scheduler.py, deepspeed/runtime/engine.py), and the frames where a message is not its own, never one
log's. sigrounds.py places this table with the other round tables, before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature, then
from dscluster.sigtypes import sig as _sig

# The optimizer classes a DeepSpeed engine hands a callable lr_scheduler (torch.optim's, DeepSpeed's own): the operand
# a step function meets where it expected the step number.
_OPTIMIZER = (r"(?:\w*Adam\w*|\w*SGD|\w*Optimizer\w*|\w*Lion|\w*Lamb|Adagrad|\w*Adagrad|RMSprop|Adadelta|Adamax|"
              r"ASGD|Rprop|LBFGS|Muon\w*)")

SCHED_SIGNATURES: tuple[Signature, ...] = (
    # torch/optim/lr_scheduler.py, ReduceLROnPlateau.step(self, metrics, epoch=None): called as the other schedulers
    # are, with no argument (Python's own TypeError names the method).
    _sig("plateau-step-no-metric", r"ReduceLROnPlateau\.step\(\) missing 1 required positional argument: 'metrics'",
         "ReduceLROnPlateau.step() was called without the value it watches: unlike the other torch schedulers, "
         "which step on a count, ReduceLROnPlateau lowers the learning rate when a metric (the validation loss) "
         "stops improving, and its step takes that metric. A loop written for StepLR or a cosine schedule calls "
         "scheduler.step() with nothing.",
         "Call scheduler.step(val_loss) once per evaluation, with a float (val_loss.item()) that is the same on every "
         "rank (all_reduce the validation loss first, or each rank lowers its learning rate at a different time); "
         "keep any per-step scheduler.step() only for count-based schedulers. A restart fails the same way.",
         retry=False),
    # torch/optim/lr_scheduler.py, LambdaLR.get_lr (`base_lr * lmbda(self.last_epoch)`) and MultiplicativeLR's
    # (`group["lr"] * lmbda(self.last_epoch)`): the user's lr_lambda returned None (or another non-number) for a step.
    _sig("lr-lambda-not-a-number",
         then(r"\* lmbda\(self\.last_epoch\)", r"\n", "[^\n]") + CARET_LINE +
         r"[^\n]*?TypeError: unsupported operand type\(s\) for \*: '\w+' and '\w+'",
         "The lr_lambda given to LambdaLR (or MultiplicativeLR) returned something that is not a number for one step, "
         "most often None: a function with if / elif branches for the warmup and the decay and no return for the "
         "steps after them (or a branch that computes the factor and forgets to return it). The scheduler multiplies "
         "each base learning rate by what the function returns.",
         "Make the function return a float for every step, including past the last phase (a final `return "
         "min_factor`); test it over the whole run first (all(isinstance(f(s), float) for s in range(total_steps + "
         "1))). A restart fails the same way, at the same step.", retry=False),
    # torch/optim/lr_scheduler.py, SequentialLR.__init__: len(milestones) != len(schedulers) - 1.
    _sig("sequentiallr-milestones-count",
         r"Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone",
         "SequentialLR was given as many milestones as schedulers (or otherwise not one fewer): its milestones are the "
         "steps at which it switches from one scheduler to the next, the boundaries between phases, not each phase's "
         "length, so N schedulers take N - 1 milestones.",
         "Give the cumulative switch points only: for warmup W, hold H and a decay, milestones=[W, W + H]; the last "
         "scheduler runs until training ends (its own T_max / total_iters sets its length). A restart fails the "
         "same way.", retry=False),
    # torch/optim/lr_scheduler.py, LinearLR.__init__: start_factor outside (0, 1] ("Starting multiplicative factor
    # expected to be greater than 0 and less or equal to 1.") or end_factor outside [0, 1] ("Ending ...").
    _sig("linearlr-factor-range",
         r"(?:Starting multiplicative factor expected to be greater than 0 and less or equal to 1|"
         r"Ending multiplicative factor expected to be between 0 and 1)",
         "LinearLR was built with a factor outside its range: start_factor must be above 0 and at most 1 (a warmup "
         "written to start from exactly zero, start_factor=0.0, as transformers' get_linear_schedule_with_warmup "
         "starts, or a factor above 1 meant as a learning rate), end_factor between 0 and 1. The factors multiply "
         "the optimizer's lr; they are not learning rates.",
         "Start the warmup from a small positive factor (start_factor=1e-3, or 1 / warmup_steps); for a warmup from "
         "exactly 0 use LambdaLR(optimizer, lambda s: min(1.0, s / warmup_steps)) or transformers' "
         "get_linear_schedule_with_warmup; give learning rates to the optimizer, factors to LinearLR. A restart fails "
         "the same way.", retry=False),
    # deepspeed/runtime/engine.py, _scheduler_from_config: `scheduler(optimizer, **scheduler_params)` with the config's
    # scheduler.params; the class (DeepSpeed's WarmupLR... or a torch.optim.lr_scheduler one) does not take a name.
    _sig("ds-scheduler-params",
         r"in _scheduler_from_config\n(?:[^\n]*\n){0,4}?[^\n]*?TypeError: \w+\.__init__\(\) (?:got an unexpected "
         r"keyword argument|missing \d+ required positional arguments?)",
         "The DeepSpeed config's scheduler.params do not fit its scheduler.type: DeepSpeed builds the scheduler as "
         "type(optimizer, **params), and the class refuses a parameter name (or lacks a required one). Each "
         "scheduler has its own names: WarmupLR / WarmupDecayLR take warmup_min_lr / warmup_max_lr (learning "
         "rates), WarmupCosineLR warmup_min_ratio / cos_min_ratio (ratios of the optimizer's lr), OneCycle "
         "cycle_min_lr / cycle_max_lr, a torch scheduler named by its class its own (CosineAnnealingLR: T_max); "
         "params kept from another type are the usual cause.",
         "Rename scheduler.params to the names of the scheduler the message names (DeepSpeed's docs list them: "
         "deepspeed.runtime.lr_schedules), or set scheduler.type back to the scheduler the params were written for. "
         "A restart fails the same way.", retry=False),
    # deepspeed/runtime/engine.py, _configure_lr_scheduler: a callable lr_scheduler= is called with the optimizer
    # (`self.client_lr_scheduler(self.basic_optimizer)`); a step -> factor function (LambdaLR's lr_lambda) meets the
    # optimizer where it computes with the step number.
    _sig("ds-lr-scheduler-step-function",
         r"self\.client_lr_scheduler\(self\.basic_optimizer\)\n(?:[^\n]*\n){0,10}?[^\n]*?TypeError: [^\n]*?'"
         + _OPTIMIZER + r"'",
         "deepspeed.initialize was given a step -> learning-rate-factor function as lr_scheduler (what LambdaLR "
         "takes as lr_lambda): DeepSpeed calls a callable lr_scheduler once, with the optimizer, to build the "
         "scheduler, so the function computed with the optimizer in place of a step number.",
         "Pass a function that builds the scheduler from the optimizer: lr_scheduler=lambda opt: "
         "torch.optim.lr_scheduler.LambdaLR(opt, warmup) (or a scheduler built on the optimizer you pass as "
         "optimizer=), or put a \"scheduler\" section (WarmupLR...) in the config. A restart fails the same way.",
         retry=False),
    # deepspeed/runtime/engine.py, _do_sanity_check: the optimizer argument is neither a torch/DeepSpeed optimizer nor a
    # callable (`Client Optimizer is of unexpected type <class 'list'>`): parameters or param groups in its place.
    _sig("ds-optimizer-given-parameters",
         r"Client Optimizer is of unexpected type <class '(?:list|tuple|generator|dict|dict_values|itertools\.chain|"
         r"filter|map)'>",
         "deepspeed.initialize got parameters where it takes the optimizer: a list of param groups (or "
         "model.parameters(), a filter of the trainable ones) passed as its third positional argument, which is "
         "optimizer (the signature is initialize(args, model, optimizer, model_parameters, ...)), or as optimizer=.",
         "Pass them by keyword: deepspeed.initialize(model=model, model_parameters=groups, config=ds_config); the "
         "config's optimizer section builds the optimizer over those groups (each group's own lr or weight_decay "
         "kept). Pass optimizer= only a torch optimizer (or a function building one from the parameters). A restart "
         "fails the same way.", retry=False),
)
