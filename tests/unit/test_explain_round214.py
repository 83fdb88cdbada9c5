"""Round 214's rules (issue 45, live: constructing custom nn.Modules, registration of submodules, parameters and
buffers, under DDP and DeepSpeed): an __init__ without super().__init__() (module-init-not-called), register_buffer
over a plain attribute of the same name (module-register-name-exists), a plain tensor assigned to a registered
parameter (module-assign-tensor-to-parameter), a Python number assigned to a registered buffer
(module-assign-nontensor-buffer), a ModuleDict keyed by dotted names (module-name-has-dot), a module's forward called
directly under ZeRO-3 (zero3-forward-called-directly) and nn.Module.__getattr__'s missing attribute, which a
property's own AttributeError also ends in (module-attribute-missing); dtype-mismatch now names layers kept in a plain
list or dict, meta-tensor-compute a persistent=False buffer left on meta by load_state_dict(assign=True). The cases'
own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("module-init-not-called", "module-register-name-exists", "module-assign-tensor-to-parameter",
       "module-assign-nontensor-buffer", "module-name-has-dot", "zero3-forward-called-directly",
       "module-attribute-missing")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("dtype-mismatch", "meta-tensor-compute"))
    assert "ModuleList" in by_name["dtype-mismatch"].cause and "ModuleList" in by_name["dtype-mismatch"].fix
    assert "persistent=False" in by_name["meta-tensor-compute"].cause
    assert "persistent=False" in by_name["meta-tensor-compute"].fix


@pytest.mark.parametrize("case, name", [
    ("live-module-no-super-init", "module-init-not-called"),
    ("live-module-buffer-name-clash", "module-register-name-exists"),
    ("live-module-assign-tensor-to-weight", "module-assign-tensor-to-parameter"),
    ("live-module-buffer-assign-int", "module-assign-nontensor-buffer"),
    ("live-module-moduledict-dotted-key", "module-name-has-dot"),
    ("live-module-property-attributeerror", "module-attribute-missing"),
    ("live-module-nonpersistent-buffer-meta", "meta-tensor-compute"),
    ("live-module-plain-list-ds-bf16", "dtype-mismatch"),
    ("live-module-param-in-forward-zero3", "zero3-param-not-registered"),
    ("live-module-forward-direct-zero3", "zero3-forward-called-directly"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = '[rank0]: Traceback (most recent call last):\n[rank0]:   File "/home/u/train.py", line 40, in <module>\n'
_MOD = '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line {}, in {}\n'


@pytest.mark.parametrize("text, name", [
    # register_buffer called before super().__init__()
    (_TB + "[rank0]:     self.register_buffer('mask', m)\n" + _MOD.format(563, "register_buffer") +
     "[rank0]: AttributeError: cannot assign buffer before Module.__init__() call\n", "module-init-not-called"),
    # only plain attributes set, then .parameters() on the un-initialized module
    (_TB + "[rank0]:     opt = torch.optim.SGD(head.parameters(), lr=0.1)\n" + _MOD.format(1967, "__getattr__") +
     "[rank0]: AttributeError: 'Head' object has no attribute '_parameters'\n", "module-init-not-called"),
    # register_parameter over a method of the same name
    (_TB + "[rank0]:     self.register_parameter('scale', nn.Parameter(torch.ones(1)))\n" +
     _MOD.format(619, "register_parameter") + "[rank0]:     raise KeyError(f\"attribute '{name}' already exists\")\n"
     "[rank0]: KeyError: \"attribute 'scale' already exists\"\n", "module-register-name-exists"),
    # register_parameter given a plain tensor
    (_TB + "[rank0]:     self.register_parameter('alpha', torch.zeros(4))\n" + _MOD.format(625, "register_parameter") +
     "[rank0]: TypeError: cannot assign 'torch.FloatTensor' object to parameter 'alpha' (torch.nn.Parameter or None "
     "required)\n", "module-assign-tensor-to-parameter"),
    # a float to a registered parameter
    (_TB + _MOD.format(1995, "__setattr__") + "[rank0]: TypeError: cannot assign 'float' as parameter 'temperature' "
     "(torch.nn.Parameter or None expected)\n", "module-assign-tensor-to-parameter"),
    # torch before 2.5's wording, a numpy array
    (_TB + _MOD.format(1710, "__setattr__") + "[rank0]: TypeError: cannot assign 'numpy.ndarray' as buffer 'mean' "
     "(torch.Tensor or None expected)\n", "module-assign-nontensor-buffer"),
    # register_buffer given a list
    (_TB + _MOD.format(578, "register_buffer") + "[rank0]: TypeError: cannot assign 'list' object to buffer 'ids' "
     "(torch Tensor or None required)\n", "module-assign-nontensor-buffer"),
    # a ParameterDict / register_buffer with a dotted name
    (_TB + _MOD.format(567, "register_buffer") + "[rank0]: KeyError: 'buffer name can\\'t contain \".\"'\n",
     "module-name-has-dot"),
    # self.forward from the model's own predict method, the size-0 side first
    (_TB + "[rank0]:     preds = engine.module.predict(batch)\n"
     '[rank0]:   File "/home/u/model.py", line 51, in predict\n[rank0]:     return self.forward(x).argmax(-1)\n'
     '[rank0]:   File "/home/u/model.py", line 44, in forward\n[rank0]:     h = self.scale * h\n'
     "[rank0]: RuntimeError: The size of tensor a (0) must match the size of tensor b (256) at non-singleton "
     "dimension 1\n", "zero3-forward-called-directly"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text", [
    # the DDP wrapper's own missing attribute is ddp-wrapped-attribute's
    _TB + "[rank0]:     model.fc.reset_parameters()\n" + _MOD.format(1967, "__getattr__") +
    "[rank0]: AttributeError: 'DistributedDataParallel' object has no attribute 'fc'\n",
    # the size-0 placeholder reached through model(x): no direct forward call
    _TB + "[rank0]:     logits = engine.module(images)\n" + _MOD.format(1789, "_call_impl") +
    '[rank0]:   File "/home/u/vit.py", line 40, in forward\n[rank0]:     x = x + self.pos_embed\n'
    "[rank0]: RuntimeError: The size of tensor a (768) must match the size of tensor b (0) at non-singleton "
    "dimension 2\n",
    # super().forward(x) in a subclass is the module's own call, not a skipped hook
    _TB + "[rank0]:     out = model(x)\n" + '[rank0]:   File "/home/u/m.py", line 12, in forward\n'
    "[rank0]:     return super().forward(x) + self.bias\n"
    "[rank0]: RuntimeError: The size of tensor a (64) must match the size of tensor b (0) at non-singleton "
    "dimension 1\n",
    # a KeyError of the same words outside nn.Module's registration
    _TB + '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/mylib/registry.py", line 9, in register\n'
    "[rank0]: KeyError: \"attribute 'mask' already exists\"\n",
])
def test_near_misses(text):
    assert sig(text) not in NEW
