"""How the supervisor judges and explains an attempt that failed (the `Judging` part of
runs/supervising/supervisor.Supervisor): the node and rank it failed on, the stacks at a stall, a success it doubts,
the explanation the run records, whether a restart can help, and, before a restart, waiting for lost
nodes or leaving one out; then the run's end, recorded."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time

from dscluster import explain as explainer
from dscluster import trust
from dscluster.cluster.spec import sim_is_up
from dscluster.runs.preparing import diskspace, shrink
from dscluster.runs.records import store
from dscluster.runs.records.record import Attempt
from dscluster.runs.supervising import detect
from dscluster.runs.supervising.channel import NodeChannel
from dscluster.runs.supervising.nodes import node_names, silent_hosts, sim_name, unreachable_hosts
from dscluster.runs.supervising.reaper import reap
from dscluster.runs.supervising.runnerproc import prestart_nodes
from dscluster.runs.supervising.verdict import (
    Failure,
    explain_failure,
    failed_rank_exit_code,
    futile_restart,
    killed_by_signal,
    signal_name,
)
from dscluster.signatures import SIGNATURES


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


class Judging:
    """Mixed into Supervisor: these methods use its record, cfg, runners, hooks and RunBook's writers."""

    def _host_of(self, node: str | None) -> str | None:
        """The hostfile host of a node name (failures name nodes; launcher lines are prefixed by hosts)."""
        return next((h for h, name in node_names(self.record).items() if name == node), node)

    def _dead_rank(self, chans: list[NodeChannel], node: str | None, wait: float = 3.0) -> int | None:
        """The rank that vanished first on the failed node, as its watchdog's heartbeats saw it; None when
        unknown or when several went at the same heartbeat. A rank's death shows in the launcher output
        up to a second before the next heartbeat, so wait for that one."""
        host = self._host_of(node) if node else None
        chan = next((ch for ch in chans if ch.node == host), chans[0] if len(chans) == 1 else None)
        if chan is None:
            return None
        deadline = time.monotonic() + wait
        while chan.first_gone() is None and time.monotonic() < deadline and not chan.closed:
            time.sleep(0.1)
        gone = chan.first_gone()
        return gone[1][0] if gone and len(gone[1]) == 1 else None

    def _take_stacks(self, failure: Failure, n: int) -> None:
        """At a stall, before the teardown: every rank's stack (runs/views/stacks.py), kept in the run directory;
        the odd rank out goes into the failure, for its explanation."""
        from dscluster.runs.views.stacks import take_at_stall

        report, path, seconds, error = take_at_stall(self.run_dir, self.record, self.links, n)
        if report is None:
            self._log(f"stacks at the stall could not be taken: {error}")
            return
        odd = report.odd_one_out()
        failure.stacks = odd.describe(1) if odd else report.summary()
        failure.stacks_odd = odd is not None
        if odd is not None:
            failure.detail += f"; odd one out: {failure.stacks}"
        self._log(f"stacks at the stall ({seconds:.1f}s, {path}): {report.summary()}")
        self.event("stacks", attempt=n, seconds=round(seconds, 2), file=str(path),
                   odd_one_out=odd.describe(1) if odd else None)

    def _doubt_success(self, chans: list[NodeChannel], ranks_ok: int, world: int) -> str | None:
        """Why an exit code 0 of the runner is not a success, or None. DeepSpeed's runner exits 0 when
        the launcher (pdsh, an MPI launcher) dies by a signal, with ranks still running or never finished."""
        # --quiet / --log_level warning and above silence launch.py's "exits successfully" lines: the
        # watchdogs below judge alone then.
        doubt = None if detect.launcher_quiet(self.cfg.runner_flags) else \
            detect.exit_doubt(self.cfg.launcher, ranks_ok, world)
        if doubt:
            return doubt
        # Every node's watchdog must see none of the run's processes left (heartbeats come every second).
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            busy = [ch.node for ch in chans if ch.last_hb is not None and not ch.closed and ch.procs > 0]
            if not busy:
                return None
            time.sleep(0.2)
        return f"the launcher exited 0 while ranks still ran on {', '.join(busy)}"

    def _unreachable_explanation(self) -> explainer.Explanation:
        return explainer.explain_files([self.run_dir / "logs" / "watchdog.log"]) or explainer.custom(
            "node-unreachable", "A node did not answer over SSH, or could not run python there.",
            "Run `dscluster doctor` and fix the node before launching again.")

    def _nodes_down_explanation(self, down: list[str]) -> explainer.Explanation:
        names = node_names(self.record)
        shown = [names.get(h, h) for h in down]
        limit = float(self.cfg.restart_wait)
        sim = sim_name(self.record)
        heal = ""
        if sim is not None:
            heal = "; ".join(sim_heal(sim, n) for n in shown)
            fix = "{heal}, then dscluster restart {run}"
        else:
            fix = ("Bring the node back (power, network) and run `dscluster node start` on it, or remove it from "
                   "the cluster spec; then dscluster restart {run} (it resumes from the last committed checkpoint).")
        return explainer.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the "
                                "run could not restart.", fix, f"unreachable: {', '.join(shown)}", retry=False,
                                nodes=", ".join(shown), limit=f"{limit:.0f}", run=self.record.id,
                                **({"heal": heal} if heal else {}))

    def _rank_node_names(self) -> dict[int, str]:
        """rank -> node name in the current attempt (the hostfile's hosts, shown by their node names)."""
        last = self.record.attempts[-1] if self.record.attempts else None
        names = node_names(self.record)
        return {r: names.get(h, h) for r, h in enumerate(last.rank_nodes)} if last is not None else {}

    def explain_attempt(self, failure: Failure, rank_exit_code: int | None,
                        restarts_left: bool) -> explainer.Explanation | None:
        sim = sim_name(self.record)
        exp = explain_failure(failure, self.log_path, self._failure_logs or self._log_sizes(), self._attempt_started,
                              rank_exit_code, self.record.id, restarts_left, sim=sim, since=self._attempt_logs,
                              nodes=self._rank_node_names())
        save_dir = store.save_dir(self.run_dir, self.record)
        wrote = exp is not None and (exp.signature == "write-failed" or diskspace.failed_write(exp.evidence))
        need = diskspace.last_checkpoint_bytes(save_dir) if wrote else None
        short = diskspace.full_disk(save_dir, self.run_dir, need=need)
        self._log(f"after the failure: {diskspace.mib(diskspace.free_bytes(save_dir))} MiB free for checkpoints"
                  + (f", the last one took {diskspace.mib(need)} MiB" if need else "")
                  + (f"; {exp.signature}" if exp is not None else ""))
        if short or self._disk_full or (exp is not None and exp.signature == diskspace.SIGNATURE):
            # Where it filled, what is free there now, what the last checkpoint took; never restarted into it.
            evidence = exp.evidence if exp is not None and exp.signature == diskspace.SIGNATURE else self._disk_full
            node = ((exp.error or {}).get("node") if exp is not None else None) or failure.node
            full = diskspace.explanation(save_dir, self.record.id, evidence or "", path=str(short) if short else None,
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

    @property
    def links(self) -> dict[str, list[str]]:
        """host -> ssh argv prefix of its runner (the stack sampler's own argv), for the nodes in use."""
        return {h: r.prefix() for h, r in self.runners.items()}

    def wait_for_nodes(self) -> list[str]:
        """Before a restart: wait until every node answers over ssh again (a crashed node reboots, a partition
        heals), at most restart_wait seconds. Returns the hosts still down. Restarting at once would burn
        every restart in seconds on a node that is still down. While a node's sshd gives no banner it is
        asked again every quarter second (cheap: runs/supervising/probe.py), so the next attempt starts within a second
        of the heal; an ssh command then confirms the nodes that were gone (with a backoff while one still
        fails). Nodes whose sshd answered throughout are not asked again: the attempt's own ssh sessions
        (its watchdogs) find a node that cannot run a command (`unreachable`)."""
        self._healed = False  # whether a node that was gone came back (then no pause before the next attempt)
        if not self.runners:
            return []
        limit = float(self.cfg.restart_wait)
        deadline = time.monotonic() + limit
        names = node_names(self.record)
        delay, announced = 1.0, None
        sim = sim_name(self.record)
        gone: set[str] = set()
        while True:
            asked = time.monotonic()
            down = silent_hosts(self.runners, timeout=0.25)
            gone |= set(down)
            quick = bool(down)  # no banner yet: ask again in a quarter second
            down = down or unreachable_hosts({h: r for h, r in self.runners.items() if h in gone})
            if down and sim is not None and not sim_is_up(sim):
                # `sim down` removed the cluster: its nodes never come back (and a later `sim up` at the
                # same addresses is another cluster, not these nodes healed).
                self._log(f"the simulated cluster {sim!r} was removed: not waiting for its nodes")
                return down
            if not down or self._stop_wanted() or time.monotonic() >= deadline:
                if announced and not down:
                    self._log("every node answers again")
                    self._healed = True
                    self._came_back = sorted(gone)
                return down
            shown = [names.get(h, h) for h in down]
            if shown != announced:
                announced = shown
                self._log(f"waiting for {', '.join(shown)} to come back (up to {limit:.0f}s)")
                self.event("waiting", nodes=shown, limit_s=limit)
                self.save(status="restarting", waiting_for=shown)
            # A node that gives no banner was asked for a quarter second: ask again at once.
            pause = 0.25 - (time.monotonic() - asked) if quick else delay
            time.sleep(max(0.0, min(pause, deadline - time.monotonic())))
            delay = delay if quick else min(delay * 2, 10.0)

    def _leave_out_failed_node(self, failure: Failure, n: int) -> None:
        """--allow-shrink with --exclude-unhealthy: the node the attempt failed on is left out of the next
        attempt (a bad node is not given the run again), when others remain."""
        c = self.cfg
        if not self.backend.over_ssh or not (c.allow_shrink and c.exclude_unhealthy and failure.node):
            return
        host = self._host_of(failure.node)
        if host in c.host_names and len(c.host_names) > 1:
            shrink.continue_without(self, [host], n + 1, why=failure.detail)

    # ---- after an attempt: the run ends, or restarts --------------------------------------
    def _ended_without_failure(self, n: int, attempt: Attempt, failure: Failure | None,
                               stopped: bool) -> tuple[int, str] | None:
        """(exit code, status) when attempt `n` ended the run otherwise than by a failure: the backend's
        time limit, a stop, a success; None when it failed."""
        # Asked after every attempt, a clean exit too: a time limit's signals can end the ranks so that the
        # runner exits 0 (seen in CI under load: a batch run cut at --time 1:00 recorded as succeeded).
        timeout = self.hooks.timed_out()
        if timeout is not None:
            self._set_attempt(dataclasses.replace(attempt, reason="time limit"), explanation=timeout.to_dict())
            self.event(f"{self.backend.name}-timeout", attempt=n, job_id=self.hooks.job_id)
            return 1, "failed"
        if stopped:
            self._set_attempt(dataclasses.replace(attempt, reason="stopped"))
            self.event("stopped", attempt=n)
            return 130, "stopped"
        if failure is None:
            self._set_attempt(dataclasses.replace(attempt, reason="succeeded"))
            return 0, "succeeded"
        return None

    def _record_failure(self, n: int, attempt: Attempt, rc: int | None, failure: Failure,
                        max_attempts: int) -> tuple[int, bool]:
        """Explain attempt `n`'s failure and record it (its reason: the first failing rank's own words);
        returns (the run's exit code so far, whether to restart): not when no restart can help, nor for
        the same failure again without progress."""
        # The runner itself was killed by the teardown: the first failing rank's code is the real one.
        rank_rc = failed_rank_exit_code(self.log_path, self._failure_logs or {}, f"attempt {n}: ",
                                        node=self._host_of(failure.node) if failure.node else None)
        exp = self.explain_attempt(failure, rank_rc, restarts_left=n < max_attempts)
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
        now = self._progress()
        progressed, self._reached = now != self._reached, now
        if recorded and recorded.get("error"):
            self.event("rank-error", attempt=n, signature=recorded["signature"], **error_fields(recorded["error"]))
        if recorded and n < max_attempts and not self._stop_wanted():
            # No futile restarts: a failure no restart can fix, or the same failure again without progress.
            if not recorded.get("retry"):
                recorded["no_restart"] = {"why": "cannot-help"}
            elif futile_restart(self._previous, recorded, progressed):
                recorded["no_restart"] = {"why": "same-failure", "previous": n - 1}
            if "no_restart" in recorded:
                self.event("no-restart", attempt=n, **recorded["no_restart"])
                self._log(f"not restarting: {recorded['no_restart']['why']}")
        self._previous = recorded
        # The attempt's code is the run's (the runner's own is -9 when the teardown killed it: not the cause).
        self._set_attempt(dataclasses.replace(attempt, reason=reason, rank_exit_code=rank_rc, exit_code=exit_code,
                                              present=attempt.present | {"rank_exit_code"}),
                          explanation=recorded)
        restart = n < max_attempts and (exp is None or exp.retry) and not (recorded or {}).get("no_restart") \
            and not self._stop_wanted()
        self.set_aside_torn_steps(n)
        return exit_code, bool(restart)

    def _before_restart(self, n: int, failure: Failure) -> str:
        """Between attempt `n` and the next: leave out the failed node where asked, wait for lost nodes (or
        go on without them, --allow-shrink), set torn Hugging Face checkpoints aside. Returns "restarting",
        or the run's status when it ends here ("stopped", "failed": nodes still down)."""
        self.save(status="restarting")
        self._leave_out_failed_node(failure, n)
        self._came_back: list[str] = []
        down = self.wait_for_nodes()
        if self._came_back and self.backend.warm_launch:  # a restarted node lost its warm launch.py: one anew
            prestart_nodes(self.runners, self._came_back, self.cfg.python, self.record.id, n + 1, 60.0)
        if self._stop_wanted():
            self.event("stopped", attempt=n)
            return "stopped"
        if down and self.cfg.allow_shrink and shrink.continue_without(self, down, n + 1):
            down = []
        if down:
            self.save(explanation=self._nodes_down_explanation(down).to_dict(), waiting_for=None)
            return "failed"
        self.save(waiting_for=None)
        self.move_torn_hf_checkpoints(n)
        self._refresh_checkpoint()
        self.event("restart", attempt=n + 1, from_step=self.record.last_checkpoint_step,
                   **({"from_checkpoint": self.record.last_hf_checkpoint} if self.record.last_hf_checkpoint else {}))
        return "restarting"

    def _end(self, status: str, exit_code: int) -> None:
        reap(self.record.id, grace=0.5)  # what is left here: a next attempt's pre-warmed launcher that never ran
        self.hooks.release()
        trust.remove_runner_dir(self.record.id)
        self.save(status=status, exit_code=exit_code, ended=store.now_iso())
        if status in ("succeeded", "stopped"):
            # An earlier attempt's failure is history (its reason stays in attempts), not why the run ended.
            self.save(explanation=None)
        self.event("finished", status=status, exit_code=exit_code)
        with contextlib.suppress(OSError):
            os.unlink(self.run_dir / diskspace.RESERVE)  # the run is over: its reserve goes back to the disk
