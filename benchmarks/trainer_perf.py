"""Staging copy of the trainer's speed options (moves into src/dscluster/train/ once the trainer lands).

Each option wraps the reference GPT from outside, so the model code stays plain:
- compile: `torch.compile` per transformer block (regional: the 24 identical blocks share one compiled
  graph, so compile time does not grow with depth), or of the whole model, with a clean fallback to eager.
- attention: which SDPA kernel family runs (cuDNN / FlashAttention / memory-efficient / math).
- activation checkpointing: recompute each block's forward during backward (less memory, ~1/3 more compute).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch import nn

ATTENTION_BACKENDS = ("auto", "cudnn", "flash", "efficient", "math")


def compile_model(model: nn.Module, mode: str) -> str:
    """Compile in place (state_dict keys unchanged, so checkpoints stay portable). Returns what was done.

    mode: "off", "blocks" (each block compiled; identical blocks reuse the graph), "model" (one graph),
    "auto" (blocks on CUDA when Triton is importable, else off).
    """
    if mode == "off":
        return "off"
    if mode == "auto":
        try:
            import triton  # noqa: F401, PLC0415
        except Exception:  # noqa: BLE001
            return "off (no triton)"
        if not torch.cuda.is_available():
            return "off (no CUDA)"
        mode = "blocks"
    # A frame that fails to compile runs eagerly instead of stopping training: the clean fallback.
    torch._dynamo.config.suppress_errors = True
    # Every micro-batch has one shape; dynamic-shape kernels would be slower for no gain.
    kwargs = {"dynamic": False}
    if mode == "blocks":
        blocks = getattr(model, "blocks", None)
        if blocks is None:
            raise ValueError("compile mode 'blocks' needs a model with .blocks")
        for block in blocks:
            block.compile(**kwargs)
        return "blocks"
    if mode == "model":
        model.compile(**kwargs)
        return "model"
    raise ValueError(f"unknown compile mode {mode!r} (off, blocks, model, auto)")


def sdpa_backends(name: str) -> list:
    from torch.nn.attention import SDPBackend  # noqa: PLC0415

    table = {
        "cudnn": [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION],
        "flash": [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION],
        "efficient": [SDPBackend.EFFICIENT_ATTENTION],
        "math": [SDPBackend.MATH],
    }
    return table[name]


@contextlib.contextmanager
def attention_backend(name: str) -> Iterator[None]:
    """Restrict SDPA to one kernel family (with fallbacks) for the forward and backward inside."""
    if name == "auto" or not torch.cuda.is_available():
        yield
        return
    from torch.nn.attention import sdpa_kernel  # noqa: PLC0415

    with sdpa_kernel(sdpa_backends(name), set_priority=True):
        yield


def checkpoint_blocks(model: nn.Module) -> None:
    """Activation checkpointing per block: keeps only each block's input for backward and recomputes
    the rest. Patches forward on the instance, so state_dict keys (and checkpoints) do not change."""
    import functools  # noqa: PLC0415

    from torch.utils.checkpoint import checkpoint  # noqa: PLC0415

    for block in model.blocks:
        block.forward = functools.partial(checkpoint, block.forward, use_reentrant=False)
