"""`dscluster doctor --slurm`: what `launch --launcher slurm` relies on, checked before it queues.

`gather` asks Slurm's own clients once (scontrol ping, sinfo, one tiny srun step that runs
`munge -n | unmunge` on every node of the partition); `evaluate` is pure and judges those facts
against what the run will ask for (nodes, GPUs per node, time limit, expected length), so unit tests
feed it recorded facts. The checks, in report order, are pinned by the assert under SLURM_CHECKS.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from dscluster.doctor.model import CheckResult, failed, passed, skipped, warned
from dscluster.i18n import tr
from dscluster.launcher.backends.slurm.clients import SlurmAsk, check_ask, time_seconds

SLURM_ROW = "slurm"
CHECK_IDS = ("controller", "partition", "nodes", "gres", "munge", "time")
# node states that can run a job now (sinfo's short forms; a trailing * means "not responding")
_USABLE = {"idle", "mix", "alloc", "comp", "plnd"}


@dataclass(frozen=True)
class Answer:
    rc: int
    out: str
    err: str = ""


@dataclass(frozen=True)
class Partition:
    name: str
    up: bool
    max_time: str
    default_time: str
    nodes: tuple[str, ...]
    default: bool = False


@dataclass(frozen=True)
class SlurmFacts:
    ping: Answer
    partitions: tuple[Partition, ...] = ()
    node_states: dict[str, str] = field(default_factory=dict)  # node -> sinfo state (idle, down*, drain, ...)
    node_gpus: dict[str, int] = field(default_factory=dict)  # node -> GPUs in its gres
    munge: dict[str, bool] | None = None  # node -> munge credential round trip worked; None: not tried
    munge_error: str = ""


@dataclass(frozen=True)
class SlurmContext:
    facts: SlurmFacts
    ask: SlurmAsk
    expected_s: int | None = None  # how long the run is expected to take

    @property
    def partition(self) -> Partition | None:
        parts = self.facts.partitions
        if self.ask.partition:
            return next((p for p in parts if p.name == self.ask.partition), None)
        return next((p for p in parts if p.default), parts[0] if parts else None)


def parse_partitions(text: str) -> tuple[Partition, ...]:
    """`sinfo -h -o '%P|%a|%l|%L|%N'` (one line per partition; the default one is marked with *)."""
    out = []
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5:
            continue
        name, avail, max_time, default_time, nodes = parts
        out.append(Partition(name.rstrip("*"), avail == "up", max_time, default_time, tuple(_expand(nodes)),
                             name.endswith("*")))
    return tuple(out)


def _expand(nodelist: str) -> list[str]:
    """node[0-2],gpu7 -> node0 node1 node2 gpu7 (enough of Slurm's hostlist syntax for sinfo's output)."""
    names: list[str] = []
    for prefix, ranges, plain in re.findall(r"([^,\[]+)\[([^\]]+)\]|([^,\[\]]+)", nodelist):
        if plain:
            names.append(plain)
            continue
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                names.append(f"{prefix}{str(i).zfill(len(lo))}")
    return names


def parse_gpus(gres: str) -> int:
    """sinfo's %G ("gpu:8", "gpu:h100:4(S:0-1)", "(null)") -> the number of GPUs."""
    return sum(int(m) for m in re.findall(r"gpu(?::[\w.-]+)?:(\d+)", gres))


def check_controller(ctx: SlurmContext) -> CheckResult:
    ping = ctx.facts.ping
    if ping.rc == 0 and " is UP" in ping.out:
        return passed(SLURM_ROW, "controller", ping.out.strip().splitlines()[0])
    return failed(SLURM_ROW, "controller", tr("slurmctld does not answer: {err}",
                                              err=(ping.err or ping.out).strip()[-200:] or "?"),
                  tr("start slurmctld (systemctl start slurmctld), check SLURM_CONF and munge on this machine"))


