"""TensorBoard event files for the values DeepSpeed's own monitor writes as csv (learning rate, loss
scale, step timers), so the run's TensorBoard shows a user's script with no change to it.

The JupyterLab launcher's TensorBoard reads the whole runs directory (jupyter/serverproxy.py): every
event file under <run>/ is a run there. `dscluster.log` and the reference trainer write theirs from
rank 0 to <run>/tensorboard/ (train/metrics.py); DeepSpeed's csv rows are copied by the supervisor
(runs/records/metrics.py `MonitorBridge`) and written here to <run>/tensorboard/deepspeed/ under the same
`train/<name>` tags, so both lie on one chart per value. DeepSpeed's own TensorBoard monitor is not
used for this: it imports `tensorboard` in every rank and a rank without it fails at initialize.

The supervisor may run as root in a directory the node user writes: the file is created with O_EXCL
by fsutil's no-symlink rule and handed to the node user by its descriptor. Written only when the
`tensorboard` package is importable here (the `tensorboard` extra); without it this does nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path

from dscluster import fsutil

SUBDIR = ("tensorboard", "deepspeed")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND


class EventWriter:
    """Scalars into one TensorBoard event file, created on the first write."""

    def __init__(self, run_dir: Path, owner_uid: int | None = None):
        self.dir = Path(run_dir).joinpath(*SUBDIR)
        self.owner_uid = owner_uid
        self._file = None
        self._record = None  # tensorboard's RecordWriter once the file is open; False: unavailable
        self._proto = None

    def _open(self) -> bool:
        if self._record is not None:
            return bool(self._record)
        try:
            from tensorboard.compat.proto.event_pb2 import Event  # noqa: PLC0415 - the optional extra
            from tensorboard.compat.proto.summary_pb2 import Summary  # noqa: PLC0415
            from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: PLC0415
        except Exception:  # noqa: BLE001 - not installed (or broken): metrics.jsonl still has every value
            self._record = False
            return False
        try:
            owner = self.owner_uid if os.geteuid() == 0 else None
            part = self.dir.parents[len(SUBDIR) - 1]
            for name in SUBDIR:  # the node user's, like the rest: rank 0 writes tensorboard/ too
                part = part / name
                if not part.is_dir():
                    with contextlib.suppress(FileExistsError):
                        fsutil.make_dir(part, 0o755, owner=owner)
            name = f"events.out.tfevents.{time.time():.0f}.{socket.gethostname()}.{os.getpid()}.dscluster-monitor"
            fd = fsutil.open_file(self.dir / name, _CREATE, 0o644)
            if self.owner_uid is not None and os.geteuid() == 0:
                os.fchown(fd, int(self.owner_uid), -1)
        except OSError:
            self._record = False
            return False
        self._file = os.fdopen(fd, "ab")
        self._record = RecordWriter(self._file)
        self._proto = (Event, Summary)
        self._record.write(Event(wall_time=time.time(), file_version="brain.Event:2").SerializeToString())
        return True

    def scalars(self, step: int, values: dict[str, float]) -> None:
        """One event of `train/<name>` scalars at `step`; flushed, so TensorBoard sees it at its next reload."""
        if not values or not self._open():
            return
        event_cls, summary_cls = self._proto
        summary = summary_cls(value=[summary_cls.Value(tag=f"train/{k}", simple_value=float(v))
                                     for k, v in values.items()])
        try:
            self._record.write(event_cls(wall_time=time.time(), step=int(step), summary=summary).SerializeToString())
            self._record.flush()
        except OSError:
            pass  # a full or lost disk: the csv and metrics.jsonl remain

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
