"""The supervisor's judging part (`Judge`): what an attempt's observations mean, and what its failure was.

`verdict` turns one `Observation` of watching.py into the attempt's state (running, a clean exit the
nodes must confirm, or a `Failure`), with detect.py's rules in their order of precedence: a failure
line in the launcher output first (it names the rank's node), then the runner's exit, then the nodes (a
collective hung by a live rank among them: hang.py), then the backend's own watch (a scheduler's job), then a
stall. `judge_failure` explains a failed attempt from its own
part of the logs (`AttemptLogs`) and returns a `Judgement`: the reason and exit code the attempt records,
its explanation, and whether a restart can help (not when no restart can fix it, nor for the same failure
again without progress). The Judge reads the record and the logs; it writes only its notes in the launcher
log (`log`); recording a judgement is the supervisor's (through runbook.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dscluster import explain as explainer
from dscluster.runs.preparing import diskspace
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord
from dscluster.runs.supervising import detect, hang
from dscluster.runs.supervising.nodes import node_names, sim_name
from dscluster.runs.supervising.verdict import (
    Failure,
    explain_failure,
    failed_rank_exit_code,
    futile_restart,
    killed_by_signal,
    node_rank_code,
    outside_kill,
    signal_name,
)
from dscluster.runs.supervising.watching import Observation, log_sizes
from dscluster.signatures import SIGNATURES

if TYPE_CHECKING:
    from dscluster.launcher import backends


def error_fields(error: dict) -> dict:
    """A rank error's fields for events.jsonl: the time its log line carries as ISO text under `logged`, as
    every event's own `time` is (an epoch number under `time` would replace the event's time)."""
    import datetime as _dt

    fields = {k: v for k, v in error.items() if k != "time"}
    if isinstance(error.get("time"), int | float):
        fields["logged"] = _dt.datetime.fromtimestamp(error["time"]).astimezone().isoformat(timespec="seconds")
    return fields


def enospc_first(error: dict, full: explainer.Explanation) -> dict:
    """A full disk's first error names the ENOSPC: a writer that reports no errno (torch's zip writer: "enforce
    fail at inline_container.cc ... unexpected pos") shows its words after it, not instead of it."""
    summary = str(error.get("summary") or "")
    if not summary or "no space left" in summary.lower() or "enospc" in summary.lower():
        return error
    where = (full.params or {}).get("path")
    return {**error, "summary": f"No space left on device (ENOSPC){f' in {where}' if where else ''}; "
                               f"the writer said: {summary}"}


def sim_heal(sim: str, node: str) -> str:
    return f"dscluster sim heal{'' if sim == 'default' else f' --name {sim}'} {node}"


@dataclass
class AttemptLogs:
    """Where the run's logs stood for one attempt: when it began (`started`, epoch seconds; `since`: each log's
    size then) and when its failure was found (`at_failure`; None: not yet, read up to now)."""

    started: float
    since: dict[Path, int] = field(default_factory=dict)
    at_failure: dict[Path, int] | None = None


@dataclass(frozen=True)
class Verdict:
    """One observation judged: a `failure`, or `clean_exit` (the runner exited 0 and its output doubts nothing:
    the nodes must still confirm that no rank runs on), or neither (the attempt runs on)."""

    failure: Failure | None = None
    clean_exit: bool = False


@dataclass(frozen=True)
class Judgement:
    """A failed attempt, judged: what the attempt records and whether a restart can help."""

    explanation: explainer.Explanation | None
    recorded: dict | None  # the explanation as run.json records it (its attempt, a `no_restart`)
    reason: str  # the first failing rank's own words, else the failure's
    rank_exit_code: int | None  # the first failing rank's exit code
    exit_code: int  # the run's exit code so far
    restart: bool  # a restart can help (the supervisor also asks whether a stop came meanwhile)


