"""A real Slurm on the simulated cluster: munge, `slurmctld` on the master, one `slurmd` per node.

Each `slurmd` runs inside its node's namespaces (network, UTS, PID, mount), with the node's own
address as its NodeAddr, so the tasks `srun` starts live in that node's process table and die with
it on `sim crash`, exactly as on a real machine. `slurmctld` runs on the master (node0) the same
way; `munged` runs in the master's network namespace with the cluster's own key and socket, which
every node reaches through the shared filesystem (a real cluster has one munged per node with the
same key; doctor's munge check works the same either way).

Everything lives in the cluster's runtime dir (/run/dscluster/sims/<name>/slurm/), so `sim down`
(which removes that dir and kills every process of the cluster's namespaces) removes all of it; the
daemons' logs go next to the node agents' logs. Clients (`srun`, `sinfo`, `sbatch`) find this Slurm
through SLURM_CONF=<runtime>/slurm/slurm.conf, never through /etc/slurm.

The slurm.conf is built by a pure function (`slurm_conf_text`). Why its settings:
- ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: no cgroup hierarchy is needed (the
  development and CI machines have hybrid cgroups); processes are tracked by parentage.
- SelectType=select/cons_tres + CR_Core: jobs share a node's cores, so two users' jobs can run side
  by side on the same nodes, as on a shared cluster; memory is not a consumable (the nodes share RAM).
- SlurmdParameters=config_overrides: the configured CPUs (the spec's slots, at least 4) win over the
  machine's real core count, which every simulated node shares.
- AuthInfo=socket=...: this cluster's munged, not the machine's /run/munge.
- KillWait=5, MinJobAge=600: a stopped or timed-out job is gone in seconds but its final state
  (TIMEOUT, CANCELLED) stays queryable with `scontrol show job` for ten minutes; there is no
  accounting database (sacct) on the simulated cluster.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dscluster.errors import ClusterError
from dscluster.i18n import tr

if TYPE_CHECKING:
    from dscluster.sim.cluster import SimCluster

SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
PARTITION = "sim"
MIN_CPUS = 4
DAEMONS = ("munged", "slurmctld", "slurmd")


@dataclass(frozen=True)
class SlurmNode:
    name: str
    addr: str
    cpus: int
    gpus: int = 0


@dataclass(frozen=True)
class SlurmLayout:
    """What slurm.conf describes: the cluster, its controller, nodes, one partition, where state lives."""

    cluster: str
    controller: SlurmNode
    nodes: tuple[SlurmNode, ...]
    state_dir: Path
    log_dir: Path
    munge_socket: Path
    partition: str = PARTITION


def slurm_conf_text(layout: SlurmLayout) -> str:
    """The whole slurm.conf for `layout` (pure: the same layout gives the same text)."""
    s, logs = layout.state_dir, layout.log_dir
    lines = [
        f"# the Slurm of simulated cluster {layout.cluster!r} (dscluster sim up --slurm); removed by sim down",
        f"ClusterName={layout.cluster}",
        f"SlurmctldHost={layout.controller.name}({layout.controller.addr})",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={layout.munge_socket}",
        f"StateSaveLocation={s / 'ctld'}",
        f"SlurmdSpoolDir={s / 'spool' / '%n'}",
        f"SlurmctldPidFile={s / 'slurmctld.pid'}",
        f"SlurmdPidFile={s / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={logs / 'slurmctld.log'}",
        f"SlurmdLogFile={logs / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/backfill",
        "SlurmdParameters=config_overrides",
        "MpiDefault=none",
        "ReturnToService=2",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        "MinJobAge=600",
        "MessageTimeout=10",
    ]
    if any(n.gpus for n in layout.nodes):
        lines.append("GresTypes=gpu")
    for n in layout.nodes:
        gres = f" Gres=gpu:{n.gpus}" if n.gpus else ""
        lines.append(f"NodeName={n.name} NodeAddr={n.addr} NodeHostname={n.name} CPUs={n.cpus}{gres} State=UNKNOWN")
    lines.append(f"PartitionName={layout.partition} Nodes={','.join(n.name for n in layout.nodes)} Default=YES "
                 "MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


# slurmd initializes a cgroup plugin even with proctrack/linuxproc and task/none; its autodetection
# gives up inside a node (`ip netns exec` mounts a fresh sysfs: nothing on /sys/fs/cgroup). Naming
# the v1 plugin skips the detection, and this configuration never asks it for a controller.
CGROUP_CONF = "CgroupPlugin=cgroup/v1\n"


def slurm_dir(sim: SimCluster) -> Path:
    return sim.names.runtime_dir / "slurm"


def conf_path(sim: SimCluster) -> Path:
    return slurm_dir(sim) / "slurm.conf"


def layout_of(sim: SimCluster) -> SlurmLayout:
    spec = sim.spec
    nodes = tuple(SlurmNode(n.name, n.address, max(MIN_CPUS, n.slots)) for n in spec.nodes)
    state = slurm_dir(sim)
    return SlurmLayout(cluster=f"dsc-{sim.name}"[:40], controller=nodes[0], nodes=nodes, state_dir=state,
                       log_dir=Path(sim.state["logs_dir"]), munge_socket=state / "munge" / "munge.socket")


def client_env(sim: SimCluster) -> dict[str, str]:
    """The environment that points Slurm's client commands at this cluster's Slurm."""
    return {"SLURM_CONF": str(conf_path(sim))}


def _require_binaries() -> None:
    missing = [b for b in ("munged", "slurmctld", "slurmd", "srun", "sinfo") if shutil.which(b) is None]
    if missing:
        raise ClusterError(tr("Slurm is not installed here (missing: {names})", names=", ".join(missing)),
                           tr("apt-get install slurm-wlm munge (Debian/Ubuntu), then sim up again"))


def _munge_key(path: Path, owner: pwd.struct_passwd) -> None:
    """A fresh random key for this cluster (never the machine's /etc/munge key), readable only by munge."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chown(path.parent, owner.pw_uid, owner.pw_gid)
    os.chmod(path.parent, 0o755)  # clients must reach the socket in it
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400)
    try:
        os.write(fd, os.urandom(1024))
    finally:
        os.close(fd)
    os.chown(path, owner.pw_uid, owner.pw_gid)


