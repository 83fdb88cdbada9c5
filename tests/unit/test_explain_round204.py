"""Round 204's rules (issue 45, live: dtypes and mixed precision in the user's own code on CPU): autocast's bfloat16
output written with index_add_ into a float32 buffer (index-op-source-dtype), a bfloat16 embedding before a float32
LSTM (rnn-input-dtype), a bfloat16 model opening with BatchNorm fed float32 (cpu-norm-param-dtype), float32 data into
a model made float64 by torch.set_default_dtype (float32-input-double-model), bfloat16 queries against a float32
encoder's keys and values (sdpa-qkv-dtype), GradScaler.update() on every micro-batch (gradscaler-update-without-step)
and torch.cdist on a DeepSpeed bf16 engine's output (bf16-op-unsupported). The cases' own logs, second wordings and
near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("index-op-source-dtype", "rnn-input-dtype", "cpu-norm-param-dtype", "float32-input-double-model",
       "sdpa-qkv-dtype", "gradscaler-update-without-step", "bf16-op-unsupported")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-amp-autocast-head-outside", "dtype-mismatch"),
    ("live-amp-autocast-index-add-fp32-buffer", "index-op-source-dtype"),
    ("live-amp-gradscaler-half-model", "amp-fp16-params"),
    ("live-amp-embedding-bf16-lstm-fp32", "rnn-input-dtype"),
    ("live-amp-bf16-model-batchnorm-fp32-input", "cpu-norm-param-dtype"),
    ("live-amp-default-dtype-float64-np32", "float32-input-double-model"),
    ("live-amp-sdpa-bf16-query-fp32-memory", "sdpa-qkv-dtype"),
    ("live-amp-gradscaler-update-every-microbatch", "gradscaler-update-without-step"),
    ("live-amp-frozen-cnn-bf16-fp32-images", "dtype-mismatch"),
    ("live-amp-ds-bf16-cdist-loss", "bf16-op-unsupported"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # scatter_add_ of a half source into a float32 buffer (torch's scatter() check)
    (_TB + "RuntimeError: scatter(): Expected self.dtype to be equal to src.dtype\n", "index-op-source-dtype"),
    # advanced-index assignment of a bf16 tensor into a float32 one
    (_TB + "RuntimeError: Index put requires the source and destination dtypes match, got Float for the destination "
     "and BFloat16 for the source.\n", "index-op-source-dtype"),
    (_TB + "RuntimeError: index_copy_(): self and source expected to have the same dtype, but got (self) Float and "
     "(source) Half\n", "index-op-source-dtype"),
    # a GRU cast to half fed float32
    (_TB + "ValueError: RNN input dtype (torch.float32) does not match weight dtype (torch.float16). Convert input: "
     "input.to(torch.float16), or convert model: model.to(torch.float32)\n", "rnn-input-dtype"),
    # a LayerNorm made double fed float32
    ("[rank1]: RuntimeError: mixed dtype (CPU): expect parameter to have scalar type of Float\n",
     "cpu-norm-param-dtype"),
    # the CPU mm behind `x @ w` with a double weight
    (_TB + "RuntimeError: expected m1 and m2 to have the same dtype, but got: float != double\n",
     "float32-input-double-model"),
    # a conv made double fed float32
    (_TB + "RuntimeError: Input type (float) and bias type (double) should be the same\n",
     "float32-input-double-model"),
    # float32 queries against float16 keys and values
    (_TB + "RuntimeError: Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: "
     "c10::Half and value.dtype: c10::Half instead.\n", "sdpa-qkv-dtype"),
    # torch.cuda.amp's GradScaler before 2.3
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py", line 385, in update\n'
     '    assert len(found_infs) > 0, "No inf checks were recorded prior to update."\n'
     "AssertionError: No inf checks were recorded prior to update.\n", "gradscaler-update-without-step"),
    # a spectral-norm regularizer on bf16 weights, linalg's low-precision check, quantile of bf16 logits
    (_TB + "NotImplementedError: \"linalg_svd_cpu\" not implemented for 'BFloat16'\n", "bf16-op-unsupported"),
    (_TB + "RuntimeError: linalg.inv: Low precision dtypes not supported. Got BFloat16\n", "bf16-op-unsupported"),
    (_TB + "RuntimeError: quantile() input tensor must be either float or double dtype\n", "bf16-op-unsupported"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # index_add_ whose source has the same dtype (the index's own check, not the source's dtype)
    (_TB + "RuntimeError: index_add_(): self (Float) and source (Float) must have the same scalar type\n",
     "index-op-source-dtype"),
    # scatter's index dtype, not its source's
    (_TB + "RuntimeError: scatter(): Expected dtype int64 for index\n", "index-op-source-dtype"),
    # numpy's float64 input to float32 weights: float64-input's direction
    (_TB + "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float\n",
     "float32-input-double-model"),
    # a bf16 input to float32 weights: dtype-mismatch's half precision
    (_TB + "RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Float\n",
     "float32-input-double-model"),
    # float16 on the CPU stays half-on-cpu
    (_TB + "RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half'\n", "bf16-op-unsupported"),
    # step() with no gradients for the optimizer: gradscaler-no-grads
    ('    assert len(optimizer_state["found_inf_per_device"]) > 0, "No inf checks were recorded for this '
     'optimizer."\nAssertionError: No inf checks were recorded for this optimizer.\n',
     "gradscaler-update-without-step"),
    # an attention mask's dtype, not the query's/key's
    (_TB + "RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
     "double and  query.dtype: float instead.\n", "sdpa-qkv-dtype"),
])
def test_near_misses(text, name):
    assert sig(text) != name
