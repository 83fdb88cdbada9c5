"""The asynchronous save (`--checkpoint-mode async`, `dscluster.checkpoint.save(..., mode="async")`): training
pauses only while the state is copied to host memory; a thread writes, fsyncs and (rank 0) commits it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr
from dscluster.train.commits import (
    CheckpointError,
    apply_retention,
    commit,
    expected_files_present,
    set_aside_uncommitted,
    tag_for,
)
from dscluster.train.writeback import batch_info, early_writeback, fast_torch_save

WRITTEN_PREFIX = ".written-rank-"
MODES = ("sync", "async")


class _Snapshotting:
    """Stands in for the engine's checkpoint engine during one save_checkpoint: every save(state, path)
    copies the state to host memory and queues it; the rest (create, commit, load, ...) is DeepSpeed's."""

    def __init__(self, inner, pinned: bool):
        self._inner, self._pinned, self.queued = inner, pinned, []

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def save(self, state_dict, path: str):
        self.queued.append((snapshot(state_dict, self._pinned), str(path)))


def snapshot(obj, pinned: bool = False, _memo: dict | None = None):
    """A deep copy of a state dict's tensors in host memory, storage sharing kept (views of one storage stay
    views of one copy, as torch.save would have written them); other values are kept as they are."""
    import torch  # noqa: PLC0415

    memo = {} if _memo is None else _memo
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        key = (storage.data_ptr(), obj.device, storage.nbytes())
        if key not in memo:
            raw = torch.empty(0, dtype=torch.uint8, device=obj.device).set_(storage)
            base = torch.empty(storage.nbytes(), dtype=torch.uint8, pin_memory=pinned and obj.is_cuda)
            base.copy_(raw, non_blocking=obj.is_cuda)
            memo[key] = base
        out = torch.empty(0, dtype=obj.dtype).set_(memo[key].untyped_storage(), obj.storage_offset(), obj.size(),
                                                  obj.stride())
        return out.requires_grad_(False)
    if isinstance(obj, dict):
        try:
            out = obj.__class__()  # OrderedDict stays one
        except TypeError:
            out = {}
        for k, v in obj.items():
            out[k] = snapshot(v, pinned, memo)
        return out
    if isinstance(obj, list):
        return [snapshot(v, pinned, memo) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(snapshot(v, pinned, memo) for v in obj)
    return obj


def state_bytes(engine) -> int:
    """This rank's share of a checkpoint, estimated before the first one exists: the module's parameters
    plus fp32 master weights and two Adam moments, split over the ranks when ZeRO partitions them."""
    import torch.distributed as dist  # noqa: PLC0415

    numel = sum(p.numel() for p in engine.module.parameters())
    elem = next(engine.module.parameters()).element_size() if numel else 4
    world = dist.get_world_size() if dist.is_initialized() else 1
    optim = 12 * numel
    return numel * elem + (optim // world if engine.zero_optimization_stage() > 0 else optim)


def host_memory_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def async_refusal(needed: int, local_ranks: int, available: int | None) -> str | None:
    """Why an asynchronous save would not fit in host memory (None: it fits). Every rank on this node
    holds its own snapshot, and the page cache needs room too: 1.5x the sum is asked for."""
    if available is None:
        return None
    want = int(needed * max(1, local_ranks) * 1.5)
    if want <= available:
        return None
    return tr("an asynchronous checkpoint needs about {need:,.1f} GiB of host memory on this node ({n} ranks), "
              "{have:,.1f} GiB is available: saving synchronously", need=want / 2**30, n=local_ranks,
              have=available / 2**30)


def async_fits(engine, rank: int) -> bool:
    """Every rank's node has the host memory for its ranks' snapshots; all ranks agree (one collective), so
    no rank takes the synchronous path while another takes the asynchronous one. Says why when not."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    local = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("LOCAL_SIZE") or 1)
    why = async_refusal(state_bytes(engine), local, host_memory_available())
    fits = torch.tensor([0 if why else 1], dtype=torch.long, device=engine.device)
    if dist.is_initialized():
        dist.all_reduce(fits, op=dist.ReduceOp.MIN)
    if why and int(os.environ.get("LOCAL_RANK", "0")) == 0:
        print(f"warning: {why}", flush=True)
    elif not fits.item() and rank == 0:
        print("warning: " + tr("another node lacks the host memory for an asynchronous checkpoint: saving "
                               "synchronously"), flush=True)
    return bool(fits.item())


class PendingSave:
    """The background half of one asynchronous save on this rank."""

    def __init__(self, save_dir: Path, step: int, queued: list, *, rank: int, world_size: int, zero_stage: int,
                 keep: int, crash_mid_write: bool = False, batch: dict | None = None):
        self.save_dir, self.step, self.rank, self.world = save_dir, step, rank, world_size
        self.zero_stage, self.keep, self.crash = zero_stage, keep, crash_mid_write
        self.batch = dict(batch or {})
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(queued,), name=f"checkpoint-{tag_for(step)}",
                                       daemon=True)
        self.thread.start()

    def _run(self, queued: list) -> None:
        import torch  # noqa: PLC0415

        try:
            step_dir = self.save_dir / tag_for(self.step)
            with fast_torch_save(), early_writeback(step_dir):
                for i, (state, path) in enumerate(queued):
                    torch.save(state, path)
                    _fsync_file(path)
                    if self.crash and i == 0:
                        print(f"fault injected: crashing while writing {tag_for(self.step)} in the background",
                              flush=True)
                        os._exit(17)
            queued.clear()  # the host copies can go now
            marker = step_dir / f"{WRITTEN_PREFIX}{self.rank}"
            atomic_write_text(marker, str(self.step))
            if self.rank == 0:
                self._commit(step_dir)
        except BaseException as exc:  # noqa: BLE001 - reported on the main thread by wait()
            self.error = exc

    def _commit(self, step_dir: Path) -> None:
        markers = [step_dir / f"{WRITTEN_PREFIX}{r}" for r in range(self.world)]
        while not all(m.exists() for m in markers):
            time.sleep(0.05)  # a rank that died never writes its marker: the run is torn down meanwhile
        for m in markers:
            m.unlink()
        missing = expected_files_present(step_dir, self.zero_stage, self.world)
        if missing:
            raise CheckpointError(tr("checkpoint {tag} is incomplete: {what}; not committed", tag=tag_for(self.step),
                                     what=missing),
                                  tr("check free space and that --save-dir is on storage shared by all nodes"),
                                  setting="--save-dir")
        commit(self.save_dir, self.step, {"world_size": self.world, "zero_stage": self.zero_stage, **self.batch})
        apply_retention(self.save_dir, self.keep)

    def wait(self) -> None:
        self.thread.join()
        if self.error is not None:
            raise self.error


_pending: PendingSave | None = None


def wait_pending() -> int | None:
    """Wait for this rank's save in flight (rank 0: until it is committed); returns its step."""
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return None
    pending.wait()
    return pending.step


def pending_step() -> int | None:
    """The step this rank is writing in the background, if any."""
    return _pending.step if _pending is not None else None


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_async(engine, save_dir: Path, step: int, *, rank: int, world_size: int, zero_stage: int, keep: int,
               client_state: dict, barrier: Callable[[], None], crash_in_save: bool = False) -> None:
    """The asynchronous variant of `save`: returns once the state is in host memory on every rank."""
    global _pending
    import torch  # noqa: PLC0415

    wait_pending()
    if rank == 0:
        set_aside_uncommitted(save_dir, step)
    barrier()
    original = engine.checkpoint_engine
    snap = _Snapshotting(original, pinned=torch.cuda.is_available())
    engine.checkpoint_engine = snap
    try:
        engine.save_checkpoint(str(save_dir), tag=tag_for(step), client_state=client_state, save_latest=False)
    finally:
        engine.checkpoint_engine = original
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # the pinned copies were asynchronous
    _pending = PendingSave(save_dir, step, snap.queued, rank=rank, world_size=world_size, zero_stage=zero_stage,
                           keep=keep, crash_mid_write=crash_in_save, batch=batch_info(engine, world_size))
