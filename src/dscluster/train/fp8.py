"""FP8 training (`--precision fp8`): the transformer's linear layers run their three matrix products
(forward, input gradient, weight gradient) in float8 through torchao's float8 training layers, with one
scale per tensor ("tensorwise"); everything else stays bf16 under DeepSpeed's bf16 mode, and the
weights, their fp32 master copies and the optimizer are unchanged. Hopper and Ada GPUs run float8
matrix products at twice their bf16 rate, which is where the gain comes from (the element-wise work
and attention do not speed up).

The checks come first and are pure (`refusal`): FP8 is refused on CPU, on GPUs before compute
capability 8.9 (no float8 tensor cores: Ampere and older), without the optional `fp8` extra
(torchao), and with fp16 instead of bf16. Each refusal names the setting and the fix, before any
process group or GPU memory is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from dscluster.errors import ConfigError
from dscluster.i18n import tr

PRECISIONS = ("auto", "fp8")
# float8 tensor cores (e4m3/e5m2 matrix products): Ada Lovelace (8.9) and Hopper (9.0) on.
FP8_MIN_CAPABILITY = (8, 9)
# torch._scaled_mm needs both sides of every product in multiples of 16.
FP8_DIM_MULTIPLE = 16


@dataclass(frozen=True)
class Fp8Env:
    """What decides whether FP8 can run: read once from the process (`probe`), judged by `refusal`."""

    device_type: str
    capability: tuple[int, int] | None
    gpu_name: str | None
    torchao: str | None  # its version, None when it is not importable
    half: str | None = None  # "fp16" when the ds_config asks for it (FP8 here builds on bf16)


def probe(half: str | None = None) -> Fp8Env:
    import torch  # noqa: PLC0415

    cuda = torch.cuda.is_available()
    try:
        import torchao  # noqa: PLC0415

        version = getattr(torchao, "__version__", "unknown")
    except Exception:  # noqa: BLE001 - absent or broken: both mean "not available"
        version = None
    return Fp8Env("cuda" if cuda else "cpu", torch.cuda.get_device_capability() if cuda else None,
                  torch.cuda.get_device_name() if cuda else None, version, half)


def refusal(env: Fp8Env) -> ConfigError | None:
    """The reason FP8 cannot run here, as the error to raise; None when it can."""
    if env.device_type != "cuda":
        return ConfigError(tr("--precision fp8 needs an NVIDIA GPU; this process has none (CPU)"),
                           tr("train with --precision auto on CPU (fp32), or run on Hopper (H100/H200) or Ada GPUs"),
                           setting="--precision")
    if env.capability is not None and tuple(env.capability) < FP8_MIN_CAPABILITY:
        return ConfigError(
            tr("--precision fp8 needs float8 tensor cores (compute capability 8.9 or newer); {gpu} is {cc}",
               gpu=env.gpu_name or "this GPU", cc=".".join(map(str, env.capability))),
            tr("use --precision auto (bf16) on this GPU; FP8 runs on Hopper (H100/H200) and Ada (L4, L40S)"),
            setting="--precision")
    if env.half == "fp16":
        return ConfigError(tr("--precision fp8 builds on bf16, but the DeepSpeed config enables fp16"),
                           tr("replace the config's fp16 section with \"bf16\": {{\"enabled\": true}}"),
                           setting="--precision")
    if env.torchao is None:
        return ConfigError(tr("--precision fp8 needs torchao, which is not installed"),
                           tr("pip install 'dscluster[fp8]' (torchao) on every node, or use --precision auto"),
                           setting="--precision")
    return None


def check(half: str | None = None) -> Fp8Env:
    env = probe(half)
    error = refusal(env)
    if error is not None:
        raise error
    return env


def fp8_eligible(module: nn.Module, fqn: str = "") -> bool:
    """The linear layers whose products float8 can run: every nn.Linear with both sides a multiple of 16
    (the tied output head is F.linear on the embedding, not an nn.Linear, and stays bf16)."""
    return (isinstance(module, nn.Linear) and module.in_features % FP8_DIM_MULTIPLE == 0
            and module.out_features % FP8_DIM_MULTIPLE == 0)


def convert(model: nn.Module) -> int:
    """Swap the eligible linear layers for torchao's float8 training layers, in place (state_dict keys and
    checkpoints stay those of the bf16 model); returns how many were swapped. Before compile_model: the
    casts and scales then fuse into the compiled blocks."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # noqa: PLC0415

    before = sum(isinstance(m, nn.Linear) for m in model.modules())
    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name("tensorwise"),
                               module_filter_fn=fp8_eligible)
    after = sum(type(m) is nn.Linear for m in model.modules())
    return before - after
