"""Failure signatures of custom nn.Modules' construction, from round 214 of issue 45 (live: broken users' scripts run
for real on torch 2.13 under DDP and DeepSpeed, gloo): registration of submodules, parameters and buffers (an
__init__ that never calls super().__init__(), register_buffer under a name that is already an attribute, a plain
tensor or a number assigned to a registered parameter or buffer, a ModuleDict keyed by dotted names), a module's
forward called directly under ZeRO-3 (its hooks skipped) and an attribute reported missing by nn.Module.__getattr__
(which a property's own AttributeError also ends in). Each pattern is the wording of torch/nn/modules/module.py
(Module.__setattr__, __getattr__, register_buffer, register_parameter, add_module) or torch's broadcasting check,
never one log's. sigrounds.py places MODULE_SIGNATURES with the other round tables, before the exception messages'
(sigmessages.py); signatures.py reads MODULE_AFTER_MESSAGES after them, so that every message table's own
"'X' object has no attribute 'y'" (a wrapper's, a library's method) answers first."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, OWN_FRAME, SIZE_ZERO, Signature
from dscluster.sigtypes import sig as _sig

MODULE_SIGNATURES: tuple[Signature, ...] = (
    # Module.__setattr__ / register_buffer / register_parameter before Module.__init__ made _parameters, _buffers and
    # _modules: "cannot assign module|parameters before Module.__init__() call" (__setattr__), "cannot assign
    # buffer|parameter before Module.__init__() call" (register_*); __getattr__ of one of those dicts when only plain
    # attributes were set ("'Head' object has no attribute '_parameters'", from .parameters(), .to(), DDP).
    _sig("module-init-not-called",
         r"cannot assign (?:module|parameters?|buffer) before Module\.__init__\(\) call|"
         r"object has no attribute '_(?:parameters|buffers|modules|non_persistent_buffers_set|forward_hooks|"
         r"forward_pre_hooks|backward_hooks|state_dict_hooks|load_state_dict_pre_hooks)'",
         "An nn.Module subclass's __init__ sets its layers, parameters or buffers (or the object is used) before "
         "nn.Module.__init__ ran: the subclass's __init__ does not call super().__init__(), or calls it only after "
         "assigning them. nn.Module registers submodules, parameters and buffers in dicts that its own __init__ "
         "creates, so the first assignment of a layer (or register_buffer) has nowhere to go.",
         "Call super().__init__() as the first statement of the subclass's __init__ (before any self.x = ..., "
         "including plain numbers), in every nn.Module subclass of the model; with several bases, make sure "
         "nn.Module's __init__ is reached. A restart fails the same way.", retry=False),
    # Module.register_buffer / register_parameter / add_module: `KeyError: "attribute 'mask' already exists"` when
    # the name is already in the instance's __dict__ or the class (a plain attribute set earlier, a method, a
    # property) and not in _buffers / _parameters / _modules.
    _sig("module-register-name-exists",
         r"register_(?:buffer|parameter)\n(?:[^\n]{0,300}\n){0,3}?[^\n]{0,200}KeyError: [\"']attribute '\w{1,100}' "
         r"already exists|add_module\n(?:[^\n]{0,300}\n){0,3}?[^\n]{0,200}KeyError: [\"']attribute '\w{1,100}' "
         r"already exists",
         "register_buffer (or register_parameter / add_module) was given a name the module already has as an "
         "ordinary attribute: a placeholder set earlier in __init__ (self.mask = None, self.scale = 1.0), a "
         "method or a property of the class. nn.Module refuses to register a buffer, parameter or submodule over "
         "it, since the plain attribute would hide the registered one.",
         "Drop the earlier plain assignment and register the name once: register_buffer(\"mask\", None) is the "
         "placeholder for a buffer set later (assigning a tensor to self.mask then fills it), register_parameter("
         "name, None) for a parameter; or pick a name the class does not use (no method or property of that name). "
         "A restart fails the same way.", retry=False),
    # Module.__setattr__: a name in _parameters given anything but a Parameter or None: "cannot assign
    # 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)"; register_parameter's own
    # "cannot assign 'torch.FloatTensor' object to parameter 'weight' (torch.nn.Parameter or None required)".
    _sig("module-assign-tensor-to-parameter",
         r"cannot assign '[\w.]{1,100}' (?:object to|as) parameter '\w{1,100}' \(torch\.nn\.Parameter or None",
         "A value that is not an nn.Parameter was assigned to a name the module has registered as a parameter "
         "(module.weight = tensor), or given to register_parameter: a plain tensor such as pretrained vectors from "
         "torch.load, a result computed from the weight (weight * 0.5; in a weight tying, embed.weight.t(), "
         "embed.weight.data, a clone or a slice of it: an operation on a Parameter gives a plain tensor, which "
         "would not be shared anyway), or a number. nn.Module only lets a registered parameter be replaced by "
         "another nn.Parameter or None.",
         "To tie weights, share the Parameter object itself (head.weight = embed.weight, same shape) and, where the "
         "layer needs it transposed, apply it transposed in forward (F.linear(h, self.embed.weight)) instead of "
         "storing the transpose. To load values into the existing parameter, copy them in place: with "
         "torch.no_grad(): module.weight.copy_(tensor) (shapes must match), or "
         "nn.Embedding.from_pretrained(tensor, freeze=False) for an embedding; to replace it, wrap it: "
         "module.weight = nn.Parameter(tensor) (a new, untied parameter). Do it before wrapping the model in DDP / "
         "deepspeed.initialize and before building the optimizer. A restart fails the same way.",
         retry=False),
    # Module.__setattr__: a name in _buffers given anything but a tensor or None: "cannot assign 'int' as buffer
    # 'seen' (torch.nn.Buffer, torch.Tensor or None expected)" (torch 2.5+; older: "(torch.Tensor or None
    # expected)"); register_buffer's "cannot assign 'int' object to buffer 'seen' (torch Tensor or None required)".
    _sig("module-assign-nontensor-buffer",
         r"cannot assign '[\w.]{1,100}' (?:object to|as) buffer '\w{1,100}' \((?:torch\.nn\.Buffer, )?torch[ .]Tensor "
         r"or None",
         "A value that is not a tensor (a Python int or float, such as self.count = self.count.item() + n, a list, "
         "a numpy array) was assigned to a name the module has registered as a buffer, or given to "
         "register_buffer. A registered buffer can only hold a tensor (or None): it is what state_dict saves and "
         "what .to() and DDP's buffer broadcast move.",
         "Keep it a tensor and update it in place: self.count += n (or self.count.add_(n), self.count.fill_(v)), "
         "or assign a tensor (self.count = torch.tensor(v)); for a value that needs not be saved or synced, use a "
         "plain attribute under another name instead of a buffer. A restart fails the same way.", retry=False),
    # Module.add_module / register_buffer / register_parameter: "module name can't contain \".\", got: a.b" (a
    # ModuleDict's keys go through add_module), "buffer name can't contain \".\"", "parameter name can't contain \".\"";
    # a KeyError's message is printed as its repr, so the apostrophe comes escaped (can\'t).
    _sig("module-name-has-dot",
         r"(?:module|buffer|parameter) name can\\?'t contain \"\.\"",
         "A submodule, buffer or parameter was registered under a name containing '.': most often an nn.ModuleDict "
         "(or nn.ParameterDict) keyed by names that have dots in them (task or dataset names like 'topic.coarse', "
         "layer paths from named_modules()), or add_module / register_buffer given such a name. '.' separates the "
         "levels of state_dict keys and get_submodule paths, so nn.Module refuses it.",
         "Replace the dots in the keys (name.replace('.', '_') or '__') and keep a map from the original names to "
         "the keys for lookups, or nest ModuleDicts for the levels. A restart fails the same way.", retry=False),
    # A module's forward called as module.forward(x) (or self.forward, engine.module.forward) skips nn.Module's
    # __call__, which runs the forward pre-hooks: under ZeRO-3 the hook that all-gathers the module's own
    # parameters, so they are the empty placeholders (size 0) and torch's broadcasting refuses them. The call line
    # is the user's own frame; the size-0 refusal follows in the frames it called.
    _sig("zero3-forward-called-directly",
         OWN_FRAME + r"(?P<call>[^\n]{0,200}(?<!super\(\))\.forward\([^\n]{0,200})\n" + CARET_LINE +
         r"(?:[^\n]{0,300}\n){0,40}?[^\n]{0,200}RuntimeError: (?:" + SIZE_ZERO + ")",
         "A module's forward was called directly (module.forward(x), engine.module.forward(x), self.forward(x)) "
         "instead of calling the module (module(x)), while DeepSpeed ZeRO-3 holds its parameters partitioned: "
         "nn.Module's __call__ runs the forward pre-hooks, and ZeRO-3's hook is what all-gathers the module's own "
         "parameters before its forward. Skipped, they are still the empty placeholders (size 0), which torch cannot "
         "broadcast against the activations. Any other hook (DDP's, a user's, torch.compile's) is skipped too.",
         "Call the module, never its forward: logits = engine(x) or engine.module(x) (model(x) in the model's own "
         "methods, not self.forward(x)); where only the parameters are wanted outside forward, gather them with "
         "deepspeed.zero.GatheredParameters(...). A restart fails the same way.", retry=False),
)

# nn.Module.__getattr__ (torch/nn/modules/module.py): "'{type}' object has no attribute '{name}'" for a name in none
# of _parameters, _buffers, _modules, reached from the user's own frame, on a class of the user's (the wrappers DDP,
# FSDP and DeepSpeed's engine are ddp-wrapped-attribute's, sigframeworks.py). Python calls __getattr__ also when a
# property (or any descriptor) of the class raised AttributeError inside: the message then names the property.
MODULE_AFTER_MESSAGES: tuple[Signature, ...] = (
    _sig("module-attribute-missing",
         OWN_FRAME + r"(?:[^\n]{0,300}\n){1,3}?[^\n]{0,200}nn[/\\]modules[/\\]module\.py\", line \d+, in __getattr__\n"
         r"(?:[^\n]{0,300}\n){0,3}?[^\n]{0,200}AttributeError: '(?!(?:DistributedDataParallel|DataParallel|"
         r"FullyShardedDataParallel|DeepSpeedEngine|DeepSpeedLight|PipelineEngine|DeepSpeedHybridEngine|"
         r"OptimizedModule)')\w{1,100}' object has no attribute '(?P<attr>\w{1,100})'",
         "nn.Module.__getattr__ found no parameter, buffer or submodule of that name on the user's module, and no "
         "ordinary attribute: either the attribute was never set (a typo, a name renamed in __init__, one set only "
         "in a branch or after its first use), or, easy to miss, it is a @property (or another descriptor) of the "
         "class whose own body raised AttributeError (it reads an attribute that does not exist). Python then falls "
         "back to nn.Module.__getattr__, which reports the property itself as missing and hides the real error.",
         "Look at the class for the name in the message: if it is a property, call its body directly to see the "
         "attribute it really lacks (type(obj).<name>.fget(obj)) and fix that (set it in __init__, or raise another "
         "exception type than AttributeError inside properties); otherwise set the attribute in __init__ (after "
         "super().__init__()) before it is read, or correct its spelling. A restart fails the same way.",
         retry=False),
)
