"""Why a kernel that needs a Hopper (or newer) GPU and an optional package cannot run here: FlashAttention-4
for `--attention fa4` (train/attention.py), QuACK's GEMMs for `--kernels quack` (train/mlp_kernels.py).
Pure, so the CPU tests check every refusal; each names the setting and the fix."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import torch

from dscluster.errors import ConfigError
from dscluster.i18n import tr

HOPPER = (9, 0)


@dataclass(frozen=True)
class HopperKernel:
    choice: str  # what the user asked for: "--attention fa4"
    setting: str  # the setting it is refused on: "--attention"
    package: str  # the kernels' name: "FlashAttention-4"
    module: str  # what must import: "flash_attn.cute"
    pip: str  # its PyPI name: "flash-attn-4"
    auto: str  # the fallback: "--attention auto"
    older_fix: str  # the fix before Hopper (an English template of the catalog)


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is absent or broken
        return False


def here(kernel: HopperKernel, device_type: str) -> tuple[tuple[int, int] | None, bool]:
    """What `refusal` looks at in this process: the GPU's compute capability (None off CUDA) and whether the
    kernel's package is installed."""
    capability = torch.cuda.get_device_capability() if device_type == "cuda" and torch.cuda.is_available() else None
    return capability, installed(kernel.module)


def refusal(kernel: HopperKernel, device_type: str, capability: tuple[int, int] | None,
            installed: bool) -> ConfigError | None:
    """Why `kernel` cannot run here (on CPU, before Hopper, without its package), or None."""
    if device_type != "cuda":
        return ConfigError(tr("{choice} needs an NVIDIA GPU; this run is on {device}", choice=kernel.choice,
                              device=device_type), tr("use {auto} on CPU", auto=kernel.auto), setting=kernel.setting)
    if capability is None or tuple(capability) < HOPPER:
        shown = ".".join(map(str, capability)) if capability else "?"
        return ConfigError(tr("{choice} needs a Hopper or newer GPU (compute capability 9.0+); this GPU is {cap}",
                              choice=kernel.choice, cap=shown), tr(kernel.older_fix), setting=kernel.setting)
    if not installed:
        return ConfigError(tr("{choice}: {package} ({module}) is not installed", choice=kernel.choice,
                              package=kernel.package, module=kernel.module),
                           tr("install it: pip install 'dscluster[fa4]' (or pip install {pip}), or use {auto}",
                              pip=kernel.pip, auto=kernel.auto), setting=kernel.setting)
    return None
