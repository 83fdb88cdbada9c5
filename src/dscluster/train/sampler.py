"""Deterministic, disjoint training windows: sample (step, rank, micro) -> token window.

The training split is cut into aligned windows of seq_len+1 tokens (per shard, shifted by an
offset that changes every epoch so window boundaries move between epochs). Each epoch visits the
windows in a pseudo-random order given by a keyed Feistel permutation: a bijection on the window
ids that needs O(1) memory, so it works the same for a 10 MB corpus and a 10 TB one.

Global sample number g = step * global_batch + rank * per_rank + micro * micro_batch + i, where
per_rank = micro_batch * grad_accum. A step's global batch is a contiguous range of g, so the ranks
of one step read disjoint windows, and the batch of any step is a pure function of
(seed, step, rank): a resumed run replays exactly the batches it would have seen.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from dscluster.data.shards import Split
from dscluster.errors import DataError
from dscluster.i18n import tr

_MASK32 = np.uint64(0xFFFFFFFF)


def _key(*parts: int) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


class FeistelPermutation:
    """A keyed bijection on range(n) (cycle-walking over a balanced Feistel network on 2^(2h) ids)."""

    ROUNDS = 4

    def __init__(self, n: int, key: int):
        if n <= 0:
            raise ValueError("n must be positive")
        self.n = n
        bits = max(2, (n - 1).bit_length())
        self.half = (bits + 1) // 2
        self.mask = np.uint64((1 << self.half) - 1)
        self.keys = [np.uint64(_key(key, r) & 0xFFFFFFFF) for r in range(self.ROUNDS)]

    def _round(self, x: np.ndarray, k: np.uint64) -> np.ndarray:
        # A cheap integer hash (multiply-xorshift) of the right half, keyed per round.
        h = (x ^ k) * np.uint64(0x9E3779B1) & _MASK32
        h ^= h >> np.uint64(15)
        h = h * np.uint64(0x85EBCA77) & _MASK32
        h ^= h >> np.uint64(13)
        return h & self.mask

    def _encrypt(self, x: np.ndarray) -> np.ndarray:
        left, right = x >> np.uint64(self.half), x & self.mask
        for k in self.keys:
            left, right = right, left ^ self._round(right, k)
        return (left << np.uint64(self.half)) | right

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        x = np.asarray(idx, dtype=np.uint64)
        out = self._encrypt(x)
        # Cycle-walk: re-encrypt values that landed outside range(n); the domain is < 4n, so this ends fast.
        bad = out >= self.n
        while bad.any():
            out[bad] = self._encrypt(out[bad])
            bad = out >= self.n
        return out.astype(np.int64)


@dataclass
class WindowSampler:
    split: Split
    seq_len: int
    micro_batch: int
    grad_accum: int
    world_size: int
    seed: int

    def __post_init__(self):
        self.window = self.seq_len + 1
        self.global_batch = self.micro_batch * self.grad_accum * self.world_size
        self._epoch_cache: dict[int, tuple[np.ndarray, np.ndarray, FeistelPermutation]] = {}
        if self._layout(0)[1][-1] < self.global_batch:
            raise DataError(
                tr("the training split has {tok} tokens: fewer than one global batch of {b} windows of {w} tokens",
                   tok=self.split.tokens, b=self.global_batch, w=self.window),
                tr("use more data, a smaller --seq-len, or a smaller batch in the ds_config"), setting="--data")

    def _layout(self, epoch: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(window counts per shard, cumulative counts with a leading 0, start offset) for an epoch."""
        offset = 0 if epoch == 0 else _key(self.seed, epoch, 1) % self.window
        counts = np.array([max(0, (len(s) - offset) // self.window) for s in self.split.shards], dtype=np.int64)
        return counts, np.concatenate([[0], np.cumsum(counts)]), offset

    def _epoch(self, epoch: int):
        if epoch not in self._epoch_cache:
            _, cum, offset = self._layout(epoch)
            perm = FeistelPermutation(int(cum[-1]), _key(self.seed, epoch, 2))
            self._epoch_cache = {epoch: (cum, offset, perm)}  # keep one epoch: memory stays O(shards)
        return self._epoch_cache[epoch]

    def windows_per_epoch(self) -> int:
        return int(self._layout(0)[1][-1])

    def sample_ids(self, step: int, rank: int, micro: int) -> np.ndarray:
        """Global sample numbers of one micro batch."""
        base = step * self.global_batch + rank * self.micro_batch * self.grad_accum + micro * self.micro_batch
        return np.arange(base, base + self.micro_batch, dtype=np.int64)

    def batch(self, step: int, rank: int, micro: int) -> np.ndarray:
        """(micro_batch, seq_len+1) int64 tokens: inputs are [:, :-1], targets [:, 1:]."""
        ids = self.sample_ids(step, rank, micro)
        n = self.windows_per_epoch()
        out = np.empty((len(ids), self.window), dtype=np.int64)
        for j, g in enumerate(ids):
            epoch, pos = divmod(int(g), n)
            cum, offset, perm = self._epoch(epoch)
            w = int(perm(np.array([pos]))[0])
            shard = int(np.searchsorted(cum, w, side="right") - 1)
            start = offset + (w - int(cum[shard])) * self.window
            out[j] = self.split.shards[shard][start : start + self.window]
        return out

    def window_of(self, g: int) -> tuple[int, int]:
        """(epoch, window id) of global sample g: for tests and debugging."""
        n = self.windows_per_epoch()
        epoch, pos = divmod(int(g), n)
        return epoch, int(self._epoch(epoch)[2](np.array([pos]))[0])


def eval_batches(split: Split, seq_len: int, micro_batch: int, n_batches: int, rank: int, world_size: int):
    """Fixed validation windows spread over the split, disjoint across ranks, the same at every eval.

    Every rank gets the same number of batches of the same sizes, so collectives inside forward
    (ZeRO-3 parameter gathering) stay in lockstep.
    """
    window = seq_len + 1
    windows = [(si, k * window) for si, s in enumerate(split.shards) for k in range(len(s) // window)]
    want = n_batches * micro_batch * world_size
    stride = max(1, len(windows) // max(1, want))
    chosen = windows[::stride][:want]
    per_rank = len(chosen) // world_size
    mine = chosen[rank * per_rank : (rank + 1) * per_rank]
    for b in range(0, len(mine), micro_batch):
        yield np.stack([np.asarray(split.shards[si][o : o + window], dtype=np.int64) for si, o in mine[b : b + micro_batch]])
