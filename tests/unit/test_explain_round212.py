"""Round 212's rules (issue 45, live: quantization and pruning in a training script): a converted model given a float
input with no QuantStub (quant-float-into-quantized-op), a quantized tensor given to a float operator such as '+'
(quantized-tensor-float-op), prepare_qat on a model in eval mode (qat-prepare-eval-mode), fuse_modules on a model in
training mode (quant-fuse-train-mode), prune.remove of a parameter never pruned (prune-remove-unpruned), a pruned
state_dict without prune.remove loaded into a plain model (prune-state-dict-keys) and an int8 state_dict loaded into
the float model (quant-int8-state-dict-into-float); optimizer-empty-params and ddp-no-trainable-params now name a
quantized model among their causes. The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("quant-float-into-quantized-op", "quantized-tensor-float-op", "qat-prepare-eval-mode", "quant-fuse-train-mode",
       "prune-remove-unpruned", "prune-state-dict-keys", "quant-int8-state-dict-into-float")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("optimizer-empty-params", "ddp-no-trainable-params"))
    assert "quantize_dynamic" in by_name["optimizer-empty-params"].cause
    assert "convert" in by_name["ddp-no-trainable-params"].cause


@pytest.mark.parametrize("case, name", [
    ("live-quant-no-quantstub", "quant-float-into-quantized-op"),
    ("live-quant-qtensor-add", "quantized-tensor-float-op"),
    ("live-quant-ddp-after-convert", "ddp-no-trainable-params"),
    ("live-quant-dynamic-then-train", "optimizer-empty-params"),
    ("live-quant-prepare-qat-eval", "qat-prepare-eval-mode"),
    ("live-quant-fuse-train-mode", "quant-fuse-train-mode"),
    ("live-prune-ddp-wrapper", "ddp-wrapped-attribute"),
    ("live-prune-ckpt-load-plain", "prune-state-dict-keys"),
    ("live-prune-remove-bias", "prune-remove-unpruned"),
    ("live-quant-int8-load-float", "quant-int8-state-dict-into-float"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_LOAD = (_TB + '  File "/opt/torch/nn/modules/module.py", line 2638, in load_state_dict\n    raise RuntimeError(\n'
         "RuntimeError: Error(s) in loading state_dict for ResNet:\n")


@pytest.mark.parametrize("text, name", [
    # a quantized conv given the float image
    (_TB + "NotImplementedError: Could not run 'quantized::conv2d.new' with arguments from the 'CPU' backend. This "
     "could be because the operator doesn't exist for this backend\n", "quant-float-into-quantized-op"),
    # torch.mul on quantized activations
    (_TB + "NotImplementedError: Could not run 'aten::mul.out' with arguments from the 'QuantizedCPU' backend.\n",
     "quantized-tensor-float-op"),
    # conv and bn in different modes
    (_TB + "AssertionError: Conv and BN both must be in the same mode (train or eval).\n", "quant-fuse-train-mode"),
    # a conv layer's weight removed twice
    (_TB + "ValueError: Parameter 'weight' of module Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1)) has to be "
           "pruned before pruning can be removed\n", "prune-remove-unpruned"),
    # a conv layer's weight and bias both pruned, after an unexpected buffer
    (_LOAD + '\tMissing key(s) in state_dict: "conv.weight", "conv.bias". \n'
             '\tUnexpected key(s) in state_dict: "stem.num_batches_tracked", "conv.weight_orig", "conv.bias_orig", '
             '"conv.weight_mask", "conv.bias_mask". \n', "prune-state-dict-keys"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a sparse gradient given a dense-only operator: not quantization
    (_TB + "NotImplementedError: Could not run 'aten::view' with arguments from the 'SparseCPU' backend.\n",
     "quantized-tensor-float-op"),
    # a CPU-only build asked for a CUDA kernel: no quantized operator
    (_TB + "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend.\n",
     "quant-float-into-quantized-op"),
    # a DDP prefix, no pruning names
    (_LOAD + '\tMissing key(s) in state_dict: "fc.weight", "fc.bias". \n'
             '\tUnexpected key(s) in state_dict: "module.fc.weight", "module.fc.bias". \n', "prune-state-dict-keys"),
    # an attention mask buffer and an unrelated "_orig" name only among the missing keys; two masks side by side
    (_LOAD + '\tUnexpected key(s) in state_dict: "attn.causal_mask", "enc.pad_mask". \n', "prune-state-dict-keys"),
    (_LOAD + '\tMissing key(s) in state_dict: "emb.weight_orig". \n'
             '\tUnexpected key(s) in state_dict: "attn.causal_mask". \n', "prune-state-dict-keys"),
    # the other way round: a float checkpoint loaded into the converted model
    (_LOAD + '\tMissing key(s) in state_dict: "1.scale", "1.zero_point", "1._packed_params._packed_params". \n'
             '\tUnexpected key(s) in state_dict: "1.weight", "1.bias". \n', "quant-int8-state-dict-into-float"),
])
def test_near_misses(text, name):
    assert sig(text) != name
