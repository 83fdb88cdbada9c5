"""What went wrong with an attempt: the failure the supervisor detected, and its explanation.

The explanation comes from the logs as they stood when the failure was detected (this attempt's rank
logs): the teardown's own SIGTERM/SIGKILL messages must never be taken for the cause. A specific
signature (CUDA OOM, missing module...) beats the supervisor's own view; a generic symptom (a peer
closed the connection) does not beat "the node stopped answering".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dscluster import explain as explainer


@dataclass
class Failure:
    kind: str  # rank-failed | node-lost | stalled | exit | unreachable
    detail: str
    node: str | None = None
    explanation: explainer.Explanation | None = None


def explain_failure(failure: Failure, launcher_log: Path, upto: dict[Path, int],
                    attempt_started: float) -> explainer.Explanation | None:
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
        return explainer.custom("node-lost", "A node stopped answering: it crashed, lost power, or its network "
                                "is partitioned.", "Check the node (`dscluster doctor`); the run restarts from "
                                "the last committed checkpoint while restarts remain.", failure.detail)
    if failure.kind == "stalled" and specific is None:
        return explainer.custom("stalled", "The run made no progress (no log or metrics output) for the stall "
                                "timeout: a hang in a collective, a stuck JIT build, or a dead peer.",
                                "Look at `dscluster logs RUN`; raise --stall-timeout if the job is just quiet.",
                                failure.detail)
    return found or failure.explanation