class Judge:
    """Judges one run's attempts (see the module's docstring). `current()`: the run record as it stands;
    `log(text)`: a line of the supervisor's in the launcher log."""

    def __init__(self, current: Callable[[], RunRecord], run_dir: Path, backend: backends.Backend,
                 log: Callable[[str], None]):
        self._current, self._backend, self._log = current, backend, log
        self.run_dir = Path(run_dir)
        self.log_path = self.run_dir / "logs" / "launcher.log"
        self._previous: dict | None = None  # the last attempt's explanation as recorded
        self._reached: tuple | None = None  # how far the run had got then

    def begin(self, progress: tuple) -> None:
        """The run's first attempt starts from `progress` (runbook.py's `progress()`)."""
        self._reached = progress

    # ---- while an attempt runs -------------------------------------------------------------------
    def verdict(self, obs: Observation) -> Verdict:
        record = self._current()
        c = record.launch
        failure = detect.launcher_failure(obs.text, list(c.host_names), node_names(record)) \
            if detect.FAILURE_LINE.search(obs.text) else None
        if failure is None and obs.rc is not None:
            if obs.rc == 0:
                # --quiet / --log_level warning and above silence launch.py's "exits successfully" lines: the
                # watchdogs alone judge then.
                doubt = None if detect.launcher_quiet(c.runner.passed) else \
                    detect.exit_doubt(self._backend, obs.ranks_ok, obs.world)
                return Verdict(Failure("exit", doubt)) if doubt else Verdict(clean_exit=True)
            return Verdict(Failure("exit", f"the DeepSpeed runner exited with {obs.rc}"))
        if failure is None:
            policy = c.supervision
            failure = detect.node_failure(obs.nodes, connect_timeout=policy.connect_timeout,
                                          heartbeat_timeout=policy.heartbeat_timeout) or hang.hung_collective(obs.ranks,
                                                                                                        obs.world)
            if failure is not None and failure.kind == "unreachable":
                failure.explanation = self.unreachable_explanation()
        if failure is None and obs.lost is not None:
            failure = Failure(f"{self._backend.name}-lost", obs.lost.evidence, explanation=obs.lost)
        if failure is None and c.supervision.stall_timeout:
            failure = detect.stall_failure(obs.idle, c.supervision.stall_timeout)
        return Verdict(failure)

    @staticmethod
    def still_busy(busy: list[str]) -> Failure:
        """DeepSpeed's runner exits 0 when its launcher (pdsh, an MPI launcher) dies by a signal: ranks still ran on `busy`."""
        return Failure("exit", f"the launcher exited 0 while ranks still ran on {', '.join(busy)}")

    def host_of(self, node: str | None) -> str | None:
        """The hostfile host of a node name (failures name nodes; launcher lines are prefixed by hosts)."""
        return next((h for h, name in node_names(self._current()).items() if name == node), node)

    def node_name(self, host: str) -> str:
        """The node name of a hostfile host (host_of's inverse)."""
        return node_names(self._current()).get(host, host)

    def unreachable_explanation(self) -> explainer.Explanation:
        return explainer.explain_files([self.run_dir / "logs" / "watchdog.log"]) or explainer.custom(
            "node-unreachable", "A node did not answer over SSH, or could not run python there.",
            "Run `dscluster doctor` and fix the node before launching again.")

    # ---- after an attempt failed ---------------------------------------------------------------
    def judge_failure(self, n: int, failure: Failure, rc: int | None, logs: AttemptLogs, *, last: bool,
                      stopping: bool, progress: tuple, disk_full: str | None = None) -> Judgement:
        """Explain attempt `n`'s failure (`rc`: the runner's exit code; `last`: no restart remains; `stopping`:
        a stop was asked; `progress`: how far the run has got now; `disk_full`: what the supervisor could not
        write for lack of space)."""
        # The runner itself was killed by the teardown: the first failing rank's code is the real one.
        rank_rc = self._rank_code(n, failure, logs)
        said = None  # what the failure's logs say, while the failure and its code are unchanged (read once)
        if failure.peer is not None:
            said = self._explained(failure, rank_rc, logs, restarts_left=not last)
        if failure.peer is not None and not explainer.rooted(said):
            # The failure's rank said only that its peer went (a closed connection), and a rank of another node
            # vanished at about the same time: that rank is the failure.
            failure.node, failure.rank, failure.peer, said = self.node_name(failure.peer[0]), failure.peer[1], None, None
            rank_rc = self._rank_code(n, failure, logs)
        kill = outside_kill(self.log_path, logs.at_failure or {}, f"attempt {n}: ")
        if failure.kind in ("rank-failed", "exit") and kill is not None and kill[0] != self.host_of(failure.node) \
                and kill[0] in self._current().launch.host_names and killed_by_signal(rank_rc) is None \
                and not explainer.rooted(said if said is not None else
                                         self._explained(failure, rank_rc, logs, restarts_left=not last)):
            # Seen on a survivor with no error of its own, while another node's launch.py had already reported a
            # rank killed from outside (before any teardown): that kill is the failure.
            name = self.node_name(kill[0])
            alone = [r for r, node in self._rank_node_names().items() if node == name]  # its node's one rank
            rank = failure.peer_rank(kill[0])
            failure.node, failure.rank = name, rank if rank is not None else alone[0] if len(alone) == 1 else None
            rank_rc = kill[1]
        exp = self.explain_attempt(failure, rank_rc, logs, restarts_left=not last, disk_full=disk_full)
        reason = failure.detail
        if exp is not None and exp.error_line:
            reason = exp.error_line  # the first failing rank's own words, not a launcher line
        if exp is not None and exp.signature == "rank-exit":
            reason = f"exit {rank_rc}" + (f" on {failure.node}" if failure.node else "")
        sig = killed_by_signal(rank_rc)
        if exp is not None and exp.signature == "rank-signal" and sig is not None:
            who = f"rank {failure.rank}" if failure.rank is not None else "a rank"
            reason = f"{who}{f' on {failure.node}' if failure.node else ''} killed by {signal_name(sig)}"
        exit_code = rank_rc if rank_rc and rank_rc > 0 else 128 + sig if sig else (rc if rc and rc > 0 else 1)
        recorded = {**exp.to_dict(), "attempt": n} if exp else None  # whose ending it explains
        progressed, self._reached = progress != self._reached, progress
        if recorded and not last and not stopping:
            # No futile restarts: a failure no restart can fix, or the same failure again without progress.
            if not recorded.get("retry"):
                recorded["no_restart"] = {"why": "cannot-help"}
            elif futile_restart(self._previous, recorded, progressed):
                recorded["no_restart"] = {"why": "same-failure", "previous": n - 1}
        self._previous = recorded
        restart = not last and (exp is None or exp.retry) and not (recorded or {}).get("no_restart") and not stopping
        return Judgement(exp, recorded, reason, rank_rc, exit_code, bool(restart))

    def said_only_a_symptom(self, n: int, failure: Failure, logs: AttemptLogs) -> bool:
        """Whether attempt `n`'s failed rank said only what a peer's loss makes a rank say (a connection closed by
        peer, a collective timed out), with no error or signal of its own: the cause is elsewhere."""
        rank_rc = self._rank_code(n, failure, logs)
        if killed_by_signal(rank_rc) is not None:
            return False
        said = self._explained(failure, rank_rc, logs, restarts_left=True)
        return said is not None and bool((said.error or {}).get("symptom")) and not explainer.rooted(said)

    def await_code(self, n: int, host: str, wait: float) -> bool:
        """Wait up to `wait` seconds for `host`'s launcher to report its rank's exit code in attempt `n`; whether it
        did. DeepSpeed's launch.py polls its ranks once a second, so a survivor's launcher can speak first; a
        teardown before the dead rank's launcher polls leaves no code (its SIGTERM handler prints none), and the
        failure would read as the survivor's symptom (seen in CI)."""
        deadline = time.monotonic() + wait
        while node_rank_code(self.log_path, f"attempt {n}: ", host) is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def _rank_code(self, n: int, failure: Failure, logs: AttemptLogs) -> int | None:
        """The exit code of attempt `n`'s failed rank, as its node's launcher reported it (failed_rank_exit_code)."""
        return failed_rank_exit_code(self.log_path, logs.at_failure or {}, f"attempt {n}: ",
                                     node=self.host_of(failure.node) if failure.node else None)

    def _rank_node_names(self) -> dict[int, str]:
        """rank -> node name in the current attempt (the hostfile's hosts, shown by their node names)."""
        record = self._current()
        last = record.attempts[-1] if record.attempts else None
        names = node_names(record)
        return {r: names.get(h, h) for r, h in enumerate(last.rank_nodes)} if last is not None else {}

    def _explained(self, failure: Failure, rank_exit_code: int | None, logs: AttemptLogs, *,
                   restarts_left: bool) -> explainer.Explanation | None:
        """What the attempt's logs and the failure say (verdict.explain_failure), before the disk is looked at."""
        record = self._current()
        return explain_failure(failure, self.log_path, logs.at_failure or log_sizes(self.run_dir, self.log_path),
                               logs.started, rank_exit_code, record.id, restarts_left, sim=sim_name(record),
                               since=logs.since, nodes=self._rank_node_names())

    def explain_attempt(self, failure: Failure, rank_exit_code: int | None, logs: AttemptLogs, *,
                        restarts_left: bool, disk_full: str | None = None) -> explainer.Explanation | None:
        record = self._current()
        exp = self._explained(failure, rank_exit_code, logs, restarts_left=restarts_left)
        sim = sim_name(record)
        save_dir = store.save_dir(self.run_dir, record)
        wrote = exp is not None and (exp.signature == "write-failed" or diskspace.failed_write(exp.evidence))
        need = diskspace.last_checkpoint_bytes(save_dir) if wrote else None
        short = diskspace.full_disk(save_dir, self.run_dir, need=need)
        self._log(f"after the failure: {diskspace.mib(diskspace.free_bytes(save_dir))} MiB free for checkpoints"
                  + (f", the last one took {diskspace.mib(need)} MiB" if need else "")
                  + (f"; {exp.signature}" if exp is not None else ""))
        if short or disk_full or (exp is not None and exp.signature == diskspace.SIGNATURE):
            # Where it filled, what is free there now, what the last checkpoint took; never restarted into it.
            evidence = exp.evidence if exp is not None and exp.signature == diskspace.SIGNATURE else disk_full
            node = ((exp.error or {}).get("node") if exp is not None else None) or failure.node
            full = diskspace.explanation(save_dir, record.id, evidence or "", path=str(short) if short else None,
                                         shared=self.run_dir.parent.parent, node=node)
            # The rank's own words stay beside it (the attempt's reason, status's "first error"), the ENOSPC first.
            return dataclasses.replace(full, error=enospc_first(exp.error, full)) if exp is not None and exp.error \
                else full
        if exp is not None and exp.signature == "ssh-unreachable" and failure.kind in ("unreachable", "node-lost") \
                and failure.node:  # reachable at the launch's checks, lost since: waited for, restarted once back
            dropped = next(s for s in SIGNATURES if s.name == "ssh-255")
            exp = explainer.custom(dropped.name, dropped.cause, dropped.fix, exp.evidence, True)
        if exp is not None and exp.signature == "ssh-255" and sim is not None and failure.node:
            # On a simulated cluster a node's sshd comes back with `sim heal`, not `node start`.
            exp = explainer.custom("ssh-255", exp.cause, "Check the node with `dscluster doctor`; {heal} brings it "
                                   "back.", exp.evidence, exp.retry, heal=sim_heal(sim, failure.node))
        return exp


def nodes_down_explanation(record: RunRecord, down: list[str]) -> explainer.Explanation:
    """Why the run could not restart: `down` (hosts) did not come back within the launch's restart_wait."""
    names = node_names(record)
    shown = [names.get(h, h) for h in down]
    limit = float(record.launch.supervision.restart_wait)
    sim = sim_name(record)
    heal = ""
    if sim is not None:
        heal = "; ".join(sim_heal(sim, n) for n in shown)
        fix = "{heal}, then dscluster restart {run}"
    else:
        fix = ("Bring the node back (power, network) and run `dscluster node start` on it, or remove it from "
               "the cluster spec; then dscluster restart {run} (it resumes from the last committed checkpoint).")
    return explainer.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the "
                            "run could not restart.", fix, f"unreachable: {', '.join(shown)}", retry=False,
                            nodes=", ".join(shown), limit=f"{limit:.0f}", run=record.id,
                            **({"heal": heal} if heal else {}))
