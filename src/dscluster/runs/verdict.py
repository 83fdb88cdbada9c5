"""What went wrong with an attempt: the failure the supervisor detected, and its explanation.

The explanation comes from the logs as they stood when the failure was detected (this attempt's rank
logs): the teardown's own SIGTERM/SIGKILL messages must never be taken for the cause. A specific
signature (CUDA OOM, missing module...) beats the supervisor's own view; a generic symptom (a peer
closed the connection) does not beat "the node stopped answering".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dscluster import explain as explainer
from dscluster import fsutil


@dataclass
class Failure:
    kind: str  # rank-failed | node-lost | stalled | exit | unreachable
    detail: str
    node: str | None = None
    explanation: explainer.Explanation | None = None


def explain_failure(failure: Failure, launcher_log: Path, upto: dict[Path, int],
                    attempt_started: float, rank_exit_code: int | None = None,
                    run_id: str = "RUN", restarts_left: bool = True) -> explainer.Explanation | None:
    ranks = []
    for path in upto:
        try:
            if path != launcher_log and path.stat().st_mtime >= attempt_started - 1:
                ranks.append(path)
        except OSError:
            continue
    ranks.sort(key=lambda p: p.stat().st_mtime)
    found = explainer.explain_files([launcher_log, *ranks], upto=upto)
    specific = found if found is not None and found.signature not in explainer.GENERIC else None
    if failure.kind == "node-lost" and specific is None:
        cause = "A node stopped answering: it crashed, lost power, or its network is partitioned."
        if restarts_left:
            return explainer.custom("node-lost", cause, "Check the node (`dscluster doctor`); the run restarts from "
                                    "the last committed checkpoint while restarts remain.", failure.detail)
        return explainer.custom("node-lost", cause, "Check the node (`dscluster doctor`), then `dscluster restart "
                                "{run}` resumes from the last committed checkpoint.", failure.detail, run=run_id)
    if failure.kind == "stalled" and specific is None:
        return explainer.custom("stalled", "The run made no progress (no log or metrics output) for the stall "
                                "timeout: a hang in a collective, a stuck JIT build, or a dead peer.",
                                "Look at `dscluster logs RUN`; raise --stall-timeout if the job is just quiet.",
                                failure.detail)
    if failure.kind in ("rank-failed", "exit") and rank_exit_code not in (None, 0, 255) and \
            (found is None or found.signature == "ssh-255"):
        # A rank exited with its own code and the teardown that followed made pdsh report 255 for the
        # other nodes: that is an effect, never the cause. Name the rank's exit instead.
        if failure.node:
            return explainer.custom(
                "rank-exit", "A training process on {node} exited with code {code}; DeepSpeed's launcher then "
                "stopped the others.", "Read its log: dscluster logs {run} --node {node} (1: an uncaught error, "
                "137: killed, often out of memory, 139: a crash in native code).", failure.detail,
                node=failure.node, code=str(rank_exit_code), run=run_id)
        return explainer.custom(
            "rank-exit", "A training process exited with code {code}; DeepSpeed's launcher then stopped the others.",
            "Read the ranks' logs: dscluster logs {run} (1: an uncaught error, 137: killed, often out of memory, "
            "139: a crash in native code).", failure.detail, code=str(rank_exit_code), run=run_id)
    return found or failure.explanation


_RANK_EXIT = re.compile(r"exits with return code = (-?\d+)|ssh exited with exit code (\d+)|"
                        r"exited on signal (\d+)")


def first_rank_exit_code(launcher_log: Path, upto: dict[Path, int], attempt_line: str) -> int | None:
    """The exit code of the first rank that failed in this attempt, as DeepSpeed's launch.py (or pdsh)
    reported it before the teardown: launch.py SIGKILLs the sibling ranks after the first one fails, so
    the first code is the one that means something. None when the log names none."""
    try:
        text = fsutil.read_bytes(launcher_log, 0, upto.get(launcher_log, 1 << 30)).decode("utf-8", "replace")
    except OSError:
        return None
    start = text.rfind(attempt_line)
    for m in _RANK_EXIT.finditer(text, max(0, start)):
        if m.group(1) is not None:
            code = int(m.group(1))
        elif m.group(2) is not None:
            code = int(m.group(2))
        else:
            code = 128 + int(m.group(3))
        if code != 0:
            return code
    return None


def failed_rank_exit_code(launcher_log: Path, upto: dict[Path, int], attempt_line: str) -> int | None:
    """first_rank_exit_code up to the failure's snapshot, else read on past it: launch.py logs "Killing
    subprocess" (which a failure is often detected on) before the failed rank's "exits with return code
    = N". Past the snapshot only a code the rank set itself counts: the teardown's own signals show as
    negative codes, pdsh's as 255."""
    code = first_rank_exit_code(launcher_log, upto, attempt_line)
    if code is not None:
        return code
    later = first_rank_exit_code(launcher_log, {}, attempt_line)
    return later if later is not None and 0 < later != 255 else None
