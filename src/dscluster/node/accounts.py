"""The people of a cluster as OS accounts (`dscluster user add/remove`): the same name and UID on every
node, no password (`*`, as the node user: key-only ssh, the hub's own password), their SSH public key,
and a directory of their own on the shared storage (`<shared>/users/NAME`, theirs, 0755: others read it,
cannot write it).

One POSIX sh script does a node's part, run as root: on this machine for the simulated cluster (its
nodes share this machine's /etc/passwd), over the operator's own ssh (root, or `sudo -n`) on a real
one. What root writes into the person's home or the shared storage is written *as that person*
(`runuser`), so a symlink planted there cannot turn root's write into someone else's file.
"""

from __future__ import annotations

import pwd
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dscluster.cluster.specmodel import _USER_RE, PERSON_UID_MAX, PERSON_UID_MIN, ClusterSpec
from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.node.sshd import PEOPLE_DIR, PEOPLE_KEYS

# Exit codes of the node script, each a clear error below.
_EXISTS_OTHER_UID, _UID_TAKEN, _NOT_ROOT = 3, 4, 5
_KEY_RE = re.compile(r"^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)"
                     r"@openssh\.com) [A-Za-z0-9+/=]+( [^\r\n]*)?$")

# $1 name, $2 uid, $3 public key ('' for none), $4 shared dir ('' on nodes other than the master), $5 the
# lines of their file in the nodes' sshd key directory ('' to leave it: node/sshd.py PEOPLE_KEYS), $6 their
# record in PEOPLE_DIR ("UID" or "UID admin": node/people.py; '' to leave it). HOME_BASE: where homes go ('' =
# useradd's).
# users/, runs/, data/ and .dscluster-doctor/ (sticky, as /tmp) are made by root where it can (sharedlayout.py),
# else, with prometheus/runs/, by the shared dir's owner (the node user on most NFS exports): each person makes
# their own directory, runs, metrics targets and doctor's probe files there, and no one can remove another's.
ADD_SCRIPT = r"""
set -eu
name=$1 uid=$2 key=$3 shared=$4 keys=$5 record=${6:-}
[ "$(id -u)" -eq 0 ] || { echo "dscluster: not root" >&2; exit 5; }
if have=$(id -u "$name" 2>/dev/null); then
  [ "$have" = "$uid" ] || { echo "dscluster: $name has uid $have" >&2; exit 3; }
else
  if other=$(getent passwd "$uid"); then echo "dscluster: uid $uid is ${other%%:*}'s" >&2; exit 4; fi
  [ -z "$HOME_BASE" ] || { mkdir -p "$HOME_BASE" && chmod 755 "$HOME_BASE"; }
  # a node agent making the same account at the same moment (node/people.py) is not an error
  useradd --uid "$uid" --user-group --create-home ${HOME_BASE:+--home-dir "$HOME_BASE/$name"} --shell /bin/bash \
    --comment "dscluster user" "$name" || [ "$(id -u "$name" 2>/dev/null)" = "$uid" ]
fi
usermod -p '*' "$name"
if [ -n "$key" ]; then
  printf '%s\n' "$key" | runuser -u "$name" -- sh -c 'umask 077; mkdir -p "$HOME/.ssh"; cat > "$HOME/.ssh/authorized_keys"'
fi
if [ -n "$shared" ]; then
  # root's where the storage keeps root's files (sharedlayout.py): made by root without following anything (no -p,
  # an existing name is left as it is); NFS with root_squash refuses, and the shared dir's owner makes them below
  for d in users runs data .dscluster-doctor; do mkdir -m 1777 "$shared/$d" 2>/dev/null || true; done
  owner=$(stat -c %u "$shared") group=$(stat -c %g "$shared")
  setpriv --reuid="$owner" --regid="$group" --clear-groups \
    sh -c 'for d in users runs prometheus/runs .dscluster-doctor; do mkdir -p "$1/$d" && { [ ! -O "$1/$d" ] || chmod 1777 "$1/$d"; }; done' sh "$shared"
  runuser -u "$name" -- sh -c 'umask 022; mkdir -p "$1/users/$2" && [ -O "$1/users/$2" ] && chmod 755 "$1/users/$2"' \
    sh "$shared" "$name" || { echo "dscluster: $shared/users/$name is not $name's" >&2; exit 6; }
  # the shared dir itself root's, its provider writing through its own group, sticky (sharedlayout.py _settle_root):
  # only where that group is the provider's alone; NFS with root_squash refuses the chown and it stays as it was
  if [ "$owner" != 0 ] && [ "$(id -g "$owner" 2>/dev/null)" = "$group" ] && [ "$(getent passwd | awk -F: -v g="$group" '$4 == g' | wc -l)" -le 1 ] &&
     [ -z "$(getent group "$group" | cut -d: -f4)" ] && chown 0 "$shared" 2>/dev/null; then
    chmod 1775 "$shared"
  fi
fi
if [ -n "$keys" ]; then
  # root's file, which the person cannot edit: sshd reads a person's keys only from here
  umask 022
  mkdir -p "$KEYS_DIR" && chown root:root "${KEYS_DIR%/*}" "$KEYS_DIR" && chmod 755 "${KEYS_DIR%/*}" "$KEYS_DIR"
  tmp=$(mktemp "$KEYS_DIR/.$name.XXXXXX")
  printf '%s\n' "$keys" > "$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$KEYS_DIR/$name"
fi
if [ -n "$record" ]; then
  # root's record of the person beside their keys (uid, admin): what the node containers' agents make accounts from
  umask 022
  mkdir -p "$PEOPLE_DIR" && chown root:root "${PEOPLE_DIR%/*}" "$PEOPLE_DIR" && chmod 755 "${PEOPLE_DIR%/*}" "$PEOPLE_DIR"
  tmp=$(mktemp "$PEOPLE_DIR/.$name.XXXXXX")
  printf '%s\n' "$record" > "$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$PEOPLE_DIR/$name"
fi
"""