def _spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd="/")


def _daemon_env(sim: SimCluster) -> dict[str, str]:
    from dscluster.sim.cluster import NODE_PATH

    return {"PATH": f"{Path(sys.executable).parent}:{NODE_PATH}", "LANG": "C.UTF-8", "HOME": "/root",
            **client_env(sim)}


def _node_argv(sim: SimCluster, node: str, argv: list[str]) -> list[str]:
    return sim.exec_argv(node, argv, cwd="/")


def start(sim: SimCluster, timeout: float = 60.0) -> dict:
    """Start munged, slurmctld and every slurmd; return once `sinfo` shows every node idle."""
    _require_binaries()
    layout = layout_of(sim)
    root = slurm_dir(sim)
    shutil.rmtree(root, ignore_errors=True)
    for sub in ("ctld", "spool"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    for n in layout.nodes:
        (root / "spool" / n.name).mkdir(parents=True, exist_ok=True)
    conf = conf_path(sim)
    conf.write_text(slurm_conf_text(layout), encoding="utf-8")
    os.chmod(conf, 0o644)
    (root / "cgroup.conf").write_text(CGROUP_CONF, encoding="utf-8")
    os.chmod(root / "cgroup.conf", 0o644)
    munge = pwd.getpwnam("munge")
    mdir = layout.munge_socket.parent
    _munge_key(mdir / "munge.key", munge)
    env = _daemon_env(sim)
    logs = layout.log_dir
    master = sim.state["nodes"][0]
    procs = {"munged": _spawn(["ip", "netns", "exec", master["netns"], "runuser", "-u", "munge", "--", "munged",
                               "--foreground", f"--socket={layout.munge_socket}", f"--key-file={mdir / 'munge.key'}",
                               f"--pid-file={mdir / 'munged.pid'}", f"--seed-file={mdir / 'munged.seed'}",
                               f"--log-file={logs / 'munged.log'}", "--force"], logs / "munged.out", env)}
    _wait(lambda: layout.munge_socket.exists(), timeout, "munged", logs / "munged.log", procs["munged"])
    procs["slurmctld"] = _spawn(_node_argv(sim, layout.controller.name, ["slurmctld", "-D", "-i", "-f", str(conf)]),
                                logs / "slurmctld.out", env)
    for n in layout.nodes:
        procs[f"slurmd-{n.name}"] = _spawn(_node_argv(sim, n.name, ["slurmd", "-D", "-N", n.name, "-f", str(conf)]),
                                           logs / f"slurmd-{n.name}.out", env)
    state = {"conf": str(conf), "partition": layout.partition, "munge_socket": str(layout.munge_socket),
             "pids": {k: p.pid for k, p in procs.items()}}
    sim.state["slurm"] = state
    sim._save()
    _wait(lambda: _all_idle(env, len(layout.nodes)), timeout, "slurmd", logs / "slurmctld.log", None, procs)
    return state


def _all_idle(env: dict[str, str], n: int) -> bool:
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, timeout=15,
                         env={**os.environ, **env})
    states = [ln.split()[1] for ln in out.stdout.splitlines() if len(ln.split()) == 2]
    return out.returncode == 0 and len(states) == n and all(s == "idle" for s in states)


def _wait(ready, timeout: float, what: str, log: Path, proc: subprocess.Popen | None,
          procs: dict[str, subprocess.Popen] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        for name, p in (procs or ({what: proc} if proc else {})).items():
            if p.poll() is not None:
                raise ClusterError(tr("{daemon} exited ({code}); see {log}", daemon=name, code=p.returncode,
                                      log=log.parent / f"{name}.log"),
                                   tr("fix the cause, then sim up again with --slurm"))
        time.sleep(0.3)
    raise ClusterError(tr("Slurm's {daemon} was not ready within {s:.0f} s; see {log}", daemon=what, s=timeout, log=log),
                       tr("fix the cause, then sim up again with --slurm"))


def restart_node(sim: SimCluster, node: str) -> None:
    """After `sim heal` of a crashed node: its slurmd (and slurmctld on the master) come back too."""
    state = sim.state.get("slurm")
    if not state:
        return
    conf = state["conf"]
    env = _daemon_env(sim)
    logs = Path(sim.state["logs_dir"])
    if node == sim.nodes[0]:
        state["pids"]["slurmctld"] = _spawn(_node_argv(sim, node, ["slurmctld", "-D", "-f", conf]),
                                            logs / "slurmctld.out", env).pid
    state["pids"][f"slurmd-{node}"] = _spawn(_node_argv(sim, node, ["slurmd", "-D", "-N", node, "-f", conf]),
                                             logs / f"slurmd-{node}.out", env).pid
    sim._save()


def stop(state: dict | None) -> None:
    """Kill the daemons recorded in a sim's state by PID (whatever still runs of them)."""
    from dscluster.sim.procs import terminate

    terminate(((state or {}).get("slurm") or {}).get("pids", {}).values())
