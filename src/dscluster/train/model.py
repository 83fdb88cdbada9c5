"""The reference GPT: pre-norm RMSNorm, rotary positions, SwiGLU MLP, SDPA attention, tied embeddings.

Written for speed on GPU as well as clarity: no host syncs in forward, fused QKV and gate/up
projections, no biases, attention through `scaled_dot_product_attention` (FlashAttention kernels
on GPU), vocabulary padded to a multiple of 64 for tensor cores. Init follows GPT-NeoX:
"small_init" N(0, sqrt(2/(5d))) for inputs and "wang_init" N(0, 2/(L*sqrt(d))) for the projections
that write into the residual stream, which keeps deep models stable without warmup tricks.
"""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F
from torch import nn

from dscluster.train.attention import sdpa_attention
from dscluster.train.config import (  # noqa: F401 - torch-free, re-exported: callers import them from here
    PRESET_LR,
    PRESETS,
    GPTConfig,
    flops_per_token,
    param_count,
    preset_config,
)
from dscluster.train.kernels import rotary_qkv_reference, silu_mul_reference
from dscluster.train.norm_kernels import add_rms_norm_reference


class Rotary(nn.Module):
    """Precomputed cos/sin tables (non-persistent buffers: rebuilt, never checkpointed), shaped for the
    projection's own (B, T, H, hd) layout."""

    def __init__(self, head_dim: int, seq_len: int, theta: float):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        t = torch.arange(seq_len, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        self.register_buffer("cos", freqs.cos()[None, :, None], persistent=False)  # (1,T,1,hd/2)
        self.register_buffer("sin", freqs.sin()[None, :, None], persistent=False)

    def tables(self, T: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin (T, hd/2), fp32: what the fused rotary of the QKV output takes."""
        return self.cos[0, :T, 0], self.sin[0, :T, 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, T, H, hd)
        T = x.shape[1]
        cos, sin = self.cos[:, :T].to(x.dtype), self.sin[:, :T].to(x.dtype)
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Attention(nn.Module):
    """Rotary runs on q and k in the QKV projection's own (B, T, H, hd) layout (`rotary_qkv`: PyTorch's
    expression, or the hand-written kernel that perf.use_kernels swaps in) and attention takes that layout
    too (train/attention.py: SDPA on transposed views, or FlashAttention-4 natively), so no element-wise
    kernel transposes q, k, v or the output, forward or backward. Measured on
    an H200 (benchmarks/RESULTS.md) against permuting to (B, H, T, hd) first: about 1% faster in bf16 and
    3% with FP8 at 1.3B."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.head_dim = cfg.n_head, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.proj.residual_out = True
        self.rotary_qkv = rotary_qkv_reference  # perf.use_kernels swaps in the hand-written GPU kernel
        self.attend = sdpa_attention  # attention.use_attention swaps in FlashAttention-4 (--attention fa4)
        # Both at once, from the projection's output (the rotary kernel and FA4 as one op), when set.
        self.attend_qkv = None

    def forward(self, x: torch.Tensor, rotary: Rotary) -> torch.Tensor:
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_head, self.head_dim)
        if self.attend_qkv is not None:
            y = self.attend_qkv(qkv, *rotary.tables(T))
        else:
            y = self.attend(*self.rotary_qkv(qkv, *rotary.tables(T)))
        return self.proj(y.reshape(B, T, C))


