"""Checks that need more than one node's facts: ssh, reachability from the master, names, the
shared directory rendezvous, the master port, clocks, JIT-cache locks, the network interface."""

from __future__ import annotations

from pathlib import Path

from dscluster.doctor.checks_node import SHARED_FREE_MIN, SHARED_FREE_WARN, GiB
from dscluster.doctor.context import DoctorContext
from dscluster.doctor.model import CheckResult, failed, passed, skipped, warned
from dscluster.doctor.probe import classify_failure
from dscluster.i18n import tr

CLOCK_SKEW_MAX_S = 2.0
# torch's JIT lock is a plain O_EXCL file (no flock), so a live holder can only be inferred. A compile
# on a machine outside the cluster (a shared home) is invisible to the probes, and an op build can
# take minutes: below JIT_LOCK_STALE_S a lock without a visible compiler is only a warning.
JIT_LOCK_GRACE_S = 60.0
JIT_LOCK_STALE_S = 600.0


def _ssh_target(ctx: DoctorContext, node) -> str:
    return f"{ctx.spec.ssh_user}@{node.address}:{node.ssh_port}"


def check_ssh(ctx: DoctorContext, node) -> CheckResult:
    name = ctx.node_name(node)
    outcome = ctx.outcomes[name]
    target = _ssh_target(ctx, node)
    if outcome.facts is not None:
        return passed(name, "ssh", tr("{target} with the cluster key ({s:.1f} s)", target=target,
                                      s=outcome.received - outcome.sent))
    why = classify_failure(outcome.result)
    texts = {
        "refused": (tr("connection refused at {target}: sshd is not running there (node down or agent stopped)", target=target),
                    tr("start the node agent on {node}: `dscluster node start` (in the image it is the entrypoint); "
                       "check ssh_port in dscluster.toml", node=name)),
        "timeout": (tr("no answer from {target} before the deadline: the node is down or cut off from the network",
                       target=target),
                    tr("check that {node} is powered on and its network link/firewall lets port {port} through",
                       node=name, port=node.ssh_port)),
        "unreachable": (tr("no route to {target}: the node is cut off from the network (partition)", target=target),
                        tr("check {node}'s network cable/interface and routes; then rerun doctor", node=name)),
        "hostkey-changed": (tr("{node}'s host key CHANGED (REMOTE HOST IDENTIFICATION HAS CHANGED); ssh refuses to "
                               "connect", node=name),
                            tr("if {node} was re-created on purpose: dscluster config trust {node}; if not, someone "
                               "may be intercepting: do not connect", node=name)),
        "hostkey-unknown": (tr("{node}'s host key is not pinned in the cluster known_hosts (Host key verification "
                               "failed)", node=name),
                            tr("start the node agent on {node} (dscluster node start) so it publishes its host key; "
                               "if {node} was re-created on purpose: dscluster config trust {node}", node=name)),
        "auth": (tr("{target} refused the cluster key (Permission denied)", target=target),
                 tr("restart the node agent on {node} so it installs <shared>/.dscluster/cluster.pub for {user}; "
                    "check ssh_user in dscluster.toml", node=name, user=ctx.spec.ssh_user)),
        "dns": (tr("cannot resolve {addr}", addr=node.address),
                tr("use an IP address in dscluster.toml or add {addr} to /etc/hosts", addr=node.address)),
        "closed": (tr("{target} closed the connection: {detail}", target=target, detail=why.detail),
                   tr("look at the node agent's log on {node}; sshd may be refusing {user}", node=name,
                      user=ctx.spec.ssh_user)),
    }
    if why.kind in ("hostkey-changed", "hostkey-unknown") and name in ctx.hostkey_changed:
        why = type(why)("hostkey-changed", why.detail)
    if why.kind in ("refused", "timeout", "unreachable") and _is_simulated(ctx.spec):
        # A crashed or partitioned simulated node has no agent to start or cable to check.
        flag = "" if ctx.spec.name == "default" else f" --name {ctx.spec.name}"
        texts[why.kind] = (texts[why.kind][0], tr("simulated cluster: bring {node} back with "
                                                  "`dscluster sim heal{flag} {node}`", node=name, flag=flag))
    finding, fix = texts.get(why.kind, (
        tr("the probe failed on {node}: {detail}", node=name, detail=why.detail),
        tr("run `dscluster doctor --debug` and check that {node} has a working python3", node=name)))
    return failed(name, "ssh", finding, fix, reason=why.kind, stderr=why.detail)


