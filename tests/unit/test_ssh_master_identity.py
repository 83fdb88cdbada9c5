"""The master's agent installs the cluster key for the node user: only the right key, only safely."""

from __future__ import annotations

import os
import pwd
import shutil
import stat

import pytest

from dscluster.cluster import identity
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.node.master import install_identity

pytestmark = pytest.mark.skipif(not shutil.which("ssh-keygen"), reason="needs ssh-keygen (openssh-client)")


@pytest.fixture
def setup(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    spec = ClusterSpec(name="lab", shared_dir=shared, ssh_user="trainer", nodes=(NodeSpec("a", 1, "a"),),
                       state_dir=tmp_path / "controller")
    key = identity.ensure_identity(spec)
    identity.publish_cluster_pubkey(spec)
    home = tmp_path / "home"
    home.mkdir()
    me = pwd.getpwuid(os.getuid())
    entry = pwd.struct_passwd((me.pw_name, "x", me.pw_uid, me.pw_gid, "", str(home), "/bin/sh"))
    return spec, key, entry


def test_installs_the_cluster_key_privately_and_returns_the_published_spec(setup):
    spec, key, entry = setup
    with pytest.raises(ConfigError, match="no published cluster spec") as exc:
        install_identity(key, spec.shared_dir, entry)
    assert "dscluster init" in exc.value.hint
    published = identity.publish_spec(spec)
    assert "state_dir" not in published.read_text()
    assert install_identity(key, spec.shared_dir, entry) == published
    installed = os.path.join(entry.pw_dir, ".dscluster", "clusters", "lab", "id_ed25519")
    assert open(installed).read() == key.read_text()
    assert stat.S_IMODE(os.stat(installed).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(installed)).st_mode) == 0o700
    assert install_identity(key, spec.shared_dir, entry) == published  # idempotent


def test_refuses_another_key_and_symlinks(setup, tmp_path):
    spec, key, entry = setup
    identity.publish_spec(spec)
    stranger = tmp_path / "stranger"
    identity.generate_keypair(stranger, "stranger")
    with pytest.raises(ConfigError, match="not the key of this cluster"):
        install_identity(stranger, spec.shared_dir, entry)
    (tmp_path / "notakey").write_text("hello")
    with pytest.raises(ConfigError, match="not a readable private key"):
        install_identity(tmp_path / "notakey", spec.shared_dir, entry)
    # a node user who plants a symlink must not get root to write the key elsewhere
    os.symlink(tmp_path / "elsewhere", os.path.join(entry.pw_dir, ".dscluster"))
    with pytest.raises(PermissionNeeded, match="not a directory"):
        install_identity(key, spec.shared_dir, entry)
    assert not (tmp_path / "elsewhere").exists()


def test_the_shared_meta_directory_comes_with_a_leases_directory_every_launcher_can_use(tmp_path):
    """<shared>/.dscluster is its owner's (0755): a node user launching from the master cannot create the
    GPU leases' directory there, so it is made with it, sticky and writable by all (1777)."""
    import stat

    from dscluster.cluster.identity import ensure_shared_meta, leases_dir
    from dscluster.runs.leases.files import cluster_dir

    meta = ensure_shared_meta(tmp_path)
    assert stat.S_IMODE(meta.stat().st_mode) == 0o755
    assert cluster_dir(tmp_path) == leases_dir(tmp_path) == meta / "leases"
    assert stat.S_IMODE(leases_dir(tmp_path).stat().st_mode) == 0o1777
