"""How a checkpoint's files are written fast and durably, for the synchronous and the asynchronous save:
torch.save without its CRC pass and with pinned copies, writeback that overlaps serialisation, and the
batch a step was saved with (COMMIT.json's `batch`)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

# Copy GPU tensors into pinned host memory while saving (torch.save's use_pinned_memory_for_d2h); measured
# the same as pageable copies on an H200, kept switchable for the benchmark's comparison.
PINNED_D2H = True


def batch_info(engine, world_size: int) -> dict:
    """{"batch": {global, micro, accum, world}} of the engine that saves, for COMMIT.json: a resume on
    another world size keeps this global batch (dscluster.batchplan). Empty when the engine does not say."""
    try:
        micro, accum = int(engine.train_micro_batch_size_per_gpu()), int(engine.gradient_accumulation_steps())
    except (AttributeError, TypeError, ValueError):
        return {}
    return {"batch": {"global": micro * accum * world_size, "micro": micro, "accum": accum, "world": world_size}}


@contextlib.contextmanager
def fast_torch_save() -> Iterator[None]:
    """torch.save without its CRC32 pass and with pinned-memory GPU->CPU copies, for the saves inside.

    The CRC32 is computed single-threaded over every byte and is what bounds torch.save below the disk's
    speed for a multi-GB optimizer state (benchmarks/RESULTS.md); torch.load never verifies it, so
    leaving it out costs no safety. The commit protocol's fsync + COMMIT.json is what makes a save
    trustworthy. Older torch without these settings saves as before.
    """
    try:
        from torch.utils.serialization import config  # noqa: PLC0415
        saved = (config.save.compute_crc32, config.save.use_pinned_memory_for_d2h)
    except (ImportError, AttributeError):
        yield
        return
    config.save.compute_crc32, config.save.use_pinned_memory_for_d2h = False, PINNED_D2H
    try:
        yield
    finally:
        config.save.compute_crc32, config.save.use_pinned_memory_for_d2h = saved


@contextlib.contextmanager
def early_writeback(step_dir: Path, interval_s: float = 0.25) -> Iterator[None]:
    """Keep the disk writing while torch.save is still serialising into the page cache.

    On a machine with plenty of RAM a multi-GB save lands entirely in dirty pages (below the kernel's
    background-writeback threshold), and the disk only starts at the commit's fsync: serialisation
    time + disk time, one after the other. A thread that fdatasyncs the step's files every
    `interval_s` makes them overlap: a 17 GB save went from 43% to 63-72% of the disk's speed, and the
    commit's fsync from ~7 s to 0.1 s (benchmarks/RESULTS.md).
    """
    stop = threading.Event()

    def flush_loop() -> None:
        while not stop.wait(interval_s):
            for path in _files_under(step_dir):
                try:
                    fd = os.open(path, os.O_RDONLY)
                except OSError:
                    continue  # renamed or removed by the writer meanwhile
                try:
                    os.fdatasync(fd)
                except OSError:
                    pass  # a filesystem that cannot sync here: the commit's fsync still covers it
                finally:
                    os.close(fd)

    thread = threading.Thread(target=flush_loop, name="checkpoint-writeback", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _files_under(path: Path) -> list[str]:
    out = []
    for root, _dirs, files in os.walk(path):
        out.extend(os.path.join(root, f) for f in files)
    return out
