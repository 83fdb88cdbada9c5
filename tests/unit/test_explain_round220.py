"""Round 220's rules (issue 45, live: torch.distributions in probabilistic models - VAEs, policy-gradient RL, mixture
models): a value outside a distribution's support given to log_prob (dist-value-outside-support), rsample on a
distribution without a reparameterised sample (dist-rsample-not-implemented), kl_divergence of a pair with no
registered closed form (dist-kl-not-implemented), MixtureSameFamily's batch-shape check (dist-mixture-batch-shape).
The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dist-value-outside-support", "dist-rsample-not-implemented", "dist-kl-not-implemented",
       "dist-mixture-batch-shape")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-dist-normal-scale-raw-linear", "distribution-invalid-parameter"),
    ("live-dist-bernoulli-probs-no-sigmoid", "distribution-invalid-parameter"),
    ("live-dist-categorical-logits-nan-mask", "distribution-invalid-parameter"),
    ("live-dist-categorical-rsample", "dist-rsample-not-implemented"),
    ("live-dist-kl-unregistered-pair", "dist-kl-not-implemented"),
    ("live-dist-logprob-label-outside-support", "dist-value-outside-support"),
    ("live-dist-mixture-batch-shape", "dist-mixture-batch-shape"),
    ("live-dist-vae-sample-not-rsample", "ddp-unused-params"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train_rl.py", line 40, in <module>\n    main()\n'
_D = "/opt/venv/lib/python3.11/site-packages/torch/distributions/"


@pytest.mark.parametrize("text, name", [
    # a Beta policy's action at exactly 1.0
    (_TB + "ValueError: Expected value argument (Tensor of shape (64, 2)) to be within the support (Interval("
           "lower_bound=0.0, upper_bound=1.0)) of the distribution Beta(), but found invalid values:\n"
           "tensor([[1.0000, 0.3000]])\n", "dist-value-outside-support"),
    # Bernoulli's rsample (inherited from Distribution), without the caret lines
    (_TB + f'  File "{_D}distribution.py", line 181, in rsample\n    raise NotImplementedError\n'
           "NotImplementedError\n", "dist-rsample-not-implemented"),
    (_TB + "NotImplementedError: No KL(p || q) is implemented for p type Independent and q type Normal\n",
     "dist-kl-not-implemented"),
    (_TB + "ValueError: `mixture_distribution component` (4) does not equal `component_distribution.batch_shape[-1]` "
           "(3)\n", "dist-mixture-batch-shape"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text", [
    # a NotImplementedError from another library's method named rsample (not torch.distributions')
    _TB + '  File "/opt/venv/lib/python3.11/site-packages/pyro/distributions/torch_distribution.py", line 90, in '
          "rsample\n    raise NotImplementedError\nNotImplementedError\n",
    # a NotImplementedError raised by user code after a distributions frame, with its own message
    _TB + f'  File "{_D}distribution.py", line 181, in rsample\n    raise NotImplementedError\n'
          "NotImplementedError: my sampler\n",
])
def test_near_misses(text):
    assert sig(text) not in ("dist-rsample-not-implemented", "dist-kl-not-implemented", "dist-value-outside-support",
                             "dist-mixture-batch-shape")
