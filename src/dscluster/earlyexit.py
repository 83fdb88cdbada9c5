"""A rank that left cleanly while the others still needed it, read in the launcher's own lines.

DeepSpeed's launch.py (deepspeed/launcher/launch.py, main's loop over its processes) and dscluster's local launcher
(launcher/locallaunch.py, Ranks.watch) log `Process PID exits successfully.` when a rank exits 0 and
`[CMD] exits with return code = N` when one fails; `process PID spawned with command: [..., '--local_rank=N', ...]`
names each PID's rank. When a rank exited 0 before any rank failed, and the answer is only what the ones left saw
of a peer that went away (SYMPTOMS: gloo's "Connection closed by peer", a collective's timeout, NCCL's remote
exit, the store gone), that exit is the cause: the ranks ran different numbers of steps or collectives (unevenly
sharded data, a loop bounded per rank, a rank-only evaluation or save that calls a collective, early stopping
decided on one rank). `read(texts)` finds it (explain.explain_logs asks only for those answers); a rank that
raised its own error keeps that error as the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.launchcmd import Finding, finding
from dscluster.logtext import LINE_LIMIT, line_time

SYMPTOMS = frozenset({"gloo-peer-closed", "collective-timeout", "nccl-remote-exit", "store-connection"})
_LEFT = re.compile(r"\bProcess (\d+) exits successfully\.")
_FAILED = re.compile(r"\bexits with return code = -?\d+")
_SPAWNED = re.compile(r"\bprocess (\d+) spawned with command: \[.*?'--local_rank=(\d+)'")


def read(texts: Iterable[str]) -> Finding | None:
    """The first rank that exited 0 before the first rank failed, in any of the launchers' texts; None when none
    did (or no rank failed in these texts: a run stopped from outside)."""
    for text in texts:
        ranks: dict[str, str] = {}
        left: list[tuple[str, float | None, str]] = []  # (pid, time, line) of each rank that exited 0
        for line in text.split("\n"):
            line = line[:LINE_LIMIT]
            if (m := _SPAWNED.search(line)) is not None:
                ranks[m.group(1)] = m.group(2)
            elif (m := _LEFT.search(line)) is not None:
                left.append((m.group(1), line_time(line), line.strip()))
            elif _FAILED.search(line) is not None:
                failed_at = line_time(line)
                # another node's line printed late (a later time stamp) left after the failure
                early = [(pid, said) for pid, t, said in left if t is None or failed_at is None or t <= failed_at]
                if early:
                    return _finding(*early[0], ranks)
                break
    return None


def _finding(pid: str, line: str, ranks: dict[str, str]) -> Finding:
    who = f"local rank {ranks[pid]}" if pid in ranks else "a rank"
    return finding(
        "rank-left-early", "{who} (process {pid}) finished and exited 0 while the other ranks were still running; "
        "they then waited in a collective for it and failed. The ranks ran different numbers of steps or "
        "collectives: unevenly sharded data (a shard or a last batch per rank of its own), a loop bounded per rank, "
        "early stopping decided on one rank, or a collective (a barrier, an all_reduce of a metric, a save) called "
        "by some ranks only after the others had finished.",
        "Give every rank the same number of batches (DistributedSampler, which pads, or drop_last=True; shards of "
        "equal length), decide stopping on every rank together (all_reduce the flag), or wrap uneven inputs in "
        "torch.distributed.algorithms.Join; call every collective on every rank. Read the last lines of the rank "
        "that left: did it stop on purpose? A restart ends the same way.", line, who=who, pid=pid)