def check_partition(ctx: SlurmContext) -> CheckResult:
    part = ctx.partition
    if part is None:
        known = ", ".join(p.name for p in ctx.facts.partitions) or "-"
        return failed(SLURM_ROW, "partition", tr("no partition {name!r} (known: {known})",
                                                 name=ctx.ask.partition or "default", known=known),
                      tr("pick one with --partition NAME (sinfo -s lists them)"))
    if not part.up:
        return failed(SLURM_ROW, "partition", tr("partition {name} is not up", name=part.name),
                      tr("ask the admin: scontrol update PartitionName={name} State=UP", name=part.name))
    if len(part.nodes) < ctx.ask.nodes:
        return failed(SLURM_ROW, "partition", tr("partition {name} has {have} nodes, the run asks for {want}",
                                                 name=part.name, have=len(part.nodes), want=ctx.ask.nodes),
                      tr("ask for fewer nodes (--nodes) or another partition"))
    return passed(SLURM_ROW, "partition", tr("partition {name}: up, {n} nodes", name=part.name, n=len(part.nodes)))


def check_nodes(ctx: SlurmContext) -> list[CheckResult]:
    part = ctx.partition
    if part is None:
        return [skipped(SLURM_ROW, "nodes", tr("no partition"))]
    out = []
    for node in part.nodes:
        state = ctx.facts.node_states.get(node, "unknown")
        if state.rstrip("*~#!%$@^-") in _USABLE and not state.endswith("*"):
            out.append(passed(node, "nodes", state))
        else:
            out.append(warned(node, "nodes", tr("{state}: Slurm will not start ranks here", state=state),
                              tr("scontrol show node {node} says why; after fixing it: scontrol update "
                                 "NodeName={node} State=RESUME", node=node)))
    usable = sum(1 for r in out if r.severity == "info")
    if usable < ctx.ask.nodes:
        out.append(failed(SLURM_ROW, "nodes", tr("{usable} usable nodes, the run asks for {want}", usable=usable,
                                                 want=ctx.ask.nodes), tr("bring nodes back, or ask for fewer")))
    return out


def check_gres(ctx: SlurmContext) -> list[CheckResult]:
    part = ctx.partition
    want = ctx.ask.gpus_per_node
    if part is None:
        return [skipped(SLURM_ROW, "gres", tr("no partition"))]
    out = []
    for node in part.nodes:
        have = ctx.facts.node_gpus.get(node, 0)
        if want and have < want:
            out.append(failed(node, "gres", tr("{have} GPUs in Slurm's gres, the run asks for {want} per node",
                                               have=have, want=want),
                              tr("ask for --gpus-per-node {have}, or declare the GPUs (gres.conf, Gres=gpu:N in "
                                 "slurm.conf)", have=have)))
        else:
            out.append(passed(node, "gres", tr("{have} GPUs (the run asks for {want})", have=have, want=want)))
    return out


def check_munge(ctx: SlurmContext) -> list[CheckResult]:
    part = ctx.partition
    if part is None or ctx.facts.munge is None:
        return [skipped(SLURM_ROW, "munge", ctx.facts.munge_error or tr("not checked"))]
    out = []
    for node in part.nodes:
        ok = ctx.facts.munge.get(node)
        if ok:
            out.append(passed(node, "munge", tr("a munge credential made and decoded on the node")))
        elif ok is None:
            out.append(skipped(node, "munge", ctx.facts.munge_error or tr("busy: no step could start here")))
        else:
            out.append(failed(node, "munge", tr("munge -n | unmunge failed on the node"),
                              tr("start munged there with the cluster's key (/etc/munge/munge.key, the same on "
                                 "every node) and check the clocks")))
    return out


def check_time(ctx: SlurmContext) -> CheckResult:
    part = ctx.partition
    asked = time_seconds(ctx.ask.time)
    limit = asked
    source = "--time"
    if part is not None and asked is None:
        limit = time_seconds(part.default_time if part.default_time not in ("n/a", "NONE") else part.max_time)
        source = tr("partition {name}'s limit", name=part.name)
    if part is not None and asked is not None:
        max_s = time_seconds(part.max_time)
        if max_s is not None and asked > max_s:
            return failed(SLURM_ROW, "time", tr("--time {t} is over partition {name}'s MaxTime {max}", t=ctx.ask.time,
                                                name=part.name, max=part.max_time),
                          tr("ask for at most {max}, or use another partition", max=part.max_time))
    if ctx.expected_s is not None and limit is not None and limit < ctx.expected_s:
        return warned(SLURM_ROW, "time", tr("the run is expected to take {e}s but {src} ends it after {l}s",
                                            e=ctx.expected_s, src=source, l=limit),
                      tr("ask for more --time, or save checkpoints often and resubmit: dscluster restart RUN "
                         "resumes from the last committed one"))
    shown = f"{limit}s" if limit is not None else tr("none")
    return passed(SLURM_ROW, "time", tr("time limit: {t} ({src})", t=shown, src=source))