def _is_simulated(spec) -> bool:
    """The spec `dscluster sim up` generated (its hints differ: `sim heal`, not `node start`)."""
    from dscluster.cluster.spec import sim_spec_path

    path = getattr(spec, "path", None)
    try:
        return path is not None and Path(path).resolve() == sim_spec_path(spec.name).resolve()
    except (OSError, ValueError):
        return False


def check_reach(ctx: DoctorContext, node) -> CheckResult:
    """pdsh runs on the master and sshes to every node, the master itself included (DeepSpeed #4907)."""
    name, master = ctx.node_name(node), ctx.master_facts
    if master is None:
        return skipped(name, "reach", tr("not checked: the master did not answer"))
    state = (master.get("ssh_banners") or {}).get(name, "not tried")
    mname = ctx.node_name(ctx.master)
    if state == "ok":
        what = tr("the master reaches itself on port {port}", port=node.ssh_port) if ctx.is_master(node) else \
            tr("{master} reaches sshd on port {port}", master=mname, port=node.ssh_port)
        return passed(name, "reach", what)
    return failed(name, "reach", tr("{master} cannot open {addr}:{port} ({state}); DeepSpeed's pdsh runs from {master}",
                                    master=mname, addr=node.address, port=node.ssh_port, state=state),
                  tr("let {master} reach {node} on port {port} (firewall, routes, the address in dscluster.toml)",
                     master=mname, node=name, port=node.ssh_port))


def check_names(ctx: DoctorContext, node) -> CheckResult:
    """Addresses must resolve, to the same IPs everywhere, never to loopback; a node name that
    resolves must agree with its address (ssh itself uses the address from the spec)."""
    name, facts = ctx.node_name(node), ctx.facts(node)
    res = facts.get("resolve") or {}
    if "error" in res:
        return failed(name, "names", tr("cannot resolve names: {err}", err=res["error"]), tr("check /etc/hosts"))
    mine = res.get("map") or {}
    addresses = [n.address for n in ctx.spec.nodes]
    bad = [a for a in addresses if isinstance(mine.get(a), dict)]
    if bad:
        return failed(name, "names", tr("cannot resolve {names}", names=", ".join(bad)),
                      tr("add {names} to /etc/hosts on {node}, or use IP addresses in dscluster.toml",
                         names=", ".join(bad), node=name))
    loop = [a for a in addresses if any(ip.startswith("127.") for ip in mine.get(a) or [])]
    if loop and len(ctx.spec.nodes) > 1:
        return failed(name, "names", tr("{names} resolves to a loopback address on {node}", names=", ".join(loop), node=name),
                      tr("remove the 127.0.x.1 line for {names} from /etc/hosts on {node}; other nodes must reach it",
                         names=", ".join(loop), node=name))
    master = ctx.master_facts
    if master and not ctx.is_master(node):
        theirs = (master.get("resolve") or {}).get("map") or {}
        diff = [f"{a} → {','.join(mine[a])} (≠ {','.join(theirs[a])})" for a in addresses
                if isinstance(theirs.get(a), list) and mine.get(a) != theirs[a]]
        if diff:
            return failed(name, "names", tr("resolves differently from {master}: {diff}",
                                            master=ctx.node_name(ctx.master), diff="; ".join(diff)),
                          tr("make /etc/hosts (or DNS) agree on every node, or use IP addresses in dscluster.toml"))
    wrong = [f"{n.name} → {','.join(mine[n.name])} (≠ {n.address})" for n in ctx.spec.nodes
             if n.name != n.address and isinstance(mine.get(n.name), list)
             and not set(mine[n.name]) & set(mine.get(n.address) or [])]
    if wrong:
        return failed(name, "names", tr("node names point elsewhere than dscluster.toml: {wrong}", wrong="; ".join(wrong)),
                      tr("fix /etc/hosts on {node} (or the addresses in dscluster.toml) so they agree", node=name))
    unresolved = [n.name for n in ctx.spec.nodes if n.name != n.address and isinstance(mine.get(n.name), dict)]
    if unresolved:
        return warned(name, "names", tr("{names} do not resolve here (ssh uses the addresses, so this only "
                                        "confuses logs and tools)", names=", ".join(unresolved)),
                      tr("add the node names to /etc/hosts on {node}", node=name))
    own = res.get("hostname_ips")
    if isinstance(own, dict):
        return warned(name, "names", tr("its own hostname {host} does not resolve (gloo falls back to loopback)",
                                        host=res.get("hostname")),
                      tr("add {host} to /etc/hosts on {node}", host=res.get("hostname"), node=name))
    return passed(name, "names", tr("{n} node addresses resolve as on the master", n=len(addresses)))


