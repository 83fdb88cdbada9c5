"""DeepSpeed's own runner flags (`deepspeed --hostfile=H --master_addr=A --include=... train.py`), checked
against the cluster before anything starts.

Users arrive with the recipe's command line in their fingers: `dscluster launch` takes it with only
`deepspeed` replaced. dscluster still builds the runner's argv itself (launcher/plan.py), so each flag
is either turned into the same effect on the plan (the hosts and slots it selects, a fixed rendezvous
port, extra launcher arguments), checked for agreement with the cluster (`--master_addr` must be the
first host's address: rank 0 runs there, and a different address hangs every rank at init;
`--ssh_port` must be the port the nodes' sshd listens on), or refused with the reason (`--no_ssh`,
`--elastic_training`: they change who starts and supervises the ranks).

Selection follows DeepSpeed's runner exactly (`parse_inclusion_exclusion`, then `--num_nodes` takes the
first N hosts, then `--num_gpus` keeps slots [0, N) on each): the same command selects the same ranks.
Pure: no filesystem, no network (address lookups are passed in).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dscluster.errors import UsageError
from dscluster.i18n import tr

# Runner flags that would take starting or supervising the ranks away from dscluster.
REFUSED = {
    "--elastic_training": "DeepSpeed's elastic training replaces the launcher with torch's elastic agent, which "
                          "would restart ranks behind the supervisor's back",
    "--min_elastic_nodes": "it belongs to --elastic_training, which dscluster does not run",
    "--max_elastic_nodes": "it belongs to --elastic_training, which dscluster does not run",
    "--no_ssh": "it starts the ranks of one node only, by hand on every node; dscluster starts every node itself",
    "--node_rank": "it belongs to --no_ssh (one node started by hand); dscluster starts every node itself",
    "--autotuning": "autotuning runs many short experiments, not one supervised run",
    "--enable_each_rank_log": "dscluster always writes each rank's log into the run directory (logs/)",
    "--save_pid": "dscluster records the supervisor and marks every process of the run itself",
    "--venv_script": "dscluster uses it to pass secret --env values; put other setup in the image or --env",
    "--no_ssh_check": "dscluster checks every node over ssh before launching (the doctor's fast checks)",
}
REFUSED_FIX = {
    "--elastic_training": "drop it: the supervisor restarts the run from the last committed checkpoint "
                          "(--max-restarts N)",
    "--min_elastic_nodes": "drop it (and --elastic_training); use --max-restarts N",
    "--max_elastic_nodes": "drop it (and --elastic_training); use --max-restarts N",
    "--no_ssh": "drop it; run `dscluster launch` once, on the master",
    "--node_rank": "drop it; run `dscluster launch` once, on the master",
    "--autotuning": "run `deepspeed --autotuning ...` directly, then launch the tuned config with dscluster",
    "--enable_each_rank_log": "drop it; read them with `dscluster logs RUN --rank N`",
    "--save_pid": "drop it; `dscluster status RUN` names the supervisor",
    "--venv_script": "drop it; pass variables with --env NAME=value",
    "--no_ssh_check": "drop it; --skip-doctor skips the checks when you must",
}


@dataclass(frozen=True)
class RunnerFlags:
    """The DeepSpeed runner flags given to `dscluster launch` (None / empty: not given)."""

    master_addr: str | None = None
    master_port: int | None = None
    num_nodes: int | None = None
    num_gpus: int | None = None
    include: str | None = None
    exclude: str | None = None
    launcher_args: str | None = None
    ssh_port: int | None = None
    no_python: bool = False
    no_local_rank: bool = False
    force_multi: bool = False
    # Flags DeepSpeed's runner hands on to every node's launch.py unchanged (--bind_cores_to_rank,
    # --bind_core_list, --log_level, --quiet), as argv words `--flag` / `--flag=value`.
    passed: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()

    def given(self) -> bool:
        return any(v not in (None, False, ()) for v in vars(self).values())

    def selects(self) -> bool:
        """Whether the flags select hosts or slots (so they need a hostfile to select from)."""
        return any(v is not None for v in (self.num_nodes, self.num_gpus, self.include, self.exclude))


@dataclass(frozen=True)
class Selection:
    """The hosts the ranks run on, in hostfile order, and which slots (device indices) of each."""

    hosts: tuple[tuple[str, int], ...]  # (host, number of ranks there)
    devices: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # only where not 0..n-1

    def include_arg(self) -> str | None:
        """The runner's --include value that selects exactly these devices, or None when every host
        uses its slots 0..n-1 (a hostfile with `slots=n` says that already)."""
        if not self.devices:
            return None
        parts = []
        for host, n in self.hosts:
            slots = self.devices.get(host, tuple(range(n)))
            parts.append(f"{host}:{','.join(str(s) for s in slots)}")
        return "@".join(parts)


def check_refused(flags: RunnerFlags) -> None:
    if flags.refused:
        flag = flags.refused[0]
        raise UsageError(tr("{flag} is not supported by dscluster launch: {why}", flag=flag, why=tr(REFUSED[flag])),
                         tr(REFUSED_FIX[flag]), setting=flag)


def check_launcher(name: str | None):
    """`--launcher NAME`: a backend a cluster spec may name (launcher/backends), returned (None: not given);
    DeepSpeed's other launchers are named with the reason."""
    from dscluster.launcher import backends  # noqa: PLC0415

    supervised = backends.spec_names()
    if name is None:
        return None
    if name in supervised:
        return backends.get(name)
    low = name.lower()
    if low in supervised:
        raise UsageError(tr("--launcher {name!r}: write it in lower case", name=name),
                         tr("--launcher {low}", low=low), setting="--launcher")
    if low in backends.OTHER_LAUNCHERS:
        raise UsageError(tr("--launcher {name}: dscluster supervises launches through {names} only (teardown on "
                            "every node, per-rank logs, restarts)", name=name, names=", ".join(supervised)),
                         tr("use --launcher with one of: {names} (pdsh is the default)", names=", ".join(supervised)),
                         setting="--launcher")
    raise UsageError(tr("--launcher {name!r} is not a DeepSpeed launcher", name=name),
                     tr("use --launcher with one of: {names} (pdsh is the default)", names=", ".join(supervised)),
                     setting="--launcher")


