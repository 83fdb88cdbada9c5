"""The reference GPT's shape without torch: `GPTConfig`, the size presets, the exact parameter count and
the training FLOPs per token. The CLI, `prepare` and the supervisor's disk-space reserve read these before
any rank starts, and importing torch there costs seconds (about 5 s on an H200 host's file system):
train/model.py builds the torch model from them and re-exports them."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dscluster.errors import ConfigError
from dscluster.i18n import tr


@dataclass(frozen=True)
class GPTConfig:
    n_layer: int
    n_head: int
    d_model: int
    vocab_size: int = 257
    seq_len: int = 1024
    ffn_hidden: int = 0  # 0: SwiGLU's 8/3*d rounded up to a multiple of 256 (or 64 for small models)
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    def __post_init__(self):
        for name in ("n_layer", "n_head", "d_model", "vocab_size", "seq_len"):
            if int(getattr(self, name)) <= 0:
                raise ConfigError(tr("model setting {name} must be positive, got {v}", name=name, v=getattr(self, name)),
                                  tr("pass a positive --{flag}", flag=name.replace("_", "-")), setting=name)
        if self.d_model % self.n_head:
            raise ConfigError(tr("--d-model {d} is not divisible by --n-head {h}", d=self.d_model, h=self.n_head),
                              tr("choose --n-head dividing --d-model (head size 64 or 128 is fastest on GPU)"),
                              setting="n_head")
        if (self.d_model // self.n_head) % 2:
            raise ConfigError(tr("head size {hs} is odd; rotary positions need an even head size",
                                 hs=self.d_model // self.n_head),
                              tr("choose --d-model / --n-head even"), setting="n_head")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def padded_vocab(self) -> int:
        return (self.vocab_size + 63) // 64 * 64

    @property
    def hidden(self) -> int:
        if self.ffn_hidden:
            return self.ffn_hidden
        multiple = 256 if self.d_model >= 512 else 64
        return (int(8 * self.d_model / 3) + multiple - 1) // multiple * multiple

    def to_dict(self) -> dict:
        return asdict(self)


# Sizes follow the GPT-3 paper's table (names are the nominal sizes with a GPT-2 vocabulary; with the
# 257-token byte vocabulary the embedding is tiny, so param_count() is what to report).
PRESETS: dict[str, dict] = {
    "tiny": dict(n_layer=4, n_head=4, d_model=128, seq_len=128),
    "124m": dict(n_layer=12, n_head=12, d_model=768, seq_len=1024),
    "350m": dict(n_layer=24, n_head=16, d_model=1024, seq_len=1024),
    "760m": dict(n_layer=24, n_head=16, d_model=1536, seq_len=2048),
    "1.3b": dict(n_layer=24, n_head=16, d_model=2048, seq_len=2048),
    "2.7b": dict(n_layer=32, n_head=32, d_model=2560, seq_len=2048),
    "6.7b": dict(n_layer=32, n_head=32, d_model=4096, seq_len=2048),
}
# Peak learning rates from the same table (smaller models tolerate larger steps).
PRESET_LR = {"tiny": 2e-3, "124m": 6e-4, "350m": 3e-4, "760m": 2.5e-4, "1.3b": 2e-4, "2.7b": 1.6e-4, "6.7b": 1.2e-4}


def preset_config(name: str, **overrides) -> GPTConfig:
    if name not in PRESETS:
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(name, PRESETS, n=1)
        hint = tr("did you mean {m!r}? ", m=close[0]) if close else ""
        raise ConfigError(tr("unknown preset {name!r}", name=name),
                          hint + tr("choose one of: {choices} (or give --n-layer/--n-head/--d-model)",
                                    choices=", ".join(PRESETS)), setting="--preset")
    values = {**PRESETS[name], **{k: v for k, v in overrides.items() if v is not None}}
    return GPTConfig(**values)


def param_count(cfg: GPTConfig, non_embedding: bool = False) -> int:
    """Exact parameter count, computed from shapes (no allocation: safe for 6.7B on a laptop)."""
    d, h, L = cfg.d_model, cfg.hidden, cfg.n_layer
    per_block = 3 * d * d + d * d + 2 * d * h + h * d + 2 * d  # qkv, proj, gate_up, down, 2 norms
    body = L * per_block + d  # + final norm
    return body if non_embedding else body + cfg.padded_vocab * d


def flops_per_token(cfg: GPTConfig, seq_len: int | None = None) -> float:
    """Training FLOPs per token: 6*N + 12*L*d*T (PaLM/nanoGPT convention, as perf_anchors.md §0).

    N counts the non-embedding weights plus the tied output head (vocab x d): the head is a real
    matmul, the embedding lookup is not. T is the sequence length (attention scores and values).
    """
    T = seq_len or cfg.seq_len
    n = param_count(cfg, non_embedding=True) + cfg.padded_vocab * cfg.d_model
    return 6.0 * n + 12.0 * cfg.n_layer * cfg.d_model * T
