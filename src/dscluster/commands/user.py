"""`dscluster user add|remove|list|password`: the people of a cluster.

Each person is a [[users]] table of the cluster spec (name, UID, admin) and an OS account with that UID
on every node (node/accounts.py), their SSH key, a directory of their own on the shared storage, and a
password for the hub on the master (node/hubpass.py), printed once, here, to whoever added them.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
from pathlib import Path

from dscluster.cluster.spec import ClusterSpec, load_spec, resolve_spec, with_users
from dscluster.cluster.specmodel import SIM_RUNTIME_ROOT, UserSpec
from dscluster.console import OK, WARN, next_steps
from dscluster.errors import ClusterError, ConfigError
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr
from dscluster.node import accounts, hubpass


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("user", help=tr("the people of the cluster: add, remove, list, password"),
                                   description=tr("People of the cluster: an account with the same UID on every "
                                                  "node, their SSH key, their own directory on the shared "
                                                  "storage, and a password for the hub on the master."))
    verbs = parser.add_subparsers(dest="user_command", metavar="ACTION")
    add = verbs.add_parser("add", help=tr("add a person (prints their hub password once)"))
    add.add_argument("name", metavar="NAME", help=tr("their login name, e.g. alice"))
    add.add_argument("--key", metavar="PUBKEY_FILE", help=tr("their SSH public key file (e.g. alice.pub)"))
    add.add_argument("--uid", type=int, help=tr("their UID on every node (default: the next free one from 2001)"))
    add.add_argument("--admin", action="store_true", help=tr("a hub administrator"))
    add.add_argument("--record-only", action="store_true",
                     help=tr("only record them in the spec and the hub (the accounts were made by hand)"))
    add.add_argument("--here", action="store_true",
                     help=tr("make the account on this machine only (a node dscluster cannot reach as root; node containers need not: user add reaches them from the controller)"))
    remove = verbs.add_parser("remove", help=tr("remove a person's accounts (their shared directory is kept)"))
    remove.add_argument("name", metavar="NAME", help=tr("their login name"))
    remove.add_argument("--here", action="store_true", help=tr("remove the account on this machine only"))
    listing = verbs.add_parser("list", help=tr("list the people of the cluster"))
    listing.add_argument("--json", action="store_true", help=tr("print as JSON"))
    password = verbs.add_parser("password", help=tr("give a person a new hub password (printed once)"))
    password.add_argument("name", metavar="NAME", help=tr("their login name"))
    for verb, func in ((add, cmd_add), (remove, cmd_remove), (listing, cmd_list), (password, cmd_password)):
        verb.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec (dscluster.toml)"))
        verb.set_defaults(func=func)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _spec(args: argparse.Namespace) -> ClusterSpec:
    spec = resolve_spec(args.cluster, as_this_user=False)
    if spec.path is None or spec.path.suffix != ".toml":
        raise ConfigError(tr("the people of a cluster are recorded in its dscluster.toml, not in a hostfile"),
                          tr("pass --cluster dscluster.toml (create one with dscluster init)"), setting="cluster")
    return spec


def is_simulated(spec: ClusterSpec) -> bool:
    """A running simulated cluster's spec: its nodes share this machine's accounts."""
    try:
        state = json.loads((SIM_RUNTIME_ROOT / spec.name / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return spec.path is not None and Path(str(state.get("spec_path", ""))).resolve() == spec.path.resolve()


def _record(spec: ClusterSpec, people: tuple[UserSpec, ...], engine: str | None = None) -> ClusterSpec:
    """Write the people into the spec file and its published copy (the simulated cluster's, or the node
    containers', through the master host as `up` wrote it)."""
    assert spec.path is not None
    text = with_users(spec.path.read_text(encoding="utf-8"), people)
    atomic_write_text(spec.path, text, mode=spec.path.stat().st_mode & 0o777)
    spec = load_spec(spec.path)
    if is_simulated(spec):
        from dscluster.cluster import identity  # noqa: PLC0415

        identity.publish_spec(spec)
    elif engine:
        done = _team().publish_spec(spec, _host(spec.master))
        if not done.ok:
            raise ClusterError(tr("could not publish the spec to {path}: {err}", path=spec.shared_dir / ".dscluster",
                                  err=done.stderr.strip()[-300:]),
                               tr("check that the master host can write it, then run the same command again"))
    return spec


def _on_nodes(spec: ClusterSpec, argv_for, name: str, uid: int | None, here: bool = False,
              removing: bool = False) -> None:
    """Run a node script as root on every node (on this machine only for the simulated cluster, whose nodes
    share its accounts, and with --here); fail with the manual steps."""
    failures = []
    here = here or is_simulated(spec)
    for node in spec.nodes:
        done = _run_as_root(spec.master if here else node, argv_for(spec.master if here else node), here)
        result = accounts.outcome("localhost" if here else node.name, done.returncode, done.stderr, name, uid)
        if not result.ok:
            failures.append(result.message)
        if here:
            break  # one machine, one set of accounts
    if failures:
        message = (tr("could not remove the accounts of {user}:\n  {errors}", user=name, errors="\n  ".join(failures))
                   if removing else
                   tr("could not make the accounts of {user}:\n  {errors}", user=name, errors="\n  ".join(failures)))
        raise ClusterError(message,
                           accounts.manual_steps(name, uid or 0, spec) if uid else
                           tr("on every node, as root: userdel --remove {user}", user=name))


def _host(node):
    """The operator's own ssh to a host, as `up` reaches it (env DSCLUSTER_HOST_SSH_CONFIG too)."""
    from dscluster.deploy.hosts import HostSSHRunner  # noqa: PLC0415

    return HostSSHRunner(node.address, config=os.environ.get("DSCLUSTER_HOST_SSH_CONFIG"))


def _run_as_root(node, argv: list[str], here: bool):
    """A node script as root: on this machine (`here`: the simulated cluster's nodes share its accounts,
    or --here), else over the operator's own ssh to the host. Its result has returncode, stdout and stderr."""
    if here:
        return accounts.run_here(argv)
    return _host(node).run(accounts.as_root(argv), timeout=120)


def _containers(spec: ClusterSpec, here: bool) -> str | None:
    """The engine of the cluster's node containers when `dscluster up` runs them (deploy/team.py), else None."""
    if here or is_simulated(spec):
        return None
    return _team().running_engine(spec, _host(spec.master))


def _in_master(spec: ClusterSpec, engine: str, argv: list[str], name: str, uid: int | None, stdin: str | None = None):
    """A node script as root in the master's container; fails with the manual steps."""
    done = _team().in_container(spec, engine, _host(spec.master), argv, stdin=stdin)
    result = accounts.outcome(spec.master.name, done.returncode, done.stderr, name, uid)
    if not result.ok:
        raise ClusterError(tr("could not make the accounts of {user}:\n  {errors}", user=name, errors=result.message),
                           accounts.manual_steps(name, uid or 0, spec))
    return done


def _identity(spec: ClusterSpec, name: str, uid: int, here: bool, engine: str | None = None) -> str:
    """The public half of the person's cluster identity, made on the master (in its container, with `engine`)
    as them: their runs reach every node as them with it (their ranks run under their own UID)."""
    from dscluster.cluster.hostkeys import known_hosts_path  # noqa: PLC0415

    try:  # the operator's pins: a person trusts the nodes' host keys as the operator does
        pins = known_hosts_path(spec).read_text(encoding="utf-8")
    except OSError:
        pins = ""
    here = here or is_simulated(spec)
    argv = accounts.identity_argv(name, spec.name, pins)
    done = _in_master(spec, engine, argv, name, uid) if engine else _run_as_root(spec.master, argv, here)
    result = accounts.outcome("localhost" if here else spec.master.name, done.returncode, done.stderr, name, uid)
    pub = done.stdout.strip().splitlines()[-1] if result.ok and done.stdout.strip() else ""
    if not result.ok or not pub.startswith("ssh-ed25519 "):
        raise ClusterError(tr("could not make the cluster key of {user}: {error}", user=name,
                              error=result.message or done.stdout[-300:]),
                           accounts.manual_steps(name, uid, spec))
    return pub


def _grant_here(name: str, spec: ClusterSpec) -> None:
    """On the simulated cluster: let the person reach this Python, the shared directory and the hub's
    single-user config (a traverse-only ACL entry on root's directories in the way, as for the node user)."""
    from dscluster.sim.nodeuser import ensure_access  # noqa: PLC0415

    entry = pwd.getpwnam(name)
    ensure_access(entry, spec.shared_dir)
    hub_public = hubpass.hub_home() / "singleuser"
    hub_public.mkdir(parents=True, exist_ok=True)
    ensure_access(entry, hub_public)


def cmd_add(args: argparse.Namespace) -> int:
    spec = _spec(args)
    name = args.name
    accounts.check_name(name, spec)
    if spec.person(name) and args.here and not args.record_only:
        return _remake_here(spec, spec.person(name), args)
    if spec.person(name):
        raise ConfigError(tr("user {user} already exists in {spec}", user=name, spec=spec.path),
                          tr("dscluster user list; a new hub password: dscluster user password {user}", user=name),
                          setting="name")
    key = accounts.read_pubkey(args.key) if args.key else ""
    uid = accounts.choose_uid(spec, args.uid, name) if not args.record_only or args.uid is None else args.uid
    engine = None if args.record_only else _containers(spec, args.here)
    if not args.record_only:
        _add_accounts(spec, name, uid, key, args, engine)
    spec = _record(spec, (*spec.users, UserSpec(name=name, uid=uid, admin=args.admin)), engine)
    password = hubpass.new_password()
    hubpass.set_password(name, password)
    if args.key:
        hubpass.record_key(name, args.key)  # `hub url` prints their tunnel line with its private half
    if engine:  # the hub runs in the master's container: the password goes there (stdin); then every node
        # container's agent makes the account from root's records
        _in_master(spec, engine, _team().hubpass_argv("set", name), name, uid, stdin=password + "\n")
        _wait_in_containers(spec, engine, name, uid)
    print(f"{OK} " + tr("{user} (uid {uid}) added to cluster {cluster}: an account on {n} node(s), their "
                         "directory {dir}", user=name, uid=uid, cluster=spec.name, n=len(spec.nodes),
                         dir=spec.shared_dir / "users" / name))
    if not key:
        print(f"{WARN} " + tr("no SSH key given: they can use the hub, not ssh; add one later with "
                              "dscluster user remove {user} && dscluster user add {user} --uid {uid} --key FILE",
                              user=name, uid=uid))
    # Printed once, to the terminal of whoever added them; only its salted hash is kept.
    print(tr("Their hub password (shown only now; hand it over privately): {password}", password=password))
    print(next_steps("dscluster hub start", "dscluster hub url", "dscluster user list"))
    return 0


def _add_accounts(spec: ClusterSpec, name: str, uid: int, key: str, args: argparse.Namespace,
                  engine: str | None) -> None:
    """Their account on every node, their cluster key on the master (as them), then root's records of their keys
    and UID on every node; with node containers, the master's part is made in its container."""
    shared = str(spec.shared_dir)
    if args.here or is_simulated(spec):  # the shared storage is this machine's: root makes its layout right
        from dscluster.sharedlayout import make_right  # noqa: PLC0415

        make_right(spec.shared_dir)
    # the account, and root's record of them (the node containers' agents make their accounts from it)
    _on_nodes(spec, lambda node: accounts.add_argv(name, uid, key, "", admin=args.admin), name, uid, args.here)
    if args.here or is_simulated(spec):
        _grant_here(name, spec)
    if engine:  # the shared storage's model, as root in the master's container (sharedlayout.py), then their home
        # in the container's state volume and their directory on the shared storage
        laid = _team().in_container(spec, engine, _host(spec.master), ["python", "-m", "dscluster.sharedlayout", shared])
        if not laid.ok:
            print(f"{WARN} " + (laid.stderr.strip()[-500:] or tr("could not lay out {path}", path=shared)))
        _in_master(spec, engine, accounts.add_argv(name, uid, "", shared, home_base=_team().HOMES, record=False), name, uid)
    keys = (key, _identity(spec, name, uid, args.here, engine))  # theirs, and their runs' (on the master)
    _on_nodes(spec, lambda node: accounts.add_argv(name, uid, key, shared if node == spec.master and not engine
                                                   else "", keys, admin=args.admin), name, uid, args.here)


def _team():
    """deploy/team.py, imported only where a command needs it (the node containers' part)."""
    from dscluster.deploy import team  # noqa: PLC0415

    return team


def _wait_in_containers(spec: ClusterSpec, engine: str, name: str, uid: int | None) -> None:
    missing = _team().wait_for_accounts(spec, engine, _host, name, uid)
    if missing:
        raise ClusterError(tr("the node containers did not pick up the change for {user} within {s} s: {nodes}",
                              user=name, s=int(_team().ACCOUNT_WAIT_S), nodes=", ".join(missing)),
                           tr("is the node image older than this dscluster? `dscluster down`, then `dscluster up` "
                              "with a current image; its log: ssh HOST {engine} logs {container}", engine=engine,
                              container=f"dscluster-{spec.name}"))


def _remake_here(spec: ClusterSpec, person: UserSpec, args: argparse.Namespace) -> int:
    """A recorded person's account made again on this machine (a new container of the master after
    `down`/`up`), with their recorded UID; their hub password is kept."""
    key = accounts.read_pubkey(args.key) if args.key else ""
    _on_nodes(spec, lambda node: accounts.add_argv(person.name, person.uid, key, str(spec.shared_dir)),
              person.name, person.uid, True)
    print(f"{OK} " + tr("{user} (uid {uid}) made again on this machine; their hub password is unchanged",
                         user=person.name, uid=person.uid))
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    spec = _spec(args)
    person = spec.person(args.name)
    if person is None:
        raise ConfigError(tr("no user {user} in {spec}", user=args.name, spec=spec.path),
                          tr("see who there is: dscluster user list"), setting="name")
    engine = _containers(spec, args.here)
    _on_nodes(spec, lambda node: accounts.remove_argv(person.name), person.name, None, args.here, removing=True)
    if engine:  # each node container's agent removes the account once root's record is gone
        _in_master(spec, engine, _team().hubpass_argv("remove", person.name), person.name, None)
        _wait_in_containers(spec, engine, person.name, None)
    if is_simulated(spec):
        from dscluster.sim.nodeuser import revoke_traverse  # noqa: PLC0415

        revoke_traverse(person.uid, [spec.shared_dir, hubpass.hub_home() / "singleuser"])
    spec = _record(spec, tuple(u for u in spec.users if u.name != person.name), engine)
    hubpass.remove_password(person.name)
    print(f"{OK} " + tr("{user} removed: their accounts and hub password are gone; their directory {dir} is kept "
                         "(their runs and checkpoints)", user=person.name, dir=spec.shared_dir / "users" / person.name))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    spec = _spec(args)
    with_password = set(hubpass.load()) if os.access(hubpass.password_file(), os.R_OK) else set()
    rows = [{"name": u.name, "uid": u.uid, "admin": u.admin, "hub_password": u.name in with_password,
             "dir": str(spec.shared_dir / "users" / u.name)} for u in spec.users]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(tr("no users yet in cluster {cluster}", cluster=spec.name))
        print(next_steps("dscluster user add NAME --key NAME.pub"))
        return 0
    print(f"{'NAME':<16} {'UID':>6}  {'ADMIN':<5}  {'HUB':<3}  DIR")
    for r in rows:
        print(f"{r['name']:<16} {r['uid']:>6}  {'yes' if r['admin'] else '-':<5}  "
              f"{'yes' if r['hub_password'] else '-':<3}  {r['dir']}")
    return 0


def cmd_password(args: argparse.Namespace) -> int:
    spec = _spec(args)
    if spec.person(args.name) is None:
        raise ConfigError(tr("no user {user} in {spec}", user=args.name, spec=spec.path),
                          tr("add them first: dscluster user add {user}", user=args.name), setting="name")
    password = hubpass.new_password()
    hubpass.set_password(args.name, password)
    engine = _containers(spec, False)
    if engine:
        _in_master(spec, engine, _team().hubpass_argv("set", args.name), args.name, None, stdin=password + "\n")
    print(tr("Their new hub password (shown only now; hand it over privately): {password}", password=password))
    return 0
