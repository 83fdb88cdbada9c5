"""Sampler: a pure function of (seed, step, rank); ranks read disjoint windows; epochs cover everything."""

from __future__ import annotations

import numpy as np
import pytest

from dscluster.data.shards import Split
from dscluster.errors import DataError
from dscluster.train.sampler import FeistelPermutation, WindowSampler, eval_batches


def _split(*lengths: int) -> Split:
    start, shards = 0, []
    for n in lengths:  # token value == its global position: windows are recognisable
        shards.append(np.arange(start, start + n, dtype=np.uint32))
        start += n
    return Split("train", shards)


def _sampler(split, **kw) -> WindowSampler:
    return WindowSampler(split, **{"seq_len": 7, "micro_batch": 2, "grad_accum": 2, "world_size": 3, "seed": 5, **kw})


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64, 1000, 4097])
def test_feistel_is_a_permutation(n):
    assert sorted(FeistelPermutation(n, key=9)(np.arange(n)).tolist()) == list(range(n))


def test_same_inputs_same_batches_and_seed_matters():
    split = _split(5000, 3000)
    a, b = _sampler(split), _sampler(split)
    for step, rank, micro in [(0, 0, 0), (7, 2, 1), (123, 1, 0)]:
        assert np.array_equal(a.batch(step, rank, micro), b.batch(step, rank, micro))
    assert not np.array_equal(a.batch(3, 0, 0), _sampler(split, seed=6).batch(3, 0, 0))


def test_windows_are_contiguous_token_runs():
    s = _sampler(_split(5000, 3000))
    batch = s.batch(4, 1, 1)
    assert batch.shape == (2, 8)
    assert (np.diff(batch, axis=1) == 1).all()  # never spans a shard boundary


def test_ranks_and_micro_batches_of_a_step_are_disjoint_and_an_epoch_covers_all():
    s = _sampler(_split(5000, 3000))
    per_epoch = s.windows_per_epoch()
    steps = per_epoch // s.global_batch
    seen = []
    for step in range(steps):
        starts = {int(s.batch(step, r, m)[i, 0]) for r in range(3) for m in range(2) for i in range(2)}
        assert len(starts) == s.global_batch  # no two ranks/micro batches share a window in a step
        seen += sorted(starts)
    assert len(seen) == len(set(seen))  # and no window repeats within the epoch


def test_next_epoch_shifts_window_boundaries():
    s = _sampler(_split(5000), world_size=1, grad_accum=1, micro_batch=1)
    n = s.windows_per_epoch()
    epoch0 = {int(s.batch(step, 0, 0)[0, 0]) % 8 for step in range(n)}
    epoch1 = {int(s.batch(step, 0, 0)[0, 0]) % 8 for step in range(n, 2 * n)}
    assert epoch0 == {0} and len(epoch1) == 1 and epoch1 != {0}


def test_too_little_data_for_one_global_batch():
    with pytest.raises(DataError, match="fewer than one global batch"):
        _sampler(_split(40))


def test_eval_batches_disjoint_and_equal_count_per_rank():
    split = _split(700, 300)
    per_rank = [list(eval_batches(split, 7, 2, 3, rank, 3)) for rank in range(3)]
    assert len({len(b) for b in per_rank}) == 1 and len(per_rank[0]) == 3
    starts = [int(row[0]) for batches in per_rank for b in batches for row in b]
    assert len(starts) == len(set(starts)) == 18
    assert [b.tolist() for b in eval_batches(split, 7, 2, 3, 1, 3)] == [b.tolist() for b in per_rank[1]]
