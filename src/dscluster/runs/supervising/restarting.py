"""The supervisor's restarting part (`Restarter`): the attempt policy and what a next attempt needs ready.

It owns how many attempts a run gets (`max_attempts`, from --max-restarts), the nodes a next attempt reaches
(`runners`: host -> Runner; a node left out by --allow-shrink leaves it), the next attempt's DeepSpeed runner,
started early so it is imported by the time the attempt begins (runnerproc.py), the launch request of
each attempt (with every node's pre-warmed launch.py while restarts remain: launcher/warm.py), and the wait
between attempts: lost nodes awaited with a backoff (a node that came back gets its warm launch.py anew), or left out (--allow-shrink, --exclude-unhealthy).
What it decides is recorded through the recording part (runbook.py) it is given.
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import time
from collections.abc import Callable, Mapping

from dscluster import fsutil, trust
from dscluster.cluster.spec import sim_is_up
from dscluster.cluster.ssh import CONNECT_TIMEOUT_S, NO_MUX
from dscluster.launcher import warm
from dscluster.launcher.plan import LaunchRequest
from dscluster.runs.preparing import shrink
from dscluster.runs.supervising.judging import nodes_down_explanation
from dscluster.runs.supervising.masters import FIRST_WAIT_S, LATER_WAIT_S, RunMasters, riding_transport
from dscluster.runs.supervising.nodes import (
    node_names,
    node_runners,
    recorded_spec,
    silent_hosts,
    sim_name,
    unreachable_hosts,
)
from dscluster.runs.supervising.runbook import RunBook
from dscluster.runs.supervising.runnerproc import RunnerHold, prestart_nodes, start_cold


def pick_port() -> int:
    """A rendezvous port for one attempt: random, below Linux's ephemeral range (32768+) so outgoing
    connections never hold it, and never DeepSpeed's default 29500 that plain launches use. A clash
    with a listener shows up as EADDRINUSE, which the explainer marks as retryable: the next attempt
    draws another port."""
    while (port := random.SystemRandom().randrange(20000, 32000)) == 29500:
        pass
    return port


LOOP_S = 10.0  # an attempt that failed sooner than this after it started is followed by a second's pause


class Restarter:
    """A run's attempts and the pauses between them (see the module's docstring). `over_ssh`: dscluster
    reaches the nodes itself (else a scheduler does, and there is nothing to wait for or leave out)."""

    def __init__(self, book: RunBook, *, over_ssh: bool, warm_launch: bool, stop_wanted: Callable[[], bool],
                 transport: Callable[[object, tuple[str, ...]], dict[str, str]] | None = None):
        self.book = book
        self._stop_wanted = stop_wanted
        # host -> the Runner that reaches it ({} = this machine); a backend that does not reach the nodes
        # over ssh (a scheduler's) reaches them through its scheduler only.
        self.runners = node_runners(book.record) if over_ssh else {}
        # The run's own ssh master per node, which its attempts' sessions share (masters.py); `transport`:
        # the backend's transport environment for given ssh options (its launcher's sessions ride them too).
        self.masters = RunMasters(recorded_spec(book.record), self.runners, book.record.id) if self.runners else None
        self._transport = transport
        self._over_ssh, self._warm_launch = over_ssh, warm_launch
        self._came_back: list[str] = []  # the hosts the last wait saw come back
        self._hold = RunnerHold()  # the next attempt's DeepSpeed runner, importing (runnerproc.py)
        self._argv: list[str] | None = None  # the last attempt's runner argv (the next one's is the same)
        self.healed = False  # the last wait saw a lost node come back (no pause before the next attempt then)

    @property
    def max_attempts(self) -> int:
        return 1 + int(self.book.cfg.supervision.max_restarts)

    def restarts_left(self, attempt: int) -> bool:
        return attempt < self.max_attempts

    @property
    def links(self) -> dict[str, list[str]]:
        """host -> ssh argv prefix of its runner (the stack sampler's own argv), for the nodes in use."""
        return {h: r.prefix() for h, r in self.runners.items()}

    # ---- starting an attempt -------------------------------------------------------------------
    def connect(self, attempt: int) -> None:
        """Before attempt `attempt`: the run's master on every node that has none (all of them the first time)."""
        if self.masters is not None:
            self.masters.ensure(list(self.runners), FIRST_WAIT_S if attempt == 1 else LATER_WAIT_S)

    def session_runners(self) -> dict:
        """host -> the Runner of the attempt's own sessions there (its watchdog channels): over the run's masters."""
        if self.masters is None or self.masters.path is None:
            return self.runners
        return {h: dataclasses.replace(r, control_path=self.masters.path) if hasattr(r, "control_path") else r
                for h, r in self.runners.items()}

    def _confirming(self, hosts: list[str]) -> dict:
        """host -> the Runner that confirms a node that was gone runs commands again: over the run's new master
        there (opened now, as the next attempt needs it anyway: one key exchange, not two), else on its own."""
        if self.masters is not None and hosts:
            self.masters.ensure(hosts, float(CONNECT_TIMEOUT_S))
        runners = self.session_runners()
        return {h: runners[h] for h in hosts}

    def close(self) -> None:
        """The run ends: its masters go."""
        if self.masters is not None:
            self.masters.close()

    def port(self) -> int:
        """The rendezvous port of an attempt: the user's --master_port, else one drawn for each attempt."""
        return self.book.cfg.runner.master_port or pick_port()

    def request(self, attempt: int, port: int, *, user_env: Mapping[str, str],
                secrets: Mapping[str, str]) -> LaunchRequest:
        """Attempt `attempt`'s launch request. From the record each time: under a scheduler the hosts are recorded
        once the allocation is known."""
        record = self.book.record
        req = record.launch.request(attempt, port, run_id=record.id, run_dir=self.book.run_dir, user_env=user_env,
                                    secrets=secrets, files_dir=trust.runner_dir(record.id))
        if req.transport_env and self.masters is not None and self.masters.path and self._transport is not None:
            # The launcher's ssh sessions ride the run's masters too (recorded: connections of their own). Only
            # the values the ssh options change are replaced; the rest (PATH) stays as recorded at launch.
            spec = self.masters.spec  # the recorded spec, resolved once
            req = dataclasses.replace(req, transport_env=riding_transport(
                req.transport_env, self._transport(spec, tuple(NO_MUX)), self._transport(spec, self.masters.ride_args)))
        # While restarts remain, every node pre-warms its next launch.py (launcher/warm.py); a restart's nodes
        # take theirs ("-": none to pre-warm after the last attempt).
        after, linger = warm.after_seconds(), float(record.launch.supervision.restart_wait) + 30.0
        if self.restarts_left(attempt):
            return dataclasses.replace(req, warm=f"{after}:{linger:.0f}")
        return dataclasses.replace(req, warm="-") if attempt > 1 else req

    def start_runner(self, argv: list[str], *, env: Mapping[str, str], cwd: str, stdout) -> subprocess.Popen:
        """DeepSpeed's runner for an attempt: the one held ready when its argv is the same, else a cold one."""
        self._argv = argv
        return self._hold.take(argv, env=dict(env), cwd=cwd) or start_cold(argv, env=dict(env), cwd=cwd,
                                                                            stdout=stdout)

    def prewarm(self, attempt: int, masked: bool, started: float, *, after: float = 0.0) -> None:
        """Another attempt may follow this one (`started`: its epoch start): its runner starts importing once
        this one has run `after` seconds (as every node's launch.py, launcher/warm.py), or at once when it failed.
        `masked`: the runner's output goes through the secrets' mask (a pipe), not straight to the log."""
        if not self.restarts_left(attempt) or self._argv is None or self._hold.ready() \
                or time.time() - started < after:
            return
        log = None if masked else fsutil.open_append(self.book.log_path)
        try:
            self._hold.start(self._argv, env=dict(os.environ), cwd=self.book.cfg.cwd,
                             stdout=subprocess.PIPE if masked else log)
        finally:
            if log is not None:
                log.close()

    def drop(self) -> None:
        """The run ends: a runner held ready goes."""
        self._hold.drop()

    # ---- between attempts ----------------------------------------------------------------------
    def before_restart(self, n: int, failed_host: str | None, why: str, *, node_lost: bool = False) -> str:
        """Between attempt `n` and the next: leave out the host it failed on where asked (`why`: the failure;
        `node_lost`: the node itself, not a rank, was lost or stalled: its ssh master is replaced),
        wait for lost nodes (or go on without them, --allow-shrink), set torn Hugging Face checkpoints aside.
        Returns "restarting", or the run's status when it ends here ("stopped", "failed": nodes still down)."""
        book = self.book
        book.save(status="restarting")
        if self.masters is not None and failed_host and node_lost:
            self.masters.drop([failed_host])  # the fault may have left its connection dead (masters.py)
        self._leave_out(failed_host, n, why)
        self._came_back = []
        down = self.wait_for_nodes()
        if self._came_back and self._warm_launch:  # a restarted node lost its warm launch.py: one anew
            prestart_nodes(self.session_runners(), self._came_back, book.cfg.python, book.record.id, n + 1, 60.0)
        if self._stop_wanted():
            book.event("stopped", attempt=n)
            return "stopped"
        if down and book.cfg.supervision.allow_shrink and self._continue_without(down, n + 1):
            down = []
        if down:
            book.save(explanation=nodes_down_explanation(book.record, down).to_dict(), waiting_for=None)
            return "failed"
        book.save(waiting_for=None)
        book.move_torn_hf_checkpoints(n)
        book.refresh_checkpoint()
        record = book.record
        book.event("restart", attempt=n + 1, from_step=record.last_checkpoint_step,
                   **({"from_checkpoint": record.last_hf_checkpoint} if record.last_hf_checkpoint else {}))
        return "restarting"

    def pause(self, ran_s: float) -> None:
        """Between attempts: none where a node came back (that was the wait) or the attempt ran LOOP_S seconds
        or more (its teardown is confirmed; a second more is every GPU idle a second more), else a second, so
        an attempt that fails as it starts does not loop at full speed."""
        if not self.healed and ran_s < LOOP_S:
            time.sleep(1.0)

    def _leave_out(self, host: str | None, n: int, why: str) -> None:
        """--allow-shrink with --exclude-unhealthy: the host the attempt failed on is left out of the next
        attempt (a bad node is not given the run again), when others remain."""
        c = self.book.cfg
        if not self._over_ssh or not (c.supervision.allow_shrink and c.exclude_unhealthy and host):
            return
        if host in c.host_names and len(c.host_names) > 1:
            self._continue_without([host], n + 1, why=why)

    def _continue_without(self, hosts: list[str], attempt: int, why: str | None = None) -> bool:
        if not shrink.continue_without(self.book, hosts, attempt, why=why):
            return False
        for host in hosts:
            self.runners.pop(host, None)
        return True

    def wait_for_nodes(self) -> list[str]:
        """Before a restart: wait until every node answers over ssh again (a crashed node reboots, a partition
        heals), at most restart_wait seconds. Returns the hosts still down. Restarting at once would burn
        every restart in seconds on a node that is still down. While a node's sshd gives no banner it is
        asked again every quarter second (cheap: probe.py), so the next attempt starts within a second
        of the heal; an ssh command then confirms the nodes that were gone (with a backoff while one still
        fails). Nodes whose sshd answered throughout are not asked again: the attempt's own ssh sessions
        (its watchdogs) find a node that cannot run a command (`unreachable`)."""
        self.healed = False  # whether a node that was gone came back (then no pause before the next attempt)
        if not self.runners:
            return []
        limit = float(self.book.cfg.supervision.restart_wait)
        deadline = time.monotonic() + limit
        names = node_names(self.book.record)
        delay, announced = 1.0, None
        sim = sim_name(self.book.record)
        gone: set[str] = set()
        asking = dict(self.runners)  # every node first; then only those that were silent (each banner is an sshd
        # child on the node: 32 simulated nodes asked 4 times a second kept 2 cores busy with them alone)
        while True:
            asked = time.monotonic()
            down = silent_hosts(asking, timeout=0.25)
            if self.masters is not None and set(down) - gone:
                self.masters.drop(sorted(set(down) - gone))  # its connection died with the node or the link
            gone |= set(down)
            asking = {h: r for h, r in self.runners.items() if h in gone}
            quick = bool(down)  # no banner yet: ask again in a quarter second
            down = down or unreachable_hosts(self._confirming(list(asking)))
            if down and sim is not None and not sim_is_up(sim):
                # `sim down` removed the cluster: its nodes never come back (and a later `sim up` at the
                # same addresses is another cluster, not these nodes healed).
                self.book.log(f"the simulated cluster {sim!r} was removed: not waiting for its nodes")
                return down
            if not down or self._stop_wanted() or time.monotonic() >= deadline:
                if announced and not down:
                    self.book.log("every node answers again")
                    self.healed = True
                    self._came_back = sorted(gone)
                return down
            shown = [names.get(h, h) for h in down]
            if shown != announced:
                announced = shown
                self.book.log(f"waiting for {', '.join(shown)} to come back (up to {limit:.0f}s)")
                self.book.event("waiting", nodes=shown, limit_s=limit)
                self.book.save(status="restarting", waiting_for=shown)
            # A node that gives no banner was asked for a quarter second: ask again at once.
            pause = 0.25 - (time.monotonic() - asked) if quick else delay
            time.sleep(max(0.0, min(pause, deadline - time.monotonic())))
            delay = delay if quick else min(delay * 2, 10.0)
