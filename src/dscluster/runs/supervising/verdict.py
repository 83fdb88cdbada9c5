"""What went wrong with an attempt: the failure the supervisor detected, and its explanation.

The explanation comes from the logs as they stood when the failure was detected (this attempt's rank
logs): the teardown's own SIGTERM/SIGKILL messages must never be taken for the cause. A specific
signature (CUDA OOM, missing module...) beats the supervisor's own view; a generic symptom (a peer
closed the connection) does not beat "the node stopped answering".
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path

from dscluster import explain as explainer
from dscluster import fsutil


@dataclass
class Failure:
    kind: str  # rank-failed | node-lost | stalled | hung-collective | exit | unreachable
    detail: str
    node: str | None = None
    explanation: explainer.Explanation | None = None
    rank: int | None = None  # the rank that died first, when the node's watchdog saw it go
    stacks: str | None = None  # at a stall: the odd rank out (or every group), from runs/views/stacks.py
    stacks_odd: bool = False
    peer: tuple[str, int] | None = None  # (host, rank) of another node's rank that vanished at about the same time

    def peer_rank(self, host: str) -> int | None:
        """The rank the heartbeats saw vanish on `host` at about the failure's time, if that is `peer`'s host."""
        return self.peer[1] if self.peer is not None and self.peer[0] == host else None


# What a signal that killed a rank usually means, and the fix's first step.
SIGNAL_CAUSES = {
    signal.SIGKILL: "the kernel's out-of-memory killer or an operator",
    signal.SIGSEGV: "a crash in native code (a CUDA/C++ extension, or a driver)",
    signal.SIGBUS: "a bus error, often /dev/shm too small for the data loader or the CPU all-reduce buffer",
    signal.SIGABRT: "an abort in native code (a failed assertion, or NCCL/gloo aborting the process)",
    signal.SIGTERM: "a stop from an operator or the system (a scheduler, a shutdown)",
    signal.SIGINT: "an interrupt (Ctrl-C) from a terminal on that node",
}


# Signatures that say why a rank was killed (its own log has no words): they explain a signal better than
# the signal alone does.
KILL_CAUSES = frozenset({"memcg-oom", "dev-shm-full", "cuda-oom", "gpu-hardware", "exit-abort", "aborted",
                         "segfault"})

# Signals a process raises itself as it dies of an error it has already printed (SIGABRT from `terminate`, a
# crash during shutdown), as against one sent from outside (SIGKILL, SIGTERM).
DYING_SIGNALS = frozenset(signal.Signals[name] for name in explainer.AT_EXIT.values())


def _explains_signal(signature: str, sig: int) -> bool:
    """Whether a specific cause found in the logs accounts for the first failing rank's death by `sig`. An
    abort or a crash ends a rank with its own signal only: one seen on another rank (a survivor dying of its
    peer's loss as gloo's thread races its shutdown) does not explain a rank that was SIGKILLed."""
    named = explainer.AT_EXIT.get(signature)
    return signature in KILL_CAUSES and (named is None or named == signal_name(sig))


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def killed_by_signal(rank_exit_code: int | None) -> int | None:
    """The signal number when DeepSpeed's launch.py reported a rank's negative return code (killed by that
    signal, as Python's subprocess reports it), else None."""
    return -rank_exit_code if rank_exit_code is not None and rank_exit_code < 0 else None


def signal_explanation(sig: int, node: str | None, rank: int | None, sim: str | None,
                       run_id: str) -> explainer.Explanation:
    who = f"Rank {rank}" if rank is not None else "A rank"
    where = f" on {node}" if node else ""
    if sim is not None and node:
        show = f"dscluster sim exec{'' if sim == 'default' else f' --name {sim}'} {node} -- dmesg -T | tail -n 20"
    else:
        show = f"on {node or 'the node'}: sudo dmesg -T | grep -iE 'out of memory|killed process'"
    return explainer.custom(
        "rank-signal", "{who}{where} was killed by {sig}: {why}. DeepSpeed's launcher then stopped the others.",
        "See which in the kernel log of that node ({show}); an OOM kill names the process and its memory. "
        "Then lower the memory per rank (micro batch, ZeRO stage, offload) or stop what else runs there.",
        f"{who.lower() if rank is None else who}{where}: exit {-sig} ({signal_name(sig)})",
        who=who, where=where, sig=signal_name(sig), why=SIGNAL_CAUSES.get(sig, "a signal from outside the process"),
        show=show, run=run_id)


def _lost_or_stalled(failure: Failure, run_id: str, restarts_left: bool) -> explainer.Explanation:
    """A node that stopped answering, or a run that stopped progressing, when no log names a cause."""
    if failure.kind == "node-lost":
        cause = "A node stopped answering: it crashed, lost power, or its network is partitioned."
        if restarts_left:
            return explainer.custom("node-lost", cause, "Check the node (`dscluster doctor`); the run restarts from "
                                    "the last committed checkpoint while restarts remain.", failure.detail)
        return explainer.custom("node-lost", cause, "Check the node (`dscluster doctor`), then `dscluster restart "
                                "{run}` resumes from the last committed checkpoint.", failure.detail, run=run_id)
    if failure.kind == "hung-collective":  # runs/supervising/hang.py: the ranks' own progress named the one that hangs them
        own = explainer.explain(failure.detail)
        if own is not None and own.signature == "collective-mismatch":
            return own  # two ranks in different operations at one collective: a restart meets it again
        return explainer.custom("hung-collective", "A collective hung with every process alive: {detail}.",
                                "Look at what that rank does before the collective (dscluster logs {run}); a "
                                "restart resumes from the last committed checkpoint.", failure.detail,
                                detail=failure.detail, run=run_id)
    if failure.stacks and failure.stacks_odd:
        return explainer.custom("stalled-rank", "The run made no progress for the stall timeout, and one group of "
                                "ranks was somewhere the others were not: {odd}. The others waited for it.",
                                "Look at that line (the full stacks: dscluster stacks {run}); raise --stall-timeout "
                                "if it is just slow.", failure.detail, odd=failure.stacks, run=run_id)
    if failure.stacks:
        return explainer.custom("stalled", "The run made no progress for the stall timeout; every rank was in the "
                                "same place: {where}.", "A hang inside that call (a collective whose peer is gone, "
                                "a stuck JIT build): the full stacks: dscluster stacks {run}.", failure.detail,
                                where=failure.stacks, run=run_id)
    return explainer.custom("stalled", "The run made no progress (no log or metrics output) for the stall "
                            "timeout: a hang in a collective, a stuck JIT build, or a dead peer.",
                            "Look at `dscluster logs {run}`; raise --stall-timeout if the job is just quiet.",
                            failure.detail, run=run_id)


def explain_failure(failure: Failure, launcher_log: Path, upto: dict[Path, int],
                    attempt_started: float, rank_exit_code: int | None = None,
                    run_id: str = "RUN", restarts_left: bool = True,
                    sim: str | None = None, since: dict[Path, int] | None = None,
                    nodes: dict[int, str] | None = None) -> explainer.Explanation | None:
    """The attempt's explanation, from its own part of the logs: `since` holds where each log stood when
    it began (an earlier attempt's ending is in the same launcher log). `nodes`: rank -> node name, so a
    rank's own error names its node; the rank the node's watchdog saw go first breaks ties between errors
    with no time stamps."""
    ranks = []
    for path in upto:
        try:
            if path != launcher_log and path.stat().st_mtime >= attempt_started - 1:
                ranks.append(path)
        except OSError:
            continue
    ranks.sort(key=lambda p: p.stat().st_mtime)
    found = explainer.explain_files([launcher_log, *ranks], upto=upto, since=since, nodes=nodes,
                                    hint_rank=failure.rank)
    if found is not None and found.signature == "exit-abort" and failure.kind not in ("rank-failed", "exit"):
        found = None  # a process's dying words: they explain its abort, not a node lost, unreachable or stalled
    specific = found if found is not None and found.signature not in explainer.GENERIC else None
    if specific is not None and failure.kind in ("node-lost", "rank-failed", "exit") and \
            not explainer.rooted(specific) and specific.signature in explainer.NETWORK:
        specific = None  # what the surviving ranks printed about a peer that vanished
    if specific is None and failure.kind in ("node-lost", "stalled", "hung-collective"):
        return _lost_or_stalled(failure, run_id, restarts_left)
    sig = killed_by_signal(rank_exit_code)
    if sig in DYING_SIGNALS and explainer.rooted(found) and (failure.node is None or (found.error or {}).get("node")
                                                             in (None, failure.node)):
        # The rank raised its own error, then aborted or crashed on its way out (gloo's thread racing Python's
        # shutdown): the error is the cause, the signal how the process ended.
        sig = None
    if failure.kind in ("rank-failed", "exit") and sig is not None and (specific is None or (
            not explainer.rooted(specific) and not _explains_signal(specific.signature, sig))):
        # A rank killed by a signal leaves no traceback; its peers' "connection closed" is the effect.
        return signal_explanation(sig, failure.node, failure.rank, sim, run_id)
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


def _shape(text: str) -> str:
    """A failure's words without what changes between two runs of the same failure (pids, ports, addresses,
    times, counts)."""
    return re.sub(r"0x[0-9a-fA-F]+|\d+", "N", text or "").strip()


def failure_key(recorded: dict | None) -> tuple | None:
    """What makes two attempts' failures "the same": the signature and the failing rank's own error (type,
    place, message shape), else the evidence line's shape. None: nothing to compare."""
    if not recorded:
        return None
    err = recorded.get("error") or {}
    if err:
        return recorded.get("signature"), err.get("type"), err.get("where"), _shape(err.get("message", ""))
    return recorded.get("signature"), _shape(recorded.get("evidence", ""))


def futile_restart(previous: dict | None, current: dict | None, progressed: bool) -> bool:
    """Whether restarting after `current` would repeat it: the attempt before failed the same way, and this
    one made no progress in between (no newer committed checkpoint, no higher step)."""
    key = failure_key(current)
    return key is not None and not progressed and key == failure_key(previous)


_RANK_EXIT = re.compile(r"exits with return code = (-?\d+)|ssh exited with exit code (\d+)|"
                        r"exited on signal (\d+)")


def _codes(text: str, start: int) -> list[tuple[str, int]]:
    """(the line's first word, code) of every non-zero rank code from `start` on, in order."""
    out = []
    for m in _RANK_EXIT.finditer(text, max(0, start)):
        if m.group(1) is not None:
            code = int(m.group(1))
        elif m.group(2) is not None:
            code = int(m.group(2))
        else:
            code = 128 + int(m.group(3))
        if code != 0:
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            words = [w.strip() for w in line.split(":")[:2]]
            # pdsh's own lines read "pdsh@HOST: NODE: ssh exited ...", remote output "NODE: ..."
            out.append((words[1] if words[0].startswith("pdsh@") and len(words) > 1 else words[0], code))
    return out


def _attempt_text(launcher_log: Path, upto: dict[Path, int], attempt_line: str) -> tuple[str, int] | None:
    try:
        text = fsutil.read_bytes(launcher_log, 0, upto.get(launcher_log, 1 << 30)).decode("utf-8", "replace")
    except OSError:
        return None
    return text, max(0, text.rfind(attempt_line))


def first_rank_exit_code(launcher_log: Path, upto: dict[Path, int], attempt_line: str) -> int | None:
    """The exit code of the first rank that failed in this attempt, as DeepSpeed's launch.py (or pdsh)
    reported it before the teardown: launch.py SIGKILLs the sibling ranks after the first one fails, so
    the first code is the one that means something. None when the log names none."""
    read = _attempt_text(launcher_log, upto, attempt_line)
    codes = _codes(*read) if read else []
    return codes[0][1] if codes else None


def failed_rank_exit_code(launcher_log: Path, upto: dict[Path, int], attempt_line: str,
                          node: str | None = None) -> int | None:
    """The code of the rank the failure is about: its node's (`node`, a host) launch.py's, when that node
    said one, else first_rank_exit_code up to the failure's snapshot, else read on past it: launch.py logs
    "Killing subprocess" (which a failure is often detected on) before the failed rank's "exits with return
    code = N". Past the snapshot only a code the rank set itself counts: the teardown's own signals show as
    negative codes, pdsh's as 255, except on the failure's own node, whose launch.py logs the failed rank's
    code right after its "Killing subprocess" lines, before any teardown reaches it. Its node first: a
    survivor's launcher may speak first of the connection its dead peer closed (the supervisor names the
    rank that vanished first, from the nodes' heartbeats)."""
    read = _attempt_text(launcher_log, upto, attempt_line)
    seen = _codes(*read) if read else []
    whole = _attempt_text(launcher_log, {}, attempt_line)
    later = _codes(*whole) if whole else []
    if node:
        own = next((c for n, c in seen if n == node), None)
        own = own if own is not None else _node_code(later, node)
        if own is not None:
            return own
    if seen:
        return seen[0][1]
    code = later[0][1] if later else None
    return code if code is not None and 0 < code != 255 else None


def node_rank_code(launcher_log: Path, attempt_line: str, node: str) -> int | None:
    """The non-zero code `node`'s (a host) launch.py has reported so far in this attempt for one of its ranks (pdsh's
    255 is not one), or None: not yet."""
    read = _attempt_text(launcher_log, {}, attempt_line)
    return _node_code(_codes(*read), node) if read else None


def _node_code(codes: list[tuple[str, int]], node: str) -> int | None:
    """The first of `codes` (_codes) that `node`'s launch.py reported, pdsh's 255 for it left out."""
    return next((c for n, c in codes if n == node and c != 255), None)


def outside_kill(launcher_log: Path, upto: dict[Path, int], attempt_line: str) -> tuple[str, int] | None:
    """(host, code) of the first rank a node's launch.py reported killed by a signal from outside (SIGKILL: the
    OOM killer, an operator; SIGTERM: a scheduler), up to the failure's snapshot only: before any teardown, so no
    signal there is the supervisor's own. A signal a dying rank raises itself (an abort) does not count."""
    read = _attempt_text(launcher_log, upto, attempt_line)
    for node, code in _codes(*read) if read else []:
        sig = killed_by_signal(code)
        if sig is not None and sig not in DYING_SIGNALS:
            return node, code
    return None