# $1 name, $2 cluster name, $3 the operator's pinned known_hosts of the cluster. On the master, as the
# person: their cluster identity (an ed25519 key without passphrase in their own
# ~/.dscluster/clusters/CLUSTER/, 0600 in 0700, made once), its public half printed, and the nodes' host keys
# as the operator pinned them (the records on the shared storage are the node user's say-so to a person:
# cluster/identity.py published_host_keys). Their runs reach the nodes as them (cluster/spec.py as_person).
IDENTITY_SCRIPT = r"""
set -eu
name=$1 cluster=$2 pins=$3
[ "$(id -u)" -eq 0 ] || { echo "dscluster: not root" >&2; exit 5; }
printf '%s' "$pins" | runuser -u "$name" -- sh -c 'umask 077; d="$HOME/.dscluster/clusters/$1"; mkdir -p "$d"
  chmod 700 "$d"; [ -f "$d/id_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -C "dscluster-$2@$1" -f "$d/id_ed25519" </dev/null
  pins=$(cat); [ -z "$pins" ] || printf "%s\n" "$pins" > "$d/known_hosts"
  cat "$d/id_ed25519.pub"' sh "$cluster" "$name"
"""

REMOVE_SCRIPT = r"""
set -eu
name=$1
[ "$(id -u)" -eq 0 ] || { echo "dscluster: not root" >&2; exit 5; }
if id -u "$name" >/dev/null 2>&1; then
  # their processes first (a JupyterLab, kernels): killed, then waited for until reaped, up to 20 s
  i=0
  while pgrep -u "$name" >/dev/null 2>&1 && [ "$i" -lt 100 ]; do
    pkill -KILL -u "$name" 2>/dev/null || true
    sleep 0.2; i=$((i + 1))
  done
  userdel --remove "$name" 2>/dev/null || userdel --remove --force "$name" 2>/dev/null || userdel --force "$name"
fi
rm -f "$KEYS_DIR/$name" "$PEOPLE_DIR/$name"
"""


@dataclass(frozen=True)
class NodeOutcome:
    """What a node's script did: `ok`, else the error to show."""

    node: str
    ok: bool
    message: str = ""


def check_name(name: str, spec: ClusterSpec) -> None:
    if not _USER_RE.match(name) or name == "root":
        raise ConfigError(tr("{user!r} is not a valid user name", user=name),
                          tr("use lower-case letters, digits, '_' or '-', starting with a letter, e.g. alice"),
                          setting="name")
    if name == spec.ssh_user:
        raise ConfigError(tr("{user!r} is the cluster's node user", user=name),
                          tr("choose the person's own name, e.g. dscluster user add alice"), setting="name")


def read_pubkey(path: str | Path) -> str:
    """One OpenSSH public key line from `path`; never a private key."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(tr("cannot read the public key {path}: {err}", path=path, err=err),
                          tr("pass the person's public key file, e.g. --key ~/alice.pub"), setting="key") from None
    if "PRIVATE KEY" in text or not _KEY_RE.match(text) or "\n" in text:
        raise ConfigError(tr("{path} is not one OpenSSH public key line", path=path),
                          tr("pass the .pub file (ssh-keygen -t ed25519 makes it beside the private key)"),
                          setting="key")
    return text


def choose_uid(spec: ClusterSpec, requested: int | None, name: str = "") -> int:
    """The requested UID, checked; else the UID of an account of that name made here before (an `add` that
    stopped half-way), else the UID of their own directory left on the shared storage (a person added again
    owns their files again), else the lowest one from PERSON_UID_MIN+1 that no one here has and that owns no
    files of a removed person on the shared storage (sharedlayout.files_left): a UID is never reused while
    someone's files remain."""
    from dscluster.sharedlayout import files_left  # noqa: PLC0415

    taken = {u.uid for u in spec.users}
    left = {uid: found for uid, found in files_left(spec.shared_dir).items() if uid not in taken}
    theirs = {uid for uid, found in left.items() if Path(spec.shared_dir) / "users" / name in found} if name else set()
    if requested is None and name:
        try:
            mine = pwd.getpwnam(name).pw_uid
            if PERSON_UID_MIN <= mine <= PERSON_UID_MAX and mine not in taken and (mine not in left or mine in theirs):
                return mine
        except KeyError:
            pass
        for uid in sorted(theirs):
            if PERSON_UID_MIN <= uid <= PERSON_UID_MAX and not _local_owner(uid):
                return uid
    if requested is not None and requested in left and requested not in theirs:
        raise ConfigError(tr("uid {uid} still owns {path}: files of someone removed, which the next person with "
                             "that uid would own", uid=requested, path=left[requested][0]),
                          tr("choose another --uid (or leave it out), or move those files away first"), setting="uid")
    if requested is not None:
        if not PERSON_UID_MIN <= requested <= PERSON_UID_MAX:
            raise ConfigError(tr("uid {uid} is out of range", uid=requested),
                              tr("use --uid with a number from {lo} to {hi}", lo=PERSON_UID_MIN, hi=PERSON_UID_MAX),
                              setting="uid")
        owner = next((u.name for u in spec.users if u.uid == requested), None) or _local_owner(requested)
        if owner:
            raise ConfigError(tr("uid {uid} is taken by {user}", uid=requested, user=owner),
                              tr("choose another --uid, or leave it out to take the next free one"), setting="uid")
        return requested
    for uid in range(PERSON_UID_MIN + 1, PERSON_UID_MAX + 1):
        if uid not in taken and uid not in left and spec.node_uid != uid and not _local_owner(uid):
            return uid
    raise ConfigError(tr("no free uid left"), tr("remove people who left: dscluster user remove NAME"), setting="uid")