SLURM_CHECKS: dict[str, Callable[[SlurmContext], CheckResult | list[CheckResult]]] = {
    "controller": check_controller, "partition": check_partition, "nodes": check_nodes, "gres": check_gres,
    "munge": check_munge, "time": check_time,
}
assert tuple(SLURM_CHECKS) == CHECK_IDS, "keep SLURM_CHECKS in report order"


def evaluate(ctx: SlurmContext) -> list[CheckResult]:
    """Every Slurm check in order (pure). Without a controller, the rest cannot be known."""
    results: list[CheckResult] = []
    for name, fn in SLURM_CHECKS.items():
        if name != "controller" and not results[0].ok:
            results.append(skipped(SLURM_ROW, name, tr("the controller does not answer")))
            continue
        value = fn(ctx)
        results += value if isinstance(value, list) else [value]
    return results


# ---- asking Slurm ---------------------------------------------------------------------------------

def _run(argv: list[str], timeout: float = 20.0) -> Answer:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return Answer(res.returncode, res.stdout, res.stderr)
    except FileNotFoundError:
        return Answer(127, "", f"{argv[0]} is not installed")
    except subprocess.TimeoutExpired:
        return Answer(124, "", f"{argv[0]} timed out after {timeout:.0f}s")


def gather(ask: SlurmAsk, run: Callable[..., Answer] = _run, munge: bool = True) -> SlurmFacts:
    ping = run(["scontrol", "ping"])
    if ping.rc != 0 or " is UP" not in ping.out:
        return SlurmFacts(ping)
    parts = parse_partitions(run(["sinfo", "-h", "-o", "%P|%a|%l|%L|%N"]).out)
    states, gpus = {}, {}
    for line in run(["sinfo", "-h", "-N", "-o", "%N|%t|%G"]).out.splitlines():
        fields = line.strip().split("|")
        if len(fields) == 3:
            states[fields[0]] = fields[1]
            gpus[fields[0]] = max(gpus.get(fields[0], 0), parse_gpus(fields[2]))
    facts = SlurmFacts(ping, parts, states, gpus)
    part = SlurmContext(facts, ask).partition
    if not munge or part is None:
        return facts
    sock = re.search(r"socket=([^,\s]+)", run(["scontrol", "show", "config"]).out)
    flag = f" -S {sock.group(1)}" if sock else ""
    usable = [n for n in part.nodes if states.get(n, "").rstrip("*~#!%$@^-") in _USABLE and
              not states.get(n, "").endswith("*")]
    if not usable:
        return SlurmFacts(ping, parts, states, gpus, None, tr("no usable node to run a step on"))
    res = run(["srun", "--immediate=20", f"--partition={part.name}", f"--nodelist={','.join(usable)}",
               f"--nodes={len(usable)}", "--ntasks-per-node=1", "--job-name=dsc-doctor", "sh", "-c",
               f"munge -n{flag} | unmunge{flag} >/dev/null && echo \"$(hostname -s) munge-ok\""], timeout=60)
    done = {line.split()[0] for line in res.out.splitlines() if line.endswith(" munge-ok")}
    if res.rc != 0 and not done:
        return SlurmFacts(ping, parts, states, gpus, None,
                          tr("the check's srun step did not run: {err}", err=res.err.strip()[-200:]))
    return SlurmFacts(ping, parts, states, gpus, {n: n in done for n in usable})


def run(given) -> list[CheckResult]:
    """`doctor --slurm`: the checks for what its options say the run will ask for (`given`: dest -> value)."""
    ask = check_ask(SlurmAsk(nodes=given.get("nodes") or 1, partition=given.get("partition"),
                             gpus_per_node=given.get("gpus_per_node") or 0, time=given.get("time")))
    return evaluate(SlurmContext(gather(ask), ask, time_seconds(given.get("expect"))))
