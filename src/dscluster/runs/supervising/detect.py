"""How the supervisor decides that an attempt failed: pure functions of what it observed.

The supervisor (runs/supervising/supervisor.py) gathers observations: new launcher output, the runner's exit code,
what each node's watchdog channel shows (`NodeView`), how long logs and metrics have not grown. These
functions turn them into a `Failure` (or None), in the supervisor's order of precedence: a failure line
in the launcher output first (it names the rank's node), then the runner's exit, then the nodes, then
a stall. Nothing here waits, reads a file or starts a process, so every rule is unit-tested with made-up
observations.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dscluster.runs.supervising.verdict import Failure

# DeepSpeed's runner exits 0 when pdsh dies by a signal, so 0 alone is not trusted: these lines in the
# launcher output mean a rank (or a node's launch.py) failed, whatever the exit code. DeepSpeed's launch.py
# says so in its own words whichever backend started it; each backend's launcher in its own
# (launcher/backends: `failure_lines`). `FAILURE_LINE` is all of them, for the backends registered now.
LAUNCH_PY_FAILURES = (r"Killing subprocess \d+", r"exits with return code = -?[1-9]\d*")
RANK_OK = re.compile(r"Process \d+ exits successfully")  # launch.py, once per rank that exited 0


def failure_line() -> re.Pattern:
    """launch.py's failure lines and every registered backend's, as one pattern."""
    from dscluster.launcher import backends  # noqa: PLC0415

    return _compiled((*LAUNCH_PY_FAILURES, *backends.failure_lines()))


@functools.cache
def _compiled(lines: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(lines))


def __getattr__(name: str):
    if name == "FAILURE_LINE":  # a module attribute computed when read: a backend registered later counts
        return failure_line()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class NodeView:
    """What one node's watchdog channel shows at a moment."""

    node: str  # the host, as in the hostfile
    started: bool  # a heartbeat came: the watchdog runs there
    closed: bool  # the channel's ssh session (or the local watchdog) ended
    reaped: bool  # the watchdog said it reaped the run's processes (an orderly end, not a loss)
    silent_for: float  # seconds since the last heartbeat (or since the channel started)
    unanswered: bool = False  # during this pause of the heartbeats, the node's sshd gave no banner (runs/supervising/probe.py)
    frozen: tuple[int, ...] = ()  # ranks on the node stopped (SIGSTOP, a debugger) long enough to hang the rest


def host_of_line(text: str, pos: int, hosts: list[str]) -> str | None:
    """The host a launcher output line (the one holding text[pos]) is about: pdsh prefixes
    `pdsh@ITS_HOST: NODE: `, remote output `NODE: `; local lines carry no node (a local run: localhost)."""
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    for word in (w.strip() for w in line.split(":")):
        if word in hosts:
            return word
    return None if hosts else "localhost"


def launcher_failure(text: str, hosts: list[str], names: Mapping[str, str]) -> Failure | None:
    """A failure line in new launcher output, with the node (its spec name) the line is about."""
    hit = failure_line().search(text)
    if hit is None:
        return None
    host = host_of_line(text, hit.start(), hosts)
    return Failure("rank-failed", hit.group(0), names.get(host, host) if host else None)


SUSPECT_AFTER = 1.0  # heartbeats (every 0.25 s) paused this long: the node's sshd is probed


def node_failure(nodes: Sequence[NodeView], *, connect_timeout: float, heartbeat_timeout: float,
                 suspect_after: float = SUSPECT_AFTER) -> Failure | None:
    """The first node that is lost: its watchdog never started (unreachable), or a signal that is certain
    alone, or two that agree. Certain: the session closed without an orderly reap (crashed node, dead sshd),
    a rank stays stopped (its collectives hang every other rank), no heartbeat for heartbeat_timeout. Two
    that agree: the heartbeats paused past `suspect_after` and the node's sshd gave no banner to a fresh
    connection (partition: no connection; frozen node: sshd never writes). A pause alone, on a busy
    machine, is never a loss before heartbeat_timeout."""
    for n in nodes:
        if not n.started:
            if n.closed or n.silent_for > connect_timeout:
                return Failure("unreachable", f"{n.node}: the node's watchdog did not start over ssh", n.node)
            continue
        if n.closed and not n.reaped:
            return Failure("node-lost", f"{n.node}: the connection to the node closed "
                           "(node crashed, or its sshd died)", n.node)
        if n.frozen:
            ranks = ", ".join(map(str, n.frozen))
            return Failure("node-lost", f"{n.node}: rank {ranks} stopped (SIGSTOP or a debugger): "
                           "every other rank waits on it in a collective", n.node)
        if n.silent_for > heartbeat_timeout or (n.silent_for > suspect_after and n.unanswered):
            why = ", and its sshd does not answer" if n.unanswered else ""
            return Failure("node-lost", f"{n.node}: no heartbeat for {n.silent_for:.1f}s{why} "
                           "(network partition or frozen node)", n.node)
    return None


def stall_failure(idle_s: float, stall_timeout: float) -> Failure | None:
    """No growth of logs and metrics for longer than the stall timeout (0: never a stall)."""
    if stall_timeout and idle_s > stall_timeout:
        return Failure("stalled", f"no progress (logs, metrics) for {stall_timeout:.0f}s")
    return None


def exit_doubt(backend, ranks_ok: int, world: int) -> str | None:
    """Why the runner's exit code 0 is not yet a success from its output alone: a backend whose launch.py
    prints one `exits successfully` line per rank (`reports_rank_exits`) with fewer lines than ranks means
    ranks never finished."""
    if backend.reports_rank_exits and ranks_ok < world:
        return f"the launcher exited 0 but only {ranks_ok} of {world} ranks reported success"
    return None


def launcher_quiet(runner_flags) -> bool:
    """Whether the user's runner flags silence launch.py's info lines (`Process N exits successfully`)."""
    return any(f == "--quiet" or f in ("--log_level=warning", "--log_level=error", "--log_level=critical")
               for f in runner_flags or ())