class SwiGLU(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.hidden = cfg.hidden
        self.gate_up = nn.Linear(cfg.d_model, 2 * cfg.hidden, bias=False)
        self.down = nn.Linear(cfg.hidden, cfg.d_model, bias=False)
        self.down.residual_out = True
        self.silu_mul = silu_mul_reference  # perf.use_kernels swaps in the hand-written GPU kernel
        # perf.use_kernels can swap in the whole MLP as one op on the two weights (train/mlp_kernels.py)
        self.mlp_op = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mlp_op is not None:
            return self.mlp_op(x, self.gate_up.weight, self.down.weight)
        return self.down(self.silu_mul(self.gate_up(x), self.hidden))


class AddRMSNorm(nn.RMSNorm):
    """The residual add and the RMSNorm after it in one call: `norm(x, residual)` returns the new residual
    stream x + residual and its norm; `norm(x)` (residual None) returns x and its norm. An nn.RMSNorm, so
    the weight, its state_dict key and its initialisation are the plain norm's; called as a module, so
    ZeRO-3's hooks gather the weight. `add_rms_norm` is PyTorch's expression (F.rms_norm, as nn.RMSNorm
    runs it), or the hand-written kernel that perf.use_kernels swaps in (train/norm_kernels.py)."""

    def __init__(self, d_model: int, eps: float):
        super().__init__(d_model, eps=eps)
        self.add_rms_norm = add_rms_norm_reference

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.add_rms_norm(x, residual, self.weight, self.eps)


class Block(nn.Module):
    """Pre-norm: x + attn(norm1(x)), then + mlp(norm2(.)). The block's last residual add is left to the
    next block (or the final norm), where it runs in one kernel with that block's first norm: a block
    takes the residual stream and the previous block's unsummed MLP output (None in the first block) and
    returns its own pair, so every add meets the norm that reads its result."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.norm1 = AddRMSNorm(cfg.d_model, eps=cfg.norm_eps)
        self.attn = Attention(cfg)
        self.norm2 = AddRMSNorm(cfg.d_model, eps=cfg.norm_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x: torch.Tensor, branch: torch.Tensor | None, rotary: Rotary) -> tuple[torch.Tensor,
                                                                                               torch.Tensor]:
        """(x, branch) -> (x + branch + attn(.), mlp(.)): the residual stream so far and the MLP's output."""
        x, h = self.norm1(x, branch)
        x, h = self.norm2(x, self.attn(h, rotary))
        return x, self.mlp(h)


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.padded_vocab, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = AddRMSNorm(cfg.d_model, eps=cfg.norm_eps)
        self.rotary = Rotary(cfg.head_dim, cfg.seq_len, cfg.rope_theta)
        self.ce_kernel = ce_sum_and_grad  # perf.compile_model swaps in a compiled copy
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self, gather=None) -> None:
        """Initialise every weight. `gather(params)` is a context manager that makes partitioned
        parameters whole while they are written (deepspeed.zero.GatheredParameters under ZeRO-3)."""
        if self.embed.weight.is_meta:
            return  # shape-only model (parameter counting); nothing to initialise
        small = math.sqrt(2.0 / (5 * self.cfg.d_model))
        wang = 2.0 / (self.cfg.n_layer * math.sqrt(self.cfg.d_model))
        for module in self.modules():
            params = list(module.parameters(recurse=False))
            if not params:
                continue
            with gather(params) if gather else contextlib.nullcontext():
                if isinstance(module, nn.Linear):
                    nn.init.normal_(module.weight, std=wang if getattr(module, "residual_out", False) else small)
                elif isinstance(module, nn.Embedding):
                    nn.init.normal_(module.weight, std=small)
                elif isinstance(module, nn.RMSNorm):
                    nn.init.ones_(module.weight)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """Returns the mean cross-entropy when `targets` is given, else the logits of the last position."""
        x, branch = self.embed(idx), None
        for block in self.blocks:
            x, branch = block(x, branch, self.rotary)
        _, x = self.norm(x, branch)  # the last block's residual add and the final norm
        if targets is None:
            return F.linear(x[:, -1:], self.embed.weight)[:, -1, : self.cfg.vocab_size]
        if self.cfg.padded_vocab >= CHUNKED_CE_MIN_VOCAB:
            return chunked_cross_entropy(x, self.embed.weight, targets, kernel=self.ce_kernel)
        logits = F.linear(x, self.embed.weight)  # tied: the embedding is the output head
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, new_tokens: int, temperature: float = 0.8, top_k: int = 40,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Sample `new_tokens` tokens (no KV cache: simple, and fast enough for a short sample)."""
        with shape_agnostic_attention():
            for _ in range(new_tokens):
                logits = self(idx[:, -self.cfg.seq_len:]).float() / max(temperature, 1e-5)
                if top_k:
                    kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
                    logits = logits.masked_fill(logits < kth, float("-inf"))
                probs = torch.softmax(logits, dim=-1)
                nxt = torch.multinomial(probs.cpu(), 1, generator=generator).to(idx.device)
                idx = torch.cat([idx, nxt], dim=1)
        return idx


def shape_agnostic_attention():
    """SDPA without cuDNN: each generated token is a new sequence length, and cuDNN builds an execution
    plan for every new shape (about 50 ms each on an H200: a 200-token sample took 10 s instead of well
    under one). FlashAttention and the memory-efficient kernels have no per-shape setup."""
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


# From this vocabulary size on, the loss is computed in chunks of rows (a 50K-token vocabulary at
# micro-batch 16 x 2048 would otherwise hold 6.6 GB of fp32 logits, plus their gradient).
CHUNKED_CE_MIN_VOCAB = 8192
CE_CHUNK_ROWS = 8192


def chunked_cross_entropy(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                          chunk_rows: int = CE_CHUNK_ROWS, kernel=None) -> torch.Tensor:
    """Mean cross-entropy of `x @ weight.T` without ever holding all the logits.

    With gradients on, the fused path: each chunk's logits give its loss and, in the same pass, its
    gradient (softmax - one-hot), which goes straight into dx and dW; backward only scales them. So the
    output-head GEMM runs three times per chunk (logits, dx, dW), as an unfused head does, instead of
    four with recomputation. `kernel` is the per-chunk loss-and-gradient function (the compiled one
    when the trainer compiles the model, see perf.compile_model).
    """
    rows, labels = x.reshape(-1, x.size(-1)), targets.reshape(-1)
    kernel = kernel or ce_sum_and_grad
    if torch.is_grad_enabled() and (rows.requires_grad or weight.requires_grad):
        total = _LinearCrossEntropy.apply(rows, weight, labels, chunk_rows, kernel)
    else:
        total = sum(F.cross_entropy(F.linear(rows[i:i + chunk_rows], weight).float(), labels[i:i + chunk_rows],
                                    reduction="sum") for i in range(0, rows.size(0), chunk_rows))
    return total / labels.numel()


def ce_sum_and_grad(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed cross-entropy of one chunk of logits, and its gradient (softmax - one-hot) in the
    logits' dtype. The softmax runs in fp32, as F.cross_entropy(logits.float()) would."""
    lf = logits.to(torch.promote_types(logits.dtype, torch.float32))
    lse = torch.logsumexp(lf, dim=-1, keepdim=True)
    loss = (lse.squeeze(-1) - lf.gather(-1, targets[:, None]).squeeze(-1)).sum()
    grad = (lf - lse).exp()
    grad = grad - F.one_hot(targets, lf.size(-1)).to(grad.dtype)
    return loss, grad.to(logits.dtype)


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, targets, chunk_rows, kernel):
        grad_x = torch.empty_like(x)
        acc = torch.promote_types(weight.dtype, torch.float32)
        grad_w = torch.zeros(weight.shape, dtype=acc, device=weight.device)
        total = torch.zeros((), dtype=acc, device=x.device)
        for i in range(0, x.size(0), chunk_rows):
            xc = x[i:i + chunk_rows]
            loss, grad_logits = kernel(F.linear(xc, weight), targets[i:i + chunk_rows])
            total += loss
            torch.mm(grad_logits, weight, out=grad_x[i:i + chunk_rows])
            grad_w += grad_logits.t().mm(xc)  # accumulated over chunks in (at least) fp32
        ctx.save_for_backward(grad_x, grad_w.to(weight.dtype))
        return total

    @staticmethod
    def backward(ctx, grad_total):
        grad_x, grad_w = ctx.saved_tensors
        return grad_x * grad_total.to(grad_x.dtype), grad_w * grad_total.to(grad_w.dtype), None, None, None
