"""`up` and `down`: the node container on every host, all or nothing.

up: (1) preflight every host in parallel and stop on ANY problem, naming the host and the fix,
before anything is started; (2) publish the cluster public key on the shared storage through the
master host and check every host sees the same key (proves the storage really is shared);
(3) start the containers in parallel; (4) wait for each node's sshd to listen. If any host fails at
(3) or (4), the containers already started are removed again, so a failed `up` leaves no half cluster.

Everything goes through Runners (one per host), so the unit tests drive it with fakes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dscluster.cluster.runner import CommandResult, Runner, run_parallel
from dscluster.cluster.spec import ClusterSpec, NodeSpec, format_spec
from dscluster.deploy import dockerrun, hosts
from dscluster.deploy.hosts import HostFacts, Problem
from dscluster.errors import ClusterError
from dscluster.i18n import tr

RUN_TIMEOUT_S = 120.0  # docker run returns once the container is created and started
VERIFY_TIMEOUT_S = 30.0


@dataclass
class UpReport:
    facts: list[HostFacts] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    failed: list[Problem] = field(default_factory=list)
    # The interpreter in the image (its io.dscluster.python label, as the master's host reports it): what
    # a launch from outside the containers must run on the nodes. "" for an image without the label.
    python: str = ""
    node_uid: int | None = None  # the image's node UID (its io.dscluster.node-uid label), as for python

    @property
    def ok(self) -> bool:
        return not self.problems and not self.failed


class UpFailed(ClusterError):
    """`up` stopped; `report` says which hosts failed, why, and what was rolled back."""

    def __init__(self, message: str, hint: str, report: UpReport):
        super().__init__(message, hint)
        self.report = report


RunnerFactory = Callable[[NodeSpec], Runner]


def preflight(spec: ClusterSpec, opts: dockerrun.DeployOptions, runner_for: RunnerFactory) -> UpReport:
    def probe(node: NodeSpec) -> HostFacts:
        result = runner_for(node).run(hosts.preflight_argv(spec, node, opts), timeout=hosts.CONNECT_TIMEOUT_S + 30)
        return hosts.parse_facts(result, opts.engine)

    report = UpReport(facts=run_parallel(probe, spec.nodes))
    for node, facts in zip(spec.nodes, report.facts):
        report.problems += hosts.host_problems(spec, node, opts, facts)
    report.python = report.facts[0].image_python if report.facts else ""
    uid = report.facts[0].image_uid if report.facts else ""
    report.node_uid = int(uid) if uid.isdigit() else None
    return report


def publish_shared(spec: ClusterSpec, pubkey: str, runner_for: RunnerFactory) -> list[Problem]:
    """Write cluster.pub and the spec (for the master's node user) through the master, then read the
    key back on every host."""
    master = runner_for(spec.master)
    wrote = master.run(hosts.pubkey_write_argv(spec), input=pubkey.strip() + "\n", timeout=30)
    if wrote.ok:
        published = replace(spec, state_dir=None, path=None)  # nothing of the controller's own paths
        wrote = master.run(hosts.spec_write_argv(spec), input=format_spec(published), timeout=30)
    if not wrote.ok:
        return [Problem(spec.master.name, tr("cannot write the cluster key to {path} on {host}: {err}",
                                             path=spec.shared_dir, host=spec.master.address,
                                             err=_tail(wrote)),
                        tr("let your login on {host} write {path}/.dscluster (or create it as root, mode 0755)",
                           host=spec.master.address, path=spec.shared_dir))]

    def check(node: NodeSpec) -> Problem | None:
        seen = runner_for(node).run(hosts.pubkey_read_argv(spec), timeout=30)
        if seen.ok and seen.stdout.strip() == pubkey.strip():
            return None
        return Problem(node.name, tr("{host} does not see the cluster key written on {master}: {path} is not the "
                                     "same storage there", host=node.address, master=spec.master.address,
                                     path=spec.shared_dir),
                       tr("mount the same shared export at {path} on every host", path=spec.shared_dir))

    return [p for p in run_parallel(check, spec.nodes) if p]


def _tail(result: CommandResult, lines: int = 3) -> str:
    text = (result.stderr or result.stdout or "").strip().splitlines()
    return " | ".join(text[-lines:]) if text else (tr("timed out") if result.timed_out else f"exit {result.returncode}")


def start_all(spec: ClusterSpec, opts: dockerrun.DeployOptions, runner_for: RunnerFactory, report: UpReport,
              *, verify_timeout: float = VERIFY_TIMEOUT_S, sleep: Callable[[float], None] = time.sleep) -> UpReport:
    """Start every container; on any failure remove the ones that started. Mutates and returns `report`."""
    facts_by_name = {n.name: f for n, f in zip(spec.nodes, report.facts)}

    def start(node: NodeSpec) -> Problem | None:
        facts = facts_by_name.get(node.name)
        argv = dockerrun.docker_run_argv(spec, node, opts, has_infiniband=bool(facts and facts.infiniband))
        result = runner_for(node).run(argv, timeout=RUN_TIMEOUT_S)
        if result.ok:
            return None
        return Problem(node.name, tr("{engine} run failed on {host}: {err}", engine=opts.engine, host=node.address,
                                     err=_tail(result)),
                       tr("read the error above; the other hosts were rolled back"))

    outcomes = run_parallel(start, spec.nodes)
    report.started = [n.name for n, o in zip(spec.nodes, outcomes) if o is None]
    report.failed = [o for o in outcomes if o]
    if not report.failed:
        report.failed = verify(spec, runner_for, timeout=verify_timeout, sleep=sleep, engine=opts.engine)
    if report.failed:
        report.rolled_back = rollback(spec, [n for n in spec.nodes if n.name in report.started], runner_for,
                                      engine=opts.engine)
    return report


def verify(spec: ClusterSpec, runner_for: RunnerFactory, *, timeout: float,
           sleep: Callable[[float], None] = time.sleep, engine: str = "docker") -> list[Problem]:
    """Wait until every node's sshd listens on its port; a node that does not gets its log tail."""
    pending = {n.name: n for n in spec.nodes}
    deadline = time.monotonic() + timeout
    while pending:
        listening = run_parallel(lambda n: runner_for(n).run(hosts.port_listening_argv(n.ssh_port), timeout=20).ok,
                                 list(pending.values()))
        for node, ok in zip(list(pending.values()), listening):
            if ok:
                pending.pop(node.name)
        if not pending or time.monotonic() >= deadline:
            break
        sleep(1.0)
    problems = []
    for node in pending.values():
        logs = runner_for(node).run(dockerrun.docker_logs_argv(spec, engine=engine), timeout=20)
        problems.append(Problem(node.name, tr("the node agent on {host} did not start sshd on port {port}; its log:\n{log}",
                                              host=node.address, port=node.ssh_port,
                                              log=(logs.stdout + logs.stderr).strip() or "-"),
                                tr("fix what the log says, then: dscluster up again")))
    return problems


def store_identity(spec: ClusterSpec, opts: dockerrun.DeployOptions, identity_key: str,
                   runner_for: RunnerFactory) -> list[Problem]:
    """Put the cluster's private key in the master's identity volume (stdin only, never an argv)."""
    stored = runner_for(spec.master).run(dockerrun.identity_store_argv(spec, opts), input=identity_key, timeout=120)
    if stored.ok:
        return []
    return [Problem(spec.master.name, tr("cannot store the cluster key on {host}: {err}", host=spec.master.address,
                                         err=_tail(stored)),
                    tr("check that the image runs on {host}: ssh {host} docker run --rm {image} --help",
                       host=spec.master.address, image=opts.image))]


def forget_identity(spec: ClusterSpec, runner_for: RunnerFactory, *, engine: str = "docker") -> None:
    runner_for(spec.master).run(dockerrun.docker_volume_rm_argv(spec, dockerrun.identity_volume(spec), engine),
                                timeout=60)


def rollback(spec: ClusterSpec, nodes: list[NodeSpec], runner_for: RunnerFactory, *,
             engine: str = "docker") -> list[str]:
    """Remove the containers `up` started (their state volumes stay: host keys are kept) and the
    master's copy of the cluster key."""
    results = run_parallel(lambda n: runner_for(n).run(dockerrun.docker_rm_argv(spec, force=True, engine=engine),
                                                       timeout=60), nodes)
    forget_identity(spec, runner_for, engine=engine)
    return [n.name for n, r in zip(nodes, results) if r.ok]


def up(spec: ClusterSpec, opts: dockerrun.DeployOptions, runner_for: RunnerFactory, pubkey: str, *,
       identity_key: str | None = None, verify_timeout: float = VERIFY_TIMEOUT_S,
       sleep: Callable[[float], None] = time.sleep) -> UpReport:
    """The whole `up`. Raises UpFailed (with the report) when anything blocks or fails.

    `identity_key` (the private key text) is required when `opts.master_identity` is on."""
    opts.validate()
    if opts.master_identity and not identity_key:
        raise ClusterError(tr("the cluster's private key is needed for the master"),
                           tr("create the identity with `dscluster init`, or pass --no-master-identity"))
    report = preflight(spec, opts, runner_for)
    if report.problems:
        hosts_bad = sorted({p.node for p in report.problems})
        raise UpFailed(tr("{n} of {total} hosts are not ready; nothing was started", n=len(hosts_bad),
                          total=len(spec.nodes)),
                       tr("fix the problems listed above, then run dscluster up again"), report)
    learned = replace(spec, python=spec.python or report.python or None, node_uid=spec.node_uid or report.node_uid)
    report.problems = publish_shared(learned, pubkey, runner_for)
    if report.problems:
        raise UpFailed(tr("the shared directory is not shared by every host; nothing was started"),
                       tr("fix the problems listed above, then run dscluster up again"), report)
    if opts.master_identity:
        report.problems = store_identity(spec, opts, identity_key or "", runner_for)
        if report.problems:
            forget_identity(spec, runner_for, engine=opts.engine)
            raise UpFailed(tr("the master could not receive the cluster key; nothing was started"),
                           tr("fix the problems listed above, then run dscluster up again"), report)
    start_all(spec, opts, runner_for, report, verify_timeout=verify_timeout, sleep=sleep)
    if report.failed:
        raise UpFailed(tr("{n} hosts failed to start; the {m} started were removed again", n=len(report.failed),
                          m=len(report.rolled_back)),
                       tr("fix the problems listed above, then run dscluster up again"), report)
    pin_from_nodes(spec, runner_for, opts.engine)
    return report


def pin_from_nodes(spec: ClusterSpec, runner_for: RunnerFactory, engine: str = "docker") -> list[str]:
    """Pin each node's host key as read from the node itself, over your own ssh to its host and as root in
    its container (the channel you already trust), never from the records on the shared storage, which the
    node user can write. Returns the nodes pinned (one that did not answer is left to `config trust`)."""
    from dscluster.cluster.ssh import pin_host_keys
    from dscluster.node.sshd import HOST_KEY_NAME

    argv = dockerrun.docker_exec_argv(spec, ["cat", f"{dockerrun.AGENT_STATE_DIR}/{HOST_KEY_NAME}.pub"], engine,
                                      user="root")
    keys = {}
    for node, res in zip(spec.nodes, run_parallel(lambda n: runner_for(n).run(argv, timeout=30), spec.nodes)):
        parts = res.stdout.split() if res.ok else []
        if len(parts) >= 2 and parts[0].startswith("ssh-"):
            keys[node.name] = f"{parts[0]} {parts[1]}"
    if keys:
        pin_host_keys(spec, keys)
    return sorted(keys)


@dataclass(frozen=True)
class DownResult:
    node: str
    state: str  # "removed" | "absent" | "failed"
    detail: str = ""


def down(spec: ClusterSpec, runner_for: RunnerFactory, *, purge: bool = False,
         engine: str = "docker") -> list[DownResult]:
    """Stop and remove the node container on every host (in parallel). `purge` also drops host keys."""
    def one(node: NodeSpec) -> DownResult:
        runner = runner_for(node)
        stopped = runner.run(dockerrun.docker_stop_argv(spec, engine=engine), timeout=90)
        if not stopped.ok and "no such container" in (stopped.stderr + stopped.stdout).lower():
            state = DownResult(node.name, "absent")
        else:
            removed = runner.run(dockerrun.docker_rm_argv(spec, force=True, engine=engine), timeout=60)
            state = DownResult(node.name, "removed") if removed.ok else DownResult(node.name, "failed", _tail(removed))
        if purge and state.state != "failed":
            runner.run(dockerrun.docker_volume_rm_argv(spec, engine=engine), timeout=60)
        return state

    results = run_parallel(one, spec.nodes)
    forget_identity(spec, runner_for, engine=engine)  # the master's copy of the private key lives only while up
    return results
