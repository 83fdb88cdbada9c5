"""On the master: let the node user launch across the cluster (from JupyterLab or a shell).

The recipe's "passwordless SSH from the master to the workers" needs the cluster's private key on
the master. The operator hands it to the agent as a file (`--identity`, e.g. a container secret
mounted read-only, never baked into the image); the agent checks it is the cluster key (its public
half equals <shared>/.dscluster/cluster.pub) and installs it, 0600 in a 0700 directory owned by the
node user, where `cluster_state_dir` looks for it: ~/.dscluster/clusters/<name>/. The spec comes
from <shared>/.dscluster/dscluster.toml (published by `dscluster init`), so the node user's
`resolve_spec` finds it through DSCLUSTER_CLUSTER.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
from pathlib import Path

from dscluster.cluster.identity import IDENTITY_NAME, cluster_pubkey_path, published_spec_path
from dscluster.cluster.spec import load_spec
from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.fsutil import atomic_write_bytes
from dscluster.i18n import tr


def _key_blob(public_line: str) -> str:
    parts = public_line.split()
    return " ".join(parts[:2]) if len(parts) >= 2 else ""


def _private_dir(path: Path, entry: pwd.struct_passwd) -> None:
    """mkdir owned by the user, 0700, refusing symlinks (root writes into a user-controlled home)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path, 0o700)
        st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise PermissionNeeded(tr("{path} is not a directory (a symlink?); refusing to write the key there", path=path),
                               tr("remove it, then restart the node agent"))
    os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    os.chmod(path, 0o700)


def install_identity(identity_file: Path, shared_dir: Path, entry: pwd.struct_passwd) -> Path:
    """Install the cluster key for the node user; returns the published spec's path (for DSCLUSTER_CLUSTER)."""
    spec_path = published_spec_path(shared_dir)
    if not spec_path.is_file():
        raise ConfigError(tr("no published cluster spec at {path}", path=spec_path),
                          tr("run `dscluster init` on the controller with the shared directory mounted; "
                             "it publishes it"),
                          setting="identity")
    spec = load_spec(spec_path)
    try:
        derived = subprocess.run(["ssh-keygen", "-y", "-f", str(identity_file)], capture_output=True, text=True,
                                 timeout=30)
    except FileNotFoundError:
        raise ConfigError(tr("ssh-keygen is not installed"), tr("apt-get install openssh-client")) from None
    if derived.returncode != 0:
        raise ConfigError(tr("{path} is not a readable private key: {err}", path=identity_file,
                             err=derived.stderr.strip()), tr("pass the cluster's id_ed25519 (from the controller)"),
                          setting="identity")
    expected = cluster_pubkey_path(shared_dir).read_text(encoding="utf-8")
    if _key_blob(derived.stdout) != _key_blob(expected):
        raise ConfigError(tr("{path} is not the key of this cluster (its public half differs from {pub})",
                             path=identity_file, pub=cluster_pubkey_path(shared_dir)),
                          tr("pass the id_ed25519 of cluster {name!r} from the controller", name=spec.name),
                          setting="identity")
    folder = Path(entry.pw_dir)
    for part in (".dscluster", "clusters", spec.name):
        folder = folder / part
        _private_dir(folder, entry)
    for name, data, mode in ((IDENTITY_NAME, identity_file.read_bytes(), 0o600),
                             (IDENTITY_NAME + ".pub", derived.stdout.encode(), 0o644)):
        target = folder / name
        atomic_write_bytes(target, data, mode=mode)
        os.chown(target, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    return spec_path
