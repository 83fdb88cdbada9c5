"""A run's own ssh connection to each of its nodes (`RunMasters`), which its attempts' sessions share.

Why: every attempt opened two ssh connections per node, each with a whole key exchange: its watchdog
channel (channel.py) and the launcher's session (pdsh's, or an MPI launcher's rsh agent). OpenSSH's default
key exchange (sntrup761x25519) costs about 0.1 s of CPU at each end, so after a fault on 16 simulated nodes
on 2 cores the next attempt's ranks waited about 3 s for 32 handshakes (benchmarks/fault_detect.py; pdsh
running `true` on 16 nodes: 1.7 s on connections of its own, 0.15 s over masters). Issue #46: heal to running
within 5 s.

What: one ControlMaster per node for the run, at its own socket (cluster.ssh.run_control_path), never the
cluster's shared one (a run's teardown must not take other runs' or the user's sessions with it: NO_MUX).
Before each attempt the nodes without one get one, waited for briefly (`ensure`); the attempt's sessions
name the socket with ControlMaster=no (cluster.ssh.ride), so a session that finds no master there (not up
yet, gone after PERSIST_S idle seconds, dropped) connects on its own, as every session did before.
After a failure the node that was lost, unreachable or stalled and every node that went silent lose theirs
(`drop`): a cut link can leave a master waiting on a dead TCP connection, and a session over it would wait with
it; the next attempt opens a fresh one. A master runs in its own session with its stdio on /dev/null (no caller's pipe is held
open by it), ends with the run (`close`), and by itself PERSIST_S seconds after its last session where the
supervisor was killed (its watchdog sessions end when their stdin does).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping

from dscluster.cluster.runner import run_parallel
from dscluster.cluster.ssh import ride, run_control_path, ssh_base_argv

PERSIST_S = 120  # a master outlives its last session this long (the wait for a lost node, a killed supervisor)
FIRST_WAIT_S = 5.0  # before a run's first attempt: every node's master, at most this long
LATER_WAIT_S = 1.0  # before a later one: the few nodes that lost theirs


def riding_transport(recorded: Mapping[str, str], own: Mapping[str, str], riding: Mapping[str, str]) -> dict[str, str]:
    """The launcher's transport environment with its ssh sessions on the run's masters: `recorded` at launch
    (connections of their own), `own` and `riding` the backend's now, for NO_MUX and for the masters' options.
    Only what the options change is taken; the rest (PATH, as the launching user had it) stays as recorded."""
    return {**recorded, **{k: v for k, v in riding.items() if own.get(k) != v}}


class RunMasters:
    """One run's masters (see the module's docstring). `runners`: host -> SSHRunner (the nodes it reaches)."""

    def __init__(self, spec, runners: Mapping, run_id: str):
        self.spec = spec
        self.path = run_control_path(spec, run_id)  # None: sessions connect on their own (NO_MUX)
        self._nodes = {h: r.node_spec for h, r in runners.items() if getattr(r, "node_spec", None) is not None}
        self._sockets: dict[str, str] = {}  # host -> the socket's path, %C expanded by ssh itself
        self._lock = threading.Lock()

    @property
    def ride_args(self) -> tuple[str, ...]:
        """ssh options of the run's sessions: its masters where they are, else connections of their own."""
        return tuple(ride(self.path))

    def _argv(self, host: str, *opts: str) -> list[str]:
        base = ssh_base_argv(self.spec, self._nodes[host])
        return [*base[:-1], "-o", f"ControlPath={self.path}", *opts, "--", base[-1]]

    def socket(self, host: str) -> str | None:
        """The socket of `host`'s master, as ssh expands the ControlPath (`ssh -G`; asked once per host)."""
        with self._lock:
            if host in self._sockets:
                return self._sockets[host]
        try:
            out = subprocess.run(self._argv(host, "-G"), capture_output=True, text=True, timeout=5.0,
                                 stdin=subprocess.DEVNULL).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        path = next((line.split(None, 1)[1].strip() for line in out.splitlines()
                     if line.lower().startswith("controlpath ")), None)
        if path:
            with self._lock:
                self._sockets[host] = path
        return path

    def live(self, host: str) -> bool:
        sock = self.socket(host)
        return bool(sock) and os.path.exists(sock)

    def ensure(self, hosts: Iterable[str], wait: float) -> list[str]:
        """A master for each of `hosts` that has none, waited for at most `wait` seconds in all (in parallel);
        the ones not up by then go on connecting in the background. Returns the hosts with one."""
        if self.path is None:
            return []
        hosts = [h for h in hosts if h in self._nodes]
        run_parallel(self.socket, [h for h in hosts if h not in self._sockets])  # `ssh -G` each, at once
        todo = [h for h in hosts if not self.live(h)]
        procs = []
        for host in todo:
            try:
                procs.append(subprocess.Popen(
                    self._argv(host, "-M", "-N", "-f", "-o", f"ControlPersist={PERSIST_S}s"),
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True))
            except OSError:
                continue
        deadline = time.monotonic() + wait
        for proc in procs:  # `-f`: ssh goes to the background once authenticated (its master listening)
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                threading.Thread(target=proc.wait, name="master-wait", daemon=True).start()  # reaped when done
        return [h for h in hosts if self.live(h)]

    def drop(self, hosts: Iterable[str]) -> None:
        """`hosts` lose their masters (asked to exit; the socket removed where one does not answer), so their
        next sessions never wait on a connection a fault left behind."""
        if self.path is None:
            return

        def one(host: str) -> None:
            sock = self.socket(host)
            if not sock or not os.path.exists(sock):
                return
            try:
                subprocess.run(self._argv(host, "-O", "exit"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=2.0)
            except (OSError, subprocess.SubprocessError):
                pass
            try:
                os.unlink(sock)  # a master that did not answer keeps running, unused, until its keepalives end it
            except OSError:
                pass

        hosts = [h for h in hosts if h in self._nodes]
        if hosts:
            run_parallel(one, hosts)

    def close(self) -> None:
        """The run ends: every master goes."""
        self.drop(list(self._nodes))