def check_shared(ctx: DoctorContext, node) -> CheckResult:
    name, sh = ctx.node_name(node), ctx.facts(node).get("shared") or {}
    path = str(ctx.spec.shared_dir)
    mname = ctx.node_name(ctx.master)
    if "error" in sh:
        return failed(name, "shared", tr("checking {path} failed: {err}", path=path, err=sh["error"]),
                      tr("check {path} on {node}", path=path, node=name))
    if not sh.get("exists"):
        return failed(name, "shared", tr("{path} does not exist on {node}", path=path, node=name),
                      tr("mount the shared storage at {path} on {node} (the same path on every node)",
                         path=path, node=name))
    if sh.get("writable") is False:
        return failed(name, "shared", tr("{path} is not writable by {user}: {err}", path=path,
                                         user=ctx.spec.ssh_user, err=sh.get("write_error", "")),
                      tr("chown/chmod {path} so {user} can write it on {node}", path=path, user=ctx.spec.ssh_user,
                         node=name))
    if ctx.is_master(node):
        acks = set(sh.get("acks") or [])
        reachable_peers = [ctx.node_name(n) for n in ctx.spec.nodes[1:] if ctx.facts(n) is not None]
        missing = [p for p in reachable_peers if p not in acks]
        if missing:
            # A peer that did not see the master's nonce reports it itself; the master only notes it.
            return warned(name, "shared", tr("{nodes} did not confirm the nonce written here", nodes=", ".join(missing)),
                          tr("see the shared check of {nodes}", nodes=", ".join(missing)))
    elif ctx.master_facts is None:
        return skipped(name, "shared", tr("not compared: the master did not answer"))
    elif not sh.get("master_nonce"):
        return failed(name, "shared", tr("{path} on {node} is not the same directory as on {master}: the nonce "
                                         "{master} wrote there is not visible here within {s:.0f} s",
                                         path=path, node=name, master=mname, s=ctx.wait_s),
                      tr("mount the same shared storage at {path} on {node} as on {master} (a local directory "
                         "with the same name is not shared)", path=path, node=name, master=mname))
    space = sh.get("space") or {}
    free = space.get("free", 0)
    where = f"{sh.get('fstype', '?')} {sh.get('source', '')}".strip()
    text = tr("{path} shared ({where}), writable, {free:.1f} GiB free", path=path, where=where, free=free / GiB)
    if free < SHARED_FREE_MIN:
        return failed(name, "shared", text, tr("free space on {path}: checkpoints need room", path=path))
    if free < SHARED_FREE_WARN:
        return warned(name, "shared", text, tr("free space on {path}: checkpoints need room", path=path))
    return passed(name, "shared", text)


def check_port(ctx: DoctorContext, node) -> CheckResult:
    name, port, master = ctx.node_name(node), ctx.master_port, ctx.master_facts
    mname, maddr = ctx.node_name(ctx.master), ctx.master.address
    if master is None:
        return skipped(name, "port", tr("not checked: the master did not answer"))
    server = master.get("port_server") or {}
    if ctx.is_master(node) and server.get("free") is False:
        owner = server.get("owner") or {}
        who = tr(" by pid {pid} ({cmd})", pid=owner["pid"], cmd=owner.get("cmdline", "")) if owner else ""
        return failed(name, "port", tr("master port {port} is already in use on {node}{who}", port=port, node=name,
                                       who=who),
                      tr("stop the program using it (`ss -ltnp 'sport = :{port}'` on {node}) or pick another port "
                         "(--master-port)", port=port, node=name), owner=owner)
    if server.get("free") is False:
        return skipped(name, "port", tr("not checked: port {port} is busy on the master", port=port))
    state = (ctx.facts(node).get("port_client") or {}).get("result", "not tried")
    if state == "ok":
        what = (tr("port {port} free on the master", port=port) if ctx.is_master(node)
                else tr("reaches {addr}:{port}", addr=maddr, port=port))
        return passed(name, "port", what)
    return failed(name, "port", tr("cannot reach the master port {addr}:{port} ({state})", addr=maddr, port=port,
                                   state=state),
                  tr("open TCP port {port} on {master} to {node} (firewall; docker: --network host)", port=port,
                     master=mname, node=name))