def _local_owner(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def _script(text: str, home_base: str = "") -> str:
    return f"KEYS_DIR={PEOPLE_KEYS}\nPEOPLE_DIR={PEOPLE_DIR}\nHOME_BASE={shlex.quote(home_base)}\n" + text


def add_argv(name: str, uid: int, key: str, shared: str, keys: tuple[str, ...] = (), *, admin: bool = False,
             home_base: str = "", record: bool = True) -> list[str]:
    """The account (and on the master, with `shared`, their directory); with `keys`, their sshd key file
    (`restricted` lines: no agent or X11 forwarding, as the cluster key); with `record`, root's record of them
    (node/people.py; not inside a node container, where those records are the host's, read-only)."""
    lines = "\n".join(f"no-agent-forwarding,no-X11-forwarding {k.strip()}" for k in keys if k.strip())
    record = (f"{uid} admin" if admin else str(uid)) if record else ""
    return ["sh", "-c", _script(ADD_SCRIPT, home_base), "dscluster-user-add", name, str(uid), key, shared, lines,
            record]


def identity_argv(name: str, cluster: str, known_hosts: str = "") -> list[str]:
    return ["sh", "-c", IDENTITY_SCRIPT, "dscluster-user-identity", name, cluster, known_hosts.strip()]


def remove_argv(name: str) -> list[str]:
    return ["sh", "-c", _script(REMOVE_SCRIPT), "dscluster-user-remove", name]


def as_root(argv: list[str]) -> list[str]:
    """argv run as root on a node reached as any user: directly when root, else through `sudo -n`
    (never a password prompt)."""
    return ["sh", "-c", 'if [ "$(id -u)" -eq 0 ]; then exec "$@"; else exec sudo -n "$@"; fi', "sh", *argv]


def outcome(node: str, returncode: int, stderr: str, name: str, uid: int | None = None) -> NodeOutcome:
    """A node script's exit, as a sentence with what to do."""
    if returncode == 0:
        return NodeOutcome(node, True)
    said = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if returncode == _EXISTS_OTHER_UID:
        return NodeOutcome(node, False, tr("{node}: {user} already exists there with another uid ({said}); a "
                                           "person must have one uid on every node: remove that account or "
                                           "add them with --uid set to it", node=node, user=name, said=said))
    if returncode == _UID_TAKEN:
        return NodeOutcome(node, False, tr("{node}: uid {uid} is taken ({said}); choose another --uid",
                                           node=node, uid=uid, said=said))
    if returncode in (_NOT_ROOT, 1, 255) and ("sudo" in stderr or "not root" in stderr or returncode == 255):
        return NodeOutcome(node, False, tr("{node}: cannot act as root there ({said})", node=node, said=said))
    return NodeOutcome(node, False, tr("{node}: exit {rc}: {said}", node=node, rc=returncode, said=said))


def run_here(argv: list[str]) -> subprocess.CompletedProcess:
    """A node script on this machine (the simulated cluster's nodes share its accounts)."""
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False)


def manual_steps(name: str, uid: int, spec: ClusterSpec) -> str:
    """What an administrator runs by hand on each node when dscluster cannot act as root there."""
    return tr("on every node, as root: useradd --uid {uid} --user-group --create-home --shell /bin/bash {name} && "
              "usermod -p '*' {name}; put their key in ~{name}/.ssh/authorized_keys (0600); on the master: "
              "mkdir -p {shared}/users/{name} && chown {name}: {shared}/users/{name}; then record them: "
              "dscluster user add {name} --uid {uid} --record-only", uid=uid, name=name, shared=spec.shared_dir)