def check_launcher_args(value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    try:
        words = tuple(shlex.split(value))
    except ValueError as err:
        raise UsageError(tr("--launcher_args {value!r} cannot be split into words: {err}", value=value, err=err),
                         tr("quote it as one argument: --launcher_args \"-x FOO --mca btl tcp\""),
                         setting="--launcher_args") from None
    return words


def parse_node_specs(text: str, flag: str) -> dict[str, tuple[int, ...] | None]:
    """DeepSpeed's NODE_SPEC[@NODE_SPEC ...], NODE_SPEC = NAME[:SLOT[,SLOT ...]] -> name -> slots (None: all)."""
    out: dict[str, tuple[int, ...] | None] = {}
    if not text.strip():
        raise UsageError(tr("{flag} is empty", flag=flag),
                         tr("name hosts as in the hostfile, e.g. {flag} node1@node2:0,1", flag=flag), setting=flag)
    for part in text.split("@"):
        name, sep, slots = part.strip().partition(":")
        if not name:
            raise UsageError(tr("{flag} {value!r}: a host name is missing", flag=flag, value=text),
                             tr("write HOST[:SLOT,SLOT]@HOST..., e.g. {flag} node1@node2:0,1", flag=flag), setting=flag)
        if not sep:
            out[name] = None
            continue
        try:
            nums = tuple(int(s) for s in slots.split(","))
        except ValueError:
            raise UsageError(tr("{flag} {value!r}: slots of {host} must be numbers", flag=flag, value=text, host=name),
                             tr("e.g. {flag} {host}:0,1", flag=flag, host=name), setting=flag) from None
        if any(n < 0 for n in nums):
            raise UsageError(tr("{flag} {value!r}: slots of {host} must be numbers >= 0", flag=flag,
                                value=text, host=name), tr("e.g. {flag} {host}:0,1", flag=flag, host=name),
                             setting=flag)
        # A slot named twice is selected once, as DeepSpeed's runner does (`worker-0:1,1`).
        out[name] = tuple(sorted(set(out.get(name) or ()) | set(nums)))
    return out


def select(hosts: tuple[tuple[str, int], ...], flags: RunnerFlags, names: Mapping[str, str] | None = None) -> Selection:
    """The hosts and slots the flags select, as DeepSpeed's runner would. `names` maps other names of a
    host (the spec's node names) to its hostfile entry, so --include node2 works with a hostfile of IPs."""
    alias = {h: h for h, _ in hosts} | {k: v for k, v in (names or {}).items() if v in dict(hosts)}
    pool: dict[str, list[int]] = {h: list(range(s)) for h, s in hosts}
    if flags.include is not None and flags.exclude is not None:
        raise UsageError(tr("--include and --exclude cannot be used together"),
                         tr("keep one of them (DeepSpeed refuses both too)"), setting="--include")
    if (flags.include is not None or flags.exclude is not None) and (flags.num_nodes is not None or
                                                                    flags.num_gpus is not None):
        flag = "--num_nodes" if flags.num_nodes is not None else "--num_gpus"
        raise UsageError(tr("{flag} cannot be combined with --include/--exclude", flag=flag),
                         tr("select hosts and slots with --include alone, e.g. --include node1:0,1@node2:0,1"),
                         setting=flag)
    for flag, value in (("--include", flags.include), ("--exclude", flags.exclude)):
        if value is None:
            continue
        specs = parse_node_specs(value, flag)
        unknown = [n for n in specs if n not in alias]
        if unknown:
            raise UsageError(tr("{flag}: {names} not in the hostfile (its hosts: {hosts})", flag=flag,
                                names=", ".join(unknown), hosts=", ".join(h for h, _ in hosts)),
                             tr("name hosts as the hostfile (or the cluster spec) names them"), setting=flag)
        chosen: dict[str, list[int]] = {}
        for name, slots in specs.items():
            host = alias[name]
            bad = [s for s in slots or () if s not in pool.get(host, range(dict(hosts)[host]))]
            if bad:
                raise UsageError(tr("{flag}: {host} has slots 0-{last}, not {bad}", flag=flag, host=name,
                                    last=dict(hosts)[host] - 1, bad=",".join(map(str, bad))),
                                 tr("pick slots below the host's slots= in the hostfile"), setting=flag)
            every = list(range(dict(hosts)[host]))
            chosen[host] = sorted(set(chosen.get(host, [])) | set(every if slots is None else slots))
        if flag == "--include":
            pool = {h: chosen[h] for h in pool if h in chosen}
        else:
            pool = {h: [s for s in slots if s not in chosen.get(h, [])] for h, slots in pool.items()}
            pool = {h: s for h, s in pool.items() if s}
    if not pool:
        raise UsageError(tr("--exclude leaves no host to run on"), tr("exclude fewer hosts or slots"), setting="--exclude")
    if flags.num_nodes is not None:
        if not 1 <= flags.num_nodes <= len(pool):
            raise UsageError(tr("--num_nodes {n}: the hostfile selects {have} host(s)", n=flags.num_nodes,
                                have=len(pool)), tr("give --num_nodes between 1 and {have}", have=len(pool)),
                             setting="--num_nodes")
        pool = dict(list(pool.items())[:flags.num_nodes])
    if flags.num_gpus is not None:
        short = [h for h, s in pool.items() if len(s) < flags.num_gpus]
        if flags.num_gpus < 1 or short:
            least = min(len(s) for s in pool.values())
            raise UsageError(tr("--num_gpus {n}: {hosts} has only {least} slot(s)", n=flags.num_gpus,
                                hosts=", ".join(short) or "-", least=least) if short else
                             tr("--num_gpus must be 1 or more (got {n})", n=flags.num_gpus),
                             tr("give --num_gpus between 1 and {least}", least=least), setting="--num_gpus")
        pool = {h: list(range(flags.num_gpus)) for h in pool}
    devices = {h: tuple(s) for h, s in pool.items() if s != list(range(len(s)))}
    return Selection(tuple((h, len(s)) for h, s in pool.items()), devices)


def select_local(procs: int | None, flags: RunnerFlags) -> tuple[int, str | None]:
    """(number of ranks, the runner's --include or None) on this machine only (no hostfile)."""
    if flags.exclude is not None:
        raise UsageError(tr("--exclude on this machine only: there is no hostfile to exclude from"),
                         tr("name the devices to use instead: --include localhost:0,1"), setting="--exclude")
    if flags.num_nodes not in (None, 1):
        raise UsageError(tr("--num_nodes {n}: this machine only is one node", n=flags.num_nodes),
                         tr("pass a hostfile: --hostfile H --num_nodes {n}", n=flags.num_nodes), setting="--num_nodes")
    if flags.include is not None:
        if flags.num_gpus is not None:
            raise UsageError(tr("--num_gpus cannot be combined with --include/--exclude"),
                             tr("keep --include localhost:0,1 alone"), setting="--num_gpus")
        specs = parse_node_specs(flags.include, "--include")
        other = [n for n in specs if n not in ("localhost", "127.0.0.1")]
        if other or any(v is None for v in specs.values()):
            raise UsageError(tr("--include {value!r} on this machine only: name devices as localhost:0,1",
                                value=flags.include),
                             tr("e.g. --include localhost:1,2, or pass a hostfile to run on {names}",
                                names=", ".join(other) or "other hosts"), setting="--include")
        slots = sorted({s for v in specs.values() for s in v or ()})
        if procs is not None and procs != len(slots):
            raise UsageError(tr("--local {n} and --include {value} ({k} devices) disagree", n=procs,
                                value=flags.include, k=len(slots)), tr("keep one of them"), setting="--include")
        return len(slots), "localhost:" + ",".join(map(str, slots))
    if flags.num_gpus is not None:
        if flags.num_gpus < 1:
            raise UsageError(tr("--num_gpus must be 1 or more (got {n})", n=flags.num_gpus),
                             tr("e.g. --num_gpus 2"), setting="--num_gpus")
        if procs is not None and procs != flags.num_gpus:
            raise UsageError(tr("--local {n} and --num_gpus {m} disagree", n=procs, m=flags.num_gpus),
                             tr("keep one of them"), setting="--num_gpus")
        return flags.num_gpus, None
    return int(procs or 1), None


def check_master_addr(addr: str | None, hosts: tuple[tuple[str, int], ...], label: Mapping[str, str],
                      resolve: Callable[[str], str | None]) -> None:
    """--master_addr must be where rank 0 runs: the first selected host. `resolve` maps an address or
    name to its host in the hostfile (None: none of them); `label` names a host in messages."""
    if addr is None:
        return
    order = [h for h, _ in hosts]
    target = addr if addr in order else resolve(addr)
    first = order[0]
    if target == first:
        return
    shown_first = label.get(first, first)
    if target in order:
        raise UsageError(tr("--master_addr {addr} is {node}, host {k} of the hostfile, not its first host {first}: "
                            "rank 0 runs on the first host, and a master address elsewhere hangs every rank at init",
                            addr=addr, node=label.get(target, target), k=order.index(target) + 1, first=shown_first),
                         tr("drop --master_addr (dscluster passes the first host), or list {node} first in the "
                            "hostfile", node=target), setting="--master_addr")
    raise UsageError(tr("--master_addr {addr} is not a host of the hostfile: rank 0 runs on its first host {first}",
                        addr=addr, first=shown_first),
                     tr("drop --master_addr (dscluster passes the first host), or write --master_addr={first}",
                        first=first), setting="--master_addr")


def check_port(value: int | None, flag: str) -> None:
    if value is not None and not 1 <= value <= 65535:
        raise UsageError(tr("{flag} {value} is not a TCP port", flag=flag, value=value),
                         tr("give a port between 1 and 65535, or drop {flag}", flag=flag), setting=flag)


def check_ssh_port(value: int | None, node_ports: Mapping[str, int], source: str) -> None:
    """--ssh_port must be the port the nodes' sshd listens on (the cluster spec says which)."""
    if value is None:
        return
    check_port(value, "--ssh_port")
    other = {n: p for n, p in node_ports.items() if p != value}
    if other:
        shown = ", ".join(f"{n}:{p}" for n, p in other.items())
        raise UsageError(tr("--ssh_port {port}: the nodes' sshd listens on {shown} ({source})", port=value,
                            shown=shown, source=source),
                         tr("drop --ssh_port (dscluster uses the cluster's ssh settings), or set ssh_port in the "
                            "cluster spec"), setting="--ssh_port")
