"""The global batch across a change of world size: what a resumed run trains with on N' ranks.

A run saved on W ranks trained with train_batch_size = micro x grad_accum x W. Resumed on W' ranks
with the same ds_config, DeepSpeed would train with micro x grad_accum x W': another global batch,
so another effective learning rate and another loss curve. This module plans the resumed run's
batch keys so the global batch stays what it was:

1. W' divides the old global batch and the old micro batch divides the per-rank share: keep the
   micro batch, change only gradient accumulation (3 -> 2 ranks at micro 4 x accum 2: accum 3);
2. W' divides it but the micro batch does not divide the per-rank share: the largest smaller micro
   batch that does (never a larger one: it may not fit in the GPU's memory), with the accumulation
   that completes it (12 on 2 ranks at micro 4: micro 3 x accum 2). Equal-sized micro batches
   average to the same gradient, so this is the same optimisation step;
3. W' does not divide it: no batch keeps it. The micro batch stays, the accumulation is the one
   whose global batch is nearest the old one, and the plan says so plainly (`kept` is False).

Pure: no torch, no DeepSpeed; the restart (runs/preparing/prepare.py), the supervisor's shrink and the
tests all use the same rules.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from dscluster.i18n import tr

BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


@dataclass(frozen=True)
class Batch:
    """The batch arithmetic of one run: micro batch per rank, accumulation steps, data-parallel ranks."""

    micro: int
    accum: int
    world: int

    @property
    def global_batch(self) -> int:
        return self.micro * self.accum * self.world

    def to_dict(self) -> dict:
        return {"global": self.global_batch, "micro": self.micro, "accum": self.accum, "world": self.world}

    @classmethod
    def from_dict(cls, value: object) -> Batch | None:
        """A recorded batch (COMMIT.json's or a run record's), or None when it is missing or malformed."""
        if not isinstance(value, dict):
            return None
        try:
            micro, accum, world = (int(value[k]) for k in ("micro", "accum", "world"))
        except (KeyError, TypeError, ValueError):
            return None
        return cls(micro, accum, world) if min(micro, accum, world) >= 1 else None

    @classmethod
    def of_config(cls, resolved: dict, world: int) -> Batch:
        """The batch of a ds_config already resolved for `world` ranks (dsconfig.validate's output)."""
        return cls(int(resolved["train_micro_batch_size_per_gpu"]), int(resolved["gradient_accumulation_steps"]),
                   int(world))


@dataclass(frozen=True)
class BatchPlan:
    before: Batch
    after: Batch

    @property
    def kept(self) -> bool:
        return self.after.global_batch == self.before.global_batch

    @property
    def changed(self) -> bool:
        return (self.after.micro, self.after.accum) != (self.before.micro, self.before.accum)

    def to_dict(self) -> dict:
        return {"before": self.before.to_dict(), "after": self.after.to_dict(), "kept": self.kept}

    def describe(self) -> str:
        """One plain sentence: what the resumed run trains with, and why when the batch could not be kept."""
        b, a = self.before, self.after
        if self.kept and not self.changed:
            return tr("global batch {g} kept on {w} ranks (micro batch {m} x gradient accumulation {k})",
                      g=a.global_batch, w=a.world, m=a.micro, k=a.accum)
        if self.kept:
            return tr("global batch {g} kept on {w} ranks instead of {w0}: micro batch {m0} x gradient accumulation "
                      "{k0} -> micro batch {m} x gradient accumulation {k}", g=a.global_batch, w=a.world, w0=b.world,
                      m0=b.micro, k0=b.accum, m=a.micro, k=a.accum)
        return tr("the global batch changes from {g0} to {g}: {w} ranks do not divide {g0} ({g0} / {w} is not a whole "
                  "number), so no micro batch x gradient accumulation keeps it; the resumed run trains with micro "
                  "batch {m} x gradient accumulation {k} x {w} ranks = {g}", g0=b.global_batch, g=a.global_batch,
                  w=a.world, m=a.micro, k=a.accum)


def plan(before: Batch, world: int) -> BatchPlan:
    """The batch for `world` ranks that keeps `before`'s global batch where any does (see the module)."""
    if world < 1:
        raise ValueError("world must be >= 1")
    target = before.global_batch
    if target % world == 0:
        per_rank = target // world
        micro = next(m for m in range(min(before.micro, per_rank), 0, -1) if per_rank % m == 0)
        return BatchPlan(before, Batch(micro, per_rank // micro, world))
    step = before.micro * world  # the global batch grows in these steps with the micro batch kept
    low = max(1, target // step)
    accum = min((low, low + 1), key=lambda k: (abs(k * step - target), -k))
    return BatchPlan(before, Batch(before.micro, accum, world))


def apply(config: dict | None, planned: BatchPlan) -> dict:
    """A copy of `config` (the ds_config the ranks read; None: an empty one) with the three batch keys
    set to the plan, so DeepSpeed derives nothing else from the new world size."""
    out = copy.deepcopy(config) if config else {}
    a = planned.after
    out.update({"train_batch_size": a.global_batch, "train_micro_batch_size_per_gpu": a.micro,
                "gradient_accumulation_steps": a.accum})
    return out


def recorded_batch(commit: dict | None, record) -> Batch | None:
    """The batch the run trained with before the change: the committed step's own (COMMIT.json records
    it, after any --micro-batch-search), else the run record's (a runs.records.record.RunRecord) resolved
    ds_config on its world size, else the reference trainer's default config; None for a script whose
    batch nothing records."""
    found = Batch.from_dict((commit or {}).get("batch"))
    if found is not None:
        return found
    world = record.world_size
    if not isinstance(world, int) or world < 1:
        return None
    config = record.ds_config
    if isinstance(config, dict) and all(isinstance(config.get(k), int) for k in BATCH_KEYS[1:]):
        return Batch.of_config(config, world)
    if config is None and record.launch.reference_trainer:
        from dscluster.train.dssetup import default_config  # noqa: PLC0415 - pure, no torch

        return Batch.of_config(default_config(), world)
    return None
