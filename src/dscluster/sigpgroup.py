"""Failure signatures of optimizer parameter groups and optimizer state in a user's training script, from round 215 of
issue 45 (live: broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8 under DDP and
deepspeed.initialize): what torch.optim.Optimizer.add_param_group refuses in a group (its parameters in a set, names
or other non-tensors), a group's hyperparameter that is not a number when step() computes with it, a scheduler given
another number of per-group entries than the optimizer has groups, and what DeepSpeed's optimizer wrappers do not take
over from a torch optimizer's habits (add_param_group after initialize, a torch optimizer's state_dict, a parameter of
model_parameters outside the model under ZeRO-3). Each pattern is the wording of the component that prints it
(torch/optim/optimizer.py, torch/optim/lr_scheduler.py, deepspeed/runtime/zero/), or the frames where a message is not
its own (torch/optim's step functions, DeepSpeed's load_state_dict), never one log's. sigrounds.py places this table
with the other round tables, before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

PGROUP_SIGNATURES: tuple[Signature, ...] = (
    # torch/optim/optimizer.py, Optimizer.add_param_group: a group's "params" is a set ("optimizer parameters need to
    # be organized in ordered collections, but the ordering of tensors in sets will change between runs. Please use a
    # list instead.").
    _sig("optim-params-set",
         r"optimizer parameters need to be organized in ordered collections, but the ordering of tensors in sets",
         "A param group's params (or the parameters given to the optimizer) are a set: torch.optim keeps its state per "
         "parameter by position in each group, so it refuses a set, whose order changes between runs (a resumed "
         "optimizer state would land on other parameters). A set is the usual way to keep weight-decay / no-decay "
         "groups free of duplicates.",
         "Keep each group's parameters in a list in a fixed order: build the groups from model.named_parameters() with "
         "conditions that exclude each other, or dedupe by id (seen = set(); [p for p in params if id(p) not in seen "
         "and not seen.add(id(p))]); names gathered in a set are sorted (sorted(names)) and looked up by name. A "
         "restart fails the same way.", retry=False),
    # torch/optim/optimizer.py, Optimizer.add_param_group: "optimizer can only optimize Tensors, but one of the params
    # is " + torch.typename(param): names (str), a module, a generator or list nested inside a group's list, None.
    _sig("optim-params-not-tensors", r"optimizer can only optimize Tensors, but one of the params is [\w.]+",
         "A param group's params hold something other than tensors: parameter names (the names taken from "
         "named_parameters() instead of the parameters), a module (model.head in place of model.head.parameters()), "
         "a generator or list nested inside the group's list ([model.a.parameters(), ...]), or None. The message's "
         "last word is the type found.",
         "Give each group a flat list of parameters: [p for n, p in model.named_parameters() if <condition on n>]; "
         "module.parameters() for a module; itertools.chain / list concatenation to join several. A restart fails the "
         "same way.", retry=False),
    # torch/optim/optimizer.py, Optimizer.add_param_group: `params = param_group["params"]` on a group dict with no
    # "params" key (a typo such as "param", "parameters" or "params_"), Python's KeyError under the frame's line.
    _sig("optim-group-no-params-key",
         r"in add_param_group\n[^\n]*?params = param_group\[\"params\"\]\n" + CARET_LINE + r"[^\n]*?KeyError: 'params'",
         "A param group dict has no \"params\" key: torch.optim reads each group's parameters from exactly that key, "
         "and a group written with another one (\"param\", \"parameters\", \"params_\", a name of the user's own) is "
         "refused when the optimizer is built (or when add_param_group is called).",
         "Spell the key \"params\" in every group ({\"params\": head.parameters(), \"lr\": 1e-2}); the other keys are "
         "the optimizer's own hyperparameters (lr, weight_decay, momentum, betas...) or names of your own that it "
         "keeps. A restart fails the same way.", retry=False),
    # torch/optim/optimizer.py, Optimizer.add_param_group (torch 2.6+, named parameters): "all optimizer params
    # should be with/without names. Some param names are missing" within a group, "all optimizer param groups should
    # be with/without names. cannot add param group {with|without} names to the optimizer" across groups.
    _sig("optim-params-named-mixed", r"all optimizer param(?:s| groups) should be with/without names",
         "The optimizer was given named and unnamed parameters together: torch.optim (2.6 and later) takes (name, "
         "parameter) pairs, as named_parameters() yields them, and keeps the names in its state_dict, but only where "
         "every parameter of every group is named; here one group (or part of one) came from named_parameters() as "
         "pairs and another from parameters() (or [p for n, p in ...]).",
         "Use one form everywhere: parameters only ([p for n, p in model.named_parameters() if ...] in each group), "
         "or (name, parameter) pairs in every group ([(n, p) for n, p in model.named_parameters() if ...]). A restart "
         "fails the same way.", retry=False),
    # torch/optim/<optimizer>.py, the step functions (_single_tensor_adam, _multi_tensor_sgd...): arithmetic with a
    # group's lr, weight_decay, betas, eps or momentum (`param.mul_(1 - lr * weight_decay)`, `lr / bias_correction1`)
    # meets a str or None. The frame is the optimizer's own, the message Python's.
    _sig("optim-group-hyperparam-not-number",
         r"torch[/\\]optim[/\\]\w+\.py\", line \d+, in _(?:single|multi|fused)_tensor_\w+\n[^\n]*\n" + CARET_LINE +
         r"[^\n]*?TypeError: (?:can't multiply sequence by non-int of type '\w+'|unsupported operand type\(s\) for "
         r"[^\n:]{1,3}: '(?:str|NoneType)'|unsupported operand type\(s\) for [^\n:]{1,3}: '\w+' and "
         r"'(?:str|NoneType)'|(?:\w+\(\): )?argument '\w+'(?: \(position \d+\))? must be (?:Number|Tensor|real "
         r"number), not (?:str|NoneType)|can only concatenate str|bad operand type for unary -: '(?:str|NoneType)')",
         "A hyperparameter of a param group (lr, weight_decay, eps, betas, momentum) is not a number when "
         "optimizer.step() computes with it: a string read from a config file (PyYAML reads 1e-4 or 3e-5, with no dot, "
         "as a string), an argparse option without type=float, an environment variable, or None. torch checks the "
         "optimizer's defaults when it is built, not each group's own values, so the error comes at the first step.",
         "Convert the values where they are read (float(cfg[\"lr\"]); argparse type=float) or write them so YAML reads "
         "floats (1.0e-4); check every group before training (all(isinstance(g[\"lr\"], float) for g in "
         "optimizer.param_groups)). A restart fails the same way.", retry=False),
    # torch/optim/lr_scheduler.py, LambdaLR / MultiplicativeLR: "Expected {len(optimizer.param_groups)} lr_lambdas, but
    # got {len(lr_lambda)}"; OneCycleLR / CyclicLR's _format_param: "expected {n} values for {name}, got {len(param)}".
    _sig("sched-per-group-count",
         r"Expected \d+ lr_lambdas, but got \d+|expected \d+ values for (?:max_lr|base_lr|max_momentum|base_momentum), "
         r"got \d+",
         "The scheduler was given a list with one entry per param group (LambdaLR's lr_lambda functions, OneCycleLR's "
         "or CyclicLR's max_lr / base_lr...) whose length is not the optimizer's number of groups: a group was added "
         "(a no-decay split, a head with its own learning rate) or removed and the list kept, or the list was written "
         "for another model's groups. The message gives the number of groups first.",
         "Give one entry per group, in the order of optimizer.param_groups (build the list from the groups: "
         "[fn_for(g) for g in optimizer.param_groups]), or a single function / value that applies to every group. A "
         "restart fails the same way.", retry=False),
    # DeepSpeed's optimizer wrappers (deepspeed/runtime/zero/stage_1_and_2.py DeepSpeedZeroOptimizer, stage3.py
    # DeepSpeedZeroOptimizer_Stage3, bf16_optimizer.py, fp16/) are plain objects, not torch.optim.Optimizer: no
    # add_param_group. Python's AttributeError names the class the user called it on.
    _sig("ds-optimizer-add-param-group",
         r"'(?:DeepSpeedZeroOptimizer\w*|BF16_Optimizer|FP16_Optimizer|FP16_UnfusedOptimizer|ZeROOptimizer|"
         r"DeepSpeedEngine)' object has no attribute 'add_param_group'",
         "add_param_group was called on the optimizer deepspeed.initialize returned (or on the engine): with ZeRO (or "
         "DeepSpeed's bf16 / fp16 optimizers) that is DeepSpeed's wrapper, which flattens and partitions the param "
         "groups it was given once, at initialize, and has no add_param_group. Parameters unfrozen later (progressive "
         "unfreezing, a new head or adapters added mid-training) cannot be added to it.",
         "Give deepspeed.initialize every parameter that will ever train, from the start: keep them trainable in a "
         "group of their own with lr 0 and raise that group's lr later (optimizer.param_groups[i][\"lr\"] = ...; "
         "ZeRO-1/2 leave out parameters that do not require grad at initialize); or, at the unfreezing point, save a "
         "checkpoint and build a new engine with the new groups, loading only the module weights. A restart fails "
         "the same way.", retry=False),
    # DeepSpeed's optimizer wrappers' load_state_dict(state_dict_list, ...) (deepspeed/runtime/zero/stage_1_and_2.py
    # _load_legacy_checkpoint, bf16_optimizer.py: `current_rank_sd = state_dict_list[dp_rank]`; stage3.py:
    # `state_dict_list[dist.get_rank(group=self.dp_process_group)]`) take one saved state per data-parallel rank, as
    # engine.load_checkpoint reads them; a torch optimizer's state_dict (a dict of "state" and "param_groups") is
    # indexed with the rank number.
    _sig("ds-optimizer-load-torch-state",
         r"(?:current_rank_sd = state_dict_list\[dp_rank\]|state_dict_list\[dist\.get_rank\(group=self\."
         r"dp_process_group\)\])[ \t,]{0,4}\n" + CARET_LINE + r"[^\n]*?KeyError: \d+",
         "A torch optimizer's state_dict (saved from a plain torch.optim optimizer, a run without DeepSpeed or another "
         "framework's) was given to load_state_dict of the optimizer deepspeed.initialize returned: with ZeRO (or "
         "bf16) that is DeepSpeed's wrapper, whose load_state_dict takes the list of its own per-rank partition "
         "states, as engine.load_checkpoint reads them from a DeepSpeed checkpoint, and it looked up this rank's entry "
         "by number in the torch dict. DeepSpeed cannot map a torch optimizer's per-parameter state onto its flat "
         "partitions this way.",
         "Load only the model weights from that checkpoint (model.load_state_dict before deepspeed.initialize) and let "
         "the DeepSpeed optimizer start fresh; to resume optimizer state under DeepSpeed, save and load with "
         "engine.save_checkpoint / engine.load_checkpoint. A restart fails the same way.", retry=False),
    # deepspeed/runtime/zero/stage3.py, DeepSpeedZeroOptimizer_Stage3 (_create_fp16_sub_groups:
    # `param.partition_numel()`,
    # and its other reads of the method): ZeRO-3 converts the parameters of the module given to initialize (ds_id,
    # ds_tensor, partition_numel...); a parameter of model_parameters that is not in that module stays a plain torch
    # Parameter. The engine's hooks meeting one (ds_* attributes) is zero3-param-not-registered.
    _sig("zero3-optimizer-param-outside-model", r"'(?:Parameter|Tensor)' object has no attribute 'partition_numel'",
         "Under ZeRO-3 the param groups given to deepspeed.initialize (model_parameters) hold a parameter that is not "
         "part of the model it was given: ZeRO-3 partitions only that module's parameters, and its optimizer met a "
         "plain torch Parameter it never converted. Usual sources: a learnable parameter of the loss module or another "
         "module kept outside the model (a contrastive temperature, a loss weight, a projection head or a second "
         "model), or groups built from another instance of the model.",
         "Make every module whose parameters train part of the model given to deepspeed.initialize (wrap model and "
         "loss in one nn.Module: self.model = model; self.criterion = criterion, and return the loss from its "
         "forward), and build the groups from that module's named_parameters(); a module that should not be "
         "partitioned trains with an optimizer of its own outside the engine. A restart fails the same way.",
         retry=False),
)
