"""The cluster's SSH identity and the shared-directory handshake with the node agents.

- The identity is an ed25519 key pair without a passphrase, private key 0600 in a 0700 directory
  (`cluster_state_dir(spec)`, default <home>/clusters/<name>/). Only the public half ever leaves it:
  `publish_cluster_pubkey` copies it to <shared>/.dscluster/cluster.pub, where node agents install it.
- `publish_spec` puts the spec (not secret) next to it, for the master's node user.
- Node agents publish their host public keys to <shared>/.dscluster/hostkeys/<node>.json
  (`{"name", "addresses", "ssh_port", "key"}`); `cluster/ssh.py` pins them in a per-cluster known_hosts.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

from dscluster import fsutil, paths
from dscluster.cluster.spec import SPEC_FILENAME, ClusterSpec, format_spec
from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr

IDENTITY_NAME = "id_ed25519"
SHARED_META = ".dscluster"


def cluster_state_dir(spec: ClusterSpec, *, create: bool = True) -> Path:
    """The directory holding the identity, ssh_config and known_hosts (0700)."""
    path = Path(spec.state_dir) if spec.state_dir else paths.home() / "clusters" / spec.name
    if create:
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    return path


def identity_path(spec: ClusterSpec) -> Path:
    return cluster_state_dir(spec, create=False) / IDENTITY_NAME


def shared_meta_dir(shared_dir: str | os.PathLike) -> Path:
    return Path(shared_dir) / SHARED_META


def cluster_pubkey_path(shared_dir: str | os.PathLike) -> Path:
    return shared_meta_dir(shared_dir) / "cluster.pub"


def hostkeys_dir(shared_dir: str | os.PathLike) -> Path:
    return shared_meta_dir(shared_dir) / "hostkeys"


def generate_keypair(path: Path, comment: str) -> None:
    """ssh-keygen an ed25519 key without passphrase at `path` (+ `.pub`); private key 0600."""
    keygen = shutil.which("ssh-keygen")
    if not keygen:
        raise ConfigError(tr("ssh-keygen is not installed"),
                          tr("install the OpenSSH client: apt-get install openssh-client"))
    for p in (path, path.with_name(path.name + ".pub")):
        p.unlink(missing_ok=True)
    proc = subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise ConfigError(tr("ssh-keygen failed: {err}", err=proc.stderr.strip()),
                          tr("check that {dir} is writable", dir=path.parent))
    os.chmod(path, 0o600)


def ensure_identity(spec: ClusterSpec) -> Path:
    """Create the cluster identity if missing; check its permissions if present. Returns the key path."""
    state = cluster_state_dir(spec)
    key = state / IDENTITY_NAME
    if key.exists() and key.with_name(key.name + ".pub").exists():
        mode = stat.S_IMODE(key.stat().st_mode)
        if mode & 0o077:
            os.chmod(key, 0o600)  # ssh refuses group/world-readable keys; repair rather than fail later
        return key
    generate_keypair(key, f"dscluster-{spec.name}")
    return key


def public_key(spec: ClusterSpec) -> str:
    path = identity_path(spec).with_name(IDENTITY_NAME + ".pub")
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ConfigError(tr("cluster {name!r} has no SSH identity yet", name=spec.name),
                          tr("create it with: dscluster init"), setting="cluster") from None


def leases_dir(shared_dir: str | os.PathLike) -> Path:
    """<shared>/.dscluster/leases: the runs' GPU leases (runs/leases/files.py), sticky and writable by every
    user who launches (1777, as /tmp). Made with `.dscluster` by its owner: a node user launching from the
    master could not create it there."""
    return shared_meta_dir(shared_dir) / "leases"


def ensure_shared_meta(shared_dir: str | os.PathLike) -> Path:
    """<shared>/.dscluster and its hostkeys/ (0755): written by root/the operator, read by everyone; and
    its leases/ (1777), where every launching user takes and gives back GPU leases."""
    meta = shared_meta_dir(shared_dir)
    try:
        # By descriptor (fsutil's rule): the shared directory is often the node user's, and a
        # `.dscluster` it swapped for a symlink must not make root chmod (or write) what it points to.
        for p in (meta, hostkeys_dir(shared_dir)):
            fsutil.ensure_dir(p, 0o755)  # readable by all, writable only by its owner (root / the operator)
        fsutil.ensure_dir(leases_dir(shared_dir), 0o1777)
    except fsutil.UnsafePath as err:
        raise PermissionNeeded(tr("{path} is a symlink or reached through one that another user can change: {err}",
                                  path=meta, err=err.strerror),
                               tr("remove it (rm {path}) and run again", path=meta)) from None
    except PermissionError:
        raise PermissionNeeded(tr("cannot write {path}", path=meta),
                               tr("run as a user who can write the shared directory")) from None
    return meta


def publish_cluster_pubkey(spec: ClusterSpec) -> Path:
    """Copy the identity's public half to <shared>/.dscluster/cluster.pub for the node agents."""
    ensure_shared_meta(spec.shared_dir)
    dest = cluster_pubkey_path(spec.shared_dir)
    atomic_write_text(dest, public_key(spec) + "\n", mode=0o644)
    return dest


def published_spec_path(shared_dir: str | os.PathLike) -> Path:
    return shared_meta_dir(shared_dir) / SPEC_FILENAME


def publish_spec(spec: ClusterSpec) -> Path:
    """<shared>/.dscluster/dscluster.toml: the spec for the master's node user (launching from
    JupyterLab). It holds nothing secret; the controller's own state_dir is left out."""
    ensure_shared_meta(spec.shared_dir)
    dest = published_spec_path(spec.shared_dir)
    atomic_write_text(dest, format_spec(replace(spec, state_dir=None, path=None)), mode=0o644)
    return dest


def published_host_keys(shared_dir: str | os.PathLike, *, trusted_only: bool = False) -> list[dict]:
    """Every host-key record the node agents published (unreadable or malformed ones skipped). With
    `trusted_only`, only records no other user than this one and root could have written or swapped
    (the file and every directory on the way: fsutil's rule): on a shared directory the node user can
    write, a record is the node user's say-so, never a key to pin."""
    import fnmatch

    records = []
    try:
        dfd, trusted = fsutil._walk(hostkeys_dir(shared_dir))  # noqa: SLF001 - the one rule
    except OSError:
        return records
    try:
        if trusted_only and not trusted:
            return records
        with fsutil.opened_dir(dfd) as rfd:
            names = sorted(n for n in os.listdir(rfd) if fnmatch.fnmatch(n, "*.json"))
        for name in names:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode) or (trusted_only and (st.st_uid not in (0, os.geteuid())
                                                                     or st.st_nlink > 1)):
                    continue
                try:
                    record = json.loads(f.read(1 << 16).decode("utf-8"))
                except (OSError, ValueError):
                    continue
            if isinstance(record, dict) and isinstance(record.get("key"), str) and record.get("name"):
                records.append(record)
    finally:
        os.close(dfd)
    return records
