"""Removing a simulated cluster, including whatever a killed process left behind.

Everything is found by the cluster's name (namespaces, interfaces, runtime dir), with the recorded
state only as a hint, so `down` and a later `up` clean up after an `up` that was SIGKILLed halfway.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

from dscluster.cluster.runner import run_parallel, run_subprocess
from dscluster.cluster.spec import load_spec, sim_spec_path
from dscluster.sim import network
from dscluster.sim.names import RUNTIME_ROOT, SimNames, check_name
from dscluster.sim.procs import global_lock, recorded, require_root, terminate


def _kill_namespace_processes(names: SimNames, state: dict | None) -> None:
    pids: set[int] = set()
    for ns in network.existing_netns(names):
        pids.update(network.netns_pids(ns))
    for entry in (state or {}).get("nodes", []):
        pids.update(p for p in (recorded(entry, "pid1"), recorded(entry, "launcher_pid")) if p)  # identity, not liveness
    terminate(pids)


def _close_ssh_masters(state: dict | None) -> None:
    """End this cluster's ControlMaster connections (they would linger ControlPersist seconds)."""
    try:
        spec = load_spec(state["spec_path"]) if state else None
    except Exception:  # noqa: BLE001 - a broken leftover spec must not block cleanup
        spec = None
    if spec is None:
        return
    from dscluster.cluster.ssh import control_path, ssh_base_argv, ssh_config_path

    prefix = Path(control_path(spec).replace("%C", ""))
    if ssh_config_path(spec).exists():
        run_parallel(lambda n: run_subprocess(n.name, ssh_base_argv(spec, n)[:-1] + ["-O", "exit", n.name],
                                              timeout=3), spec.nodes)
        # Runs' own masters (runs/supervising/masters.py) have sockets of their own under the same prefix.
        node = spec.nodes[0] if spec.nodes else None
        own = [s for s in prefix.parent.glob(prefix.name + "r*") if s.is_socket()] if node is not None else []
        run_parallel(lambda sock: run_subprocess(node.name, ssh_base_argv(spec, node)[:-1] + [
            "-o", f"ControlPath={sock}", "-O", "exit", node.name], timeout=3), own)
    # A master whose node died first can leave its socket file behind; this cluster's have its prefix.
    for sock in prefix.parent.glob(prefix.name + "*"):
        sock.unlink(missing_ok=True)
    _remove_dead_sockets(prefix.parent)


def _remove_dead_sockets(folder: Path) -> None:
    """Socket files nobody listens on any more (their ssh master is gone) in a ControlPath dir."""
    for path in folder.glob("*"):
        if not path.is_socket():
            continue
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            try:
                probe.connect(str(path))
            except (ConnectionRefusedError, FileNotFoundError):
                path.unlink(missing_ok=True)
            except OSError:
                pass  # busy or unreadable: leave it


def _remove_lab_token(state: dict | None) -> None:
    """The master's JupyterLab dies with its namespace (SIGKILL: no `lab stop`), which would leave its
    token file in the node user's home. Removed through fsutil.open_dir: that home is the node user's,
    so a symlink planted on the way must not make root unlink files elsewhere."""
    if not (state and state.get("lab") and state.get("spec_path")):
        return
    import pwd

    from dscluster import fsutil

    try:
        spec = load_spec(state["spec_path"])
        home = Path(pwd.getpwnam(spec.ssh_user).pw_dir)
        fd = fsutil.open_dir(home / ".dscluster" / "lab" / spec.master.name)
    except Exception:  # noqa: BLE001 - nothing there (never started), or a spec already gone
        return
    try:
        for name in ("token", "lab.json"):
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)


def _remove_people(state: dict | None) -> None:
    """The people `dscluster user add` made for this cluster (its nodes share this machine's accounts):
    their accounts, traverse grants and hub passwords go with the spec that records them."""
    if not state or not state.get("spec_path"):
        return
    from dscluster.errors import ConfigError  # noqa: PLC0415
    from dscluster.node import accounts, hubpass  # noqa: PLC0415
    from dscluster.sim.nodeuser import revoke_traverse  # noqa: PLC0415

    try:
        spec = load_spec(state["spec_path"])
    except ConfigError:
        return
    for person in spec.users:
        accounts.run_here(accounts.remove_argv(person.name))
        try:
            revoke_traverse(person.uid, [spec.shared_dir, hubpass.hub_home() / "singleuser"])
        except OSError:
            pass  # an ACL entry left for a UID no one has is harmless; the account is what matters
        hubpass.remove_password(person.name)


def teardown(names: SimNames, purge: bool) -> None:
    state_file = names.runtime_dir / "state.json"
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = None
    _close_ssh_masters(state)
    from dscluster.sim.slurm import stop as stop_slurm

    stop_slurm(state)  # its daemons by PID; their state dir goes with the runtime dir below
    _kill_namespace_processes(names, state)
    _remove_lab_token(state)
    _remove_people(state)
    network.destroy(names)
    shutil.rmtree(names.runtime_dir, ignore_errors=True)
    if state and state.get("master_identity") and state.get("user_identity_dir"):
        shutil.rmtree(state["user_identity_dir"], ignore_errors=True)  # the key copy in the node user's home
    if state and state.get("spec_path"):
        base = Path(state["spec_path"]).parent
        Path(state["spec_path"]).unlink(missing_ok=True)
        shutil.rmtree(base / "cluster", ignore_errors=True)
        if purge:
            shutil.rmtree(base, ignore_errors=True)
            # Only the shared directory the sim created under its base goes: one given with
            # `sim up --shared DIR` is the user's (a project, a dataset) and is never deleted.
            shared = Path(state.get("shared_dir", base / "shared"))
            if shared.resolve().is_relative_to(base.resolve()):
                shutil.rmtree(shared, ignore_errors=True)
    elif purge:
        # Down already (a plain `sim down` removed the state and the spec): its runs, checkpoints and logs
        # are still where `sim up` puts them, and `sim down --purge` is how the README says they go.
        shutil.rmtree(sim_spec_path(names.name).parent, ignore_errors=True)


def down(name: str = "default", purge: bool = False) -> None:
    """Remove everything of the named cluster: processes, veths, namespaces, bridge, /etc/netns, runtime
    state, spec and identity (with `purge`, also the shared directory and logs). Safe to repeat."""
    require_root()
    check_name(name)
    with global_lock():
        teardown(SimNames(name), purge)


def leftovers(name: str) -> dict[str, list[str]]:
    """What of the named cluster still exists on this machine (empty lists after a clean `down`)."""
    names = SimNames(name)
    procs = []
    for ns in network.existing_netns(names):
        procs += [str(p) for p in network.netns_pids(ns)]
    return {"netns": network.existing_netns(names), "links": network.existing_links(names),
            "etc_netns": [str(p) for p in network.ETC_NETNS.glob(f"{names.netns_prefix}*")],
            "runtime": [str(names.runtime_dir)] if names.runtime_dir.exists() else [], "processes": procs}


def list_sims() -> list[str]:
    if not RUNTIME_ROOT.is_dir():
        return []
    return sorted(p.parent.name for p in RUNTIME_ROOT.glob("*/state.json"))