def clock_offset(outcome) -> tuple[float, float]:
    """(offset estimate, uncertainty) of a node's clock vs this machine's, from one round trip.

    The probe stamps its start and end; ssh set-up and python start-up bound the uncertainty,
    while the probe's own waits do not widen it.
    """
    f = outcome.facts
    hi = f["time_start"] - outcome.sent  # the probe started after we sent it
    lo = f["time_end"] - outcome.received  # and ended before we received it
    return (hi + lo) / 2, max(0.0, (hi - lo) / 2)


def check_clock(ctx: DoctorContext, node) -> CheckResult:
    name = ctx.node_name(node)
    if ctx.master_facts is None:
        return skipped(name, "clock", tr("not compared: the master did not answer"))
    off, unc = clock_offset(ctx.outcomes[name])
    moff, munc = clock_offset(ctx.outcomes[ctx.node_name(ctx.master)])
    skew, err = off - moff, unc + munc
    text = tr("{skew:+.1f} s vs the master (±{err:.1f} s)", skew=skew, err=err)
    if abs(skew) - err > CLOCK_SKEW_MAX_S:
        return failed(name, "clock", tr("clock is off by {skew:+.1f} s vs the master", skew=skew),
                      tr("enable time sync on {node} (chrony or systemd-timesyncd, same NTP server as the others)",
                         node=name), skew_s=skew)
    return passed(name, "clock", text, skew_s=skew)


def check_jit_lock(ctx: DoctorContext, node) -> CheckResult:
    name, jit = ctx.node_name(node), ctx.facts(node).get("jit") or {}
    if "error" in jit:
        return warned(name, "jit-lock", tr("could not scan the JIT cache: {err}", err=jit["error"]))
    locks = [lk for lk in jit.get("locks") or [] if lk.get("age_s", 0) >= JIT_LOCK_GRACE_S]
    if not locks:
        return passed(name, "jit-lock", tr("no stale lock in the torch extensions cache"))
    compiling = [f"{n}: {', '.join(((o.facts or {}).get('jit') or {}).get('compilers') or [])}"
                 for n, o in ctx.outcomes.items() if ((o.facts or {}).get("jit") or {}).get("compilers")]
    paths = " ".join(lk["path"] for lk in locks)
    if compiling:
        return warned(name, "jit-lock", tr("lock {paths} while a compiler runs ({who})", paths=paths,
                                           who="; ".join(compiling)),
                      tr("wait for the build to finish, then rerun doctor"))
    if all(lk.get("age_s", 0) < JIT_LOCK_STALE_S for lk in locks):
        return warned(name, "jit-lock", tr("lock {paths} is {age:.0f} s old and no compiler runs on the cluster's "
                                           "nodes", paths=paths, age=max(lk["age_s"] for lk in locks)),
                      tr("if no job is compiling anywhere that shares this home, remove it: rm -f {paths}",
                         paths=paths), locks=locks)
    return failed(name, "jit-lock", tr("stale lock {paths} and no compiler running: every job will hang at start",
                                       paths=paths),
                  tr("remove it: rm -f {paths}", paths=paths), locks=locks)


def check_iface(ctx: DoctorContext, node) -> CheckResult:
    name, route = ctx.node_name(node), ctx.facts(node).get("route") or {}
    if "error" in route or not route.get("iface"):
        return failed(name, "iface", tr("no route to the master {addr}: {err}", addr=ctx.master.address,
                                        err=route.get("error", "?")),
                      tr("add a route from {node} to {addr}", node=name, addr=ctx.master.address))
    iface, wanted = route["iface"], ctx.spec.network_interface
    text = tr("{iface} ({ip}) routes to the master", iface=iface, ip=route.get("source_ip"))
    if wanted and not ctx.is_master(node) and not iface.startswith(wanted.lstrip("=^")):
        return failed(name, "iface", text + tr(", not {wanted} from dscluster.toml", wanted=wanted),
                      tr("set network_interface = \"{iface}\" in dscluster.toml, or fix the routes on {node}",
                         iface=iface, node=name))
    if iface == "lo" and not ctx.is_master(node):
        return failed(name, "iface", text, tr("the master's address must not be a loopback address"))
    return passed(name, "iface", text, iface=iface)


def suggested_ifname(ctx: DoctorContext) -> str | None:
    """The value for NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME: the interfaces that route to the master."""
    if ctx.spec.network_interface:
        return ctx.spec.network_interface
    names = []
    for node in ctx.spec.nodes[1:] or ctx.spec.nodes:
        iface = ((ctx.facts(node) or {}).get("route") or {}).get("iface")
        if iface and iface != "lo" and iface not in names:
            names.append(iface)
    return ",".join(names) or None
