"""Failure signatures of torch.distributions in probabilistic models (VAEs, policy-gradient RL, mixture models), from
round 220 of issue 45 (live: broken users' scripts run for real on torch 2.13 under DDP, CPU and gloo): a value outside
a distribution's support given to log_prob (argument validation: `Expected value argument (...) to be within the
support (...)`), rsample on a distribution without a reparameterised sample (Distribution.rsample's bare
NotImplementedError), kl_divergence between a pair with no registered closed form (kl.py: `No KL(p || q) is
implemented`) and MixtureSameFamily refusing components whose batch shape does not end in the mixture's. A parameter
outside its constraint (NaN, a negative scale, probs outside [0, 1]) is signonfinite.py's
distribution-invalid-parameter. Each pattern is the wording of torch/distributions itself, never one log's.
sigrounds.py places this table with the other round tables, before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

DIST_SIGNATURES: tuple[Signature, ...] = (
    # torch/distributions/distribution.py, Distribution._validate_sample (log_prob, cdf with validate_args, the
    # default): "Expected value argument (Tensor of shape (32,)) to be within the support (IntegerInterval(lower_bound=0,
    # upper_bound=4)) of the distribution Categorical(logits: torch.Size([32, 5])), but found invalid values:".
    _sig("dist-value-outside-support", r"Expected value argument \([^\n]{0,200}?\) to be within the support "
         r"\([^\n]{0,300}?\) of the distribution \w+\(",
         "log_prob (or cdf) of a torch.distributions distribution was given values outside the distribution's support, "
         "which its argument validation refuses (it prints the support and the values): most often class labels "
         "that are 1-based or hold an ignore/padding index such as -100 or the class count for a Categorical of "
         "classes 0..C-1, a Bernoulli target that is not 0/1, a Beta or Dirichlet value at exactly 0 or 1, or an action "
         "outside a squashed policy's (-1, 1) after tanh.",
         "Bring the values into the support the message prints: shift 1-based labels (labels - 1), drop or mask "
         "ignored positions before log_prob, clamp Beta/tanh-squashed values into the open interval (x.clamp(eps, "
         "1 - eps)), binarise Bernoulli targets. Do not pass validate_args=False to hide it: log_prob of a value "
         "outside the support is wrong or -inf. A restart fails the same way.", retry=False),
    # torch/distributions/distribution.py, Distribution.rsample: `raise NotImplementedError` with no message, for a
    # distribution with has_rsample False (Categorical, Bernoulli, Poisson, Binomial, OneHotCategorical, ...).
    _sig("dist-rsample-not-implemented", r"distributions[/\\]distribution\.py\"?, line \d+, in rsample\n[^\n]*?"
         r"raise NotImplementedError\n(?:[^\n]*\n){0,2}?[^\n]*?\bNotImplementedError\s*$",
         "rsample() was called on a torch.distributions distribution that has no reparameterised sample "
         "(has_rsample is False: Categorical, Bernoulli, OneHotCategorical, Poisson, Binomial, Geometric, ...), so "
         "Distribution.rsample raises a bare NotImplementedError. Discrete samples cannot carry a gradient: a "
         "template written for a continuous (Normal, SAC-style) policy or latent does not carry over.",
         "For policy gradients use action = dist.sample() and the score function loss -(dist.log_prob(action) * "
         "advantage).mean(); for a differentiable discrete sample use RelaxedOneHotCategorical / "
         "RelaxedBernoulli(temperature, logits=...).rsample() or F.gumbel_softmax(logits, tau, hard=True); check "
         "dist.has_rsample before calling rsample. A restart fails the same way.", retry=False),
    # torch/distributions/kl.py, kl_divergence: "No KL(p || q) is implemented for p type Normal and q type StudentT".
    _sig("dist-kl-not-implemented", r"No KL\(p \|\| q\) is implemented for p type \w+ and q type \w+",
         "torch.distributions.kl_divergence(p, q) was called for a pair of distribution types with no closed-form KL "
         "registered (the message names them): for example a Normal posterior and a StudentT, Laplace-to-Cauchy or "
         "mixture prior, a MixtureSameFamily, or an Independent on one side only (Independent(Normal) against a plain "
         "Normal).",
         "Make both sides types with a registered KL (the same kind of wrapping: Independent(..., 1) on both, "
         "a Normal prior for a Normal posterior), register one with @torch.distributions.kl.register_kl(P, Q), or "
         "estimate it by Monte Carlo from the reparameterised sample: z = q.rsample(); kl = q.log_prob(z) - "
         "prior.log_prob(z). A restart fails the same way.", retry=False),
    # torch/distributions/mixture_same_family.py, MixtureSameFamily.__init__: "`mixture_distribution.batch_shape`
    # (torch.Size([32])) is not compatible with `component_distribution.batch_shape`(torch.Size([32, 5]))" and
    # "`mixture_distribution component` (5) does not equal `component_distribution.batch_shape[-1]` (3)".
    _sig("dist-mixture-batch-shape", r"`mixture_distribution\.batch_shape` \([^\n]{0,200}?\) is not compatible with "
         r"`component_distribution\.batch_shape`|`mixture_distribution component` \(\d+\) does not equal "
         r"`component_distribution\.batch_shape\[-1\]`",
         "MixtureSameFamily(mixture, components) needs the components' batch_shape to be the mixture's batch_shape "
         "followed by the number of components K; here it is not: most often multivariate components built as "
         "Normal(mu, sigma) of shape (B, K, D), whose D dimensions are batch dimensions rather than one event, so the "
         "last batch dimension is D, not K (or the Categorical's logits have another K).",
         "Turn the per-dimension components into one event: MixtureSameFamily(Categorical(logits=(B, K)), "
         "Independent(Normal(mu, sigma), 1)) with mu, sigma of shape (B, K, D) (or MultivariateNormal); check "
         "mix.batch_shape + (K,) == comp.batch_shape. A restart fails the same way.", retry=False),
)
