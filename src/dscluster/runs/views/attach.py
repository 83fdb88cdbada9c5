"""Streaming a run's logs with `[node rank]` prefixes: `dscluster logs RUN [-f]` and `launch --attach`.

The attach side simply tails the files in <run>/logs (the supervisor never has to know who watches):
launcher.log (the launcher's and dscluster's own lines) and DeepSpeed's per-rank logs
`<timestamp>_rank<N>.log`, whose node comes from the attempt's rank -> node map in run.json.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from dscluster import fsutil
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord

_RANK_FILE = re.compile(r"_rank(\d+)\.log$")


def rank_of(path: Path) -> int | None:
    m = _RANK_FILE.search(path.name)
    return int(m.group(1)) if m else None


def node_of_rank(record: RunRecord | None, rank: int) -> str:
    for attempt in reversed(record.attempts if record is not None else ()):
        nodes = attempt.rank_nodes
        if rank < len(nodes):
            return nodes[rank]
    return "?"


class LogTail:
    def __init__(self, run_dir: Path, *, rank: int | None = None, node: str | None = None,
                 from_start: bool = True, launcher_lines: bool = True):
        self.run_dir = Path(run_dir)
        self.rank, self.node = rank, node
        self.offsets: dict[Path, int] = {}
        self.from_start = from_start
        self.launcher_lines = launcher_lines and rank is None

    def _files(self, record: RunRecord | None) -> list[tuple[Path, str]]:
        logs = self.run_dir / "logs"
        out = []
        if self.launcher_lines and (logs / "launcher.log").exists():
            out.append((logs / "launcher.log", "[launcher]"))
        for path in sorted(logs.glob("*_rank*.log")):
            r = rank_of(path)
            if r is None or (self.rank is not None and r != self.rank):
                continue
            node = node_of_rank(record, r)
            if self.node is not None and node != self.node:
                continue
            out.append((path, f"[{node} {r}]"))
        return out

    def poll(self, emit: Callable[[str], None]) -> int:
        """Emit complete new lines of every matching file; returns how many."""
        try:
            record = store.read_record(self.run_dir)
        except Exception:  # noqa: BLE001 - a log viewer keeps going while run.json is replaced
            record = None
        count = 0
        for path, prefix in self._files(record):
            if path not in self.offsets:
                self.offsets[path] = 0 if self.from_start else path.stat().st_size
            try:
                data = fsutil.read_bytes(path, self.offsets[path])  # the node user's files: no symlinks
            except OSError:
                continue
            end = data.rfind(b"\n") + 1
            if not end:
                continue
            self.offsets[path] += end
            for line in data[:end].decode("utf-8", "replace").splitlines():
                if self.node is not None and prefix == "[launcher]":
                    continue
                emit(f"{prefix} {line}")
                count += 1
        self.from_start = True  # files that appear later are new: show them whole
        return count


def follow(run_dir: Path, out: TextIO = sys.stdout, *, rank: int | None = None, node: str | None = None,
           follow: bool = True, interval: float = 0.5, should_stop: Callable[[], bool] | None = None) -> RunRecord:
    """Print the logs; with follow, keep printing until the run is finished. Returns the final record."""
    tail = LogTail(run_dir, rank=rank, node=node)

    def emit(line: str) -> None:
        out.write(line + "\n")

    while True:
        tail.poll(emit)
        out.flush()
        record = store.read_record(run_dir)
        if not follow or record.status in store.FINISHED or (should_stop and should_stop()):
            tail.poll(emit)
            out.flush()
            return record
        time.sleep(interval)
