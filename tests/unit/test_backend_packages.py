"""The system packages a backend's runs need on the test machine are the backend's own (`host_packages`):
the registry lists them, `python3 -m dscluster.launcher.backends.packages` prints them with the system's
python and the standard library alone, and scripts/setup.sh installs what it prints, naming none itself."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from dscluster.launcher import backends
from dscluster.launcher.backends import Backend

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
ENTRY = "dscluster.launcher.backends.packages"


class ToyBackend(Backend):
    name = "toy"
    host_packages = ("toy-launcher", "pdsh")  # one of its own, one that pdsh needs too


def test_the_registry_lists_every_backends_host_packages():
    own = {b.name: b.host_packages for b in backends.every()}
    assert own["pdsh"] == ("pdsh",) and own["openmpi"] == ("openmpi-bin",) and own["mpich"] == ("mpich",)
    assert own["slurm"] == ("slurm-wlm", "munge") and own["local"] == ()
    listed = backends.host_packages()
    assert listed == tuple(p for b in backends.every() for p in b.host_packages)  # registration order, each once
    assert all(isinstance(p, str) and re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in listed), listed
    backends.register(ToyBackend)
    try:
        assert backends.host_packages() == (*listed, "toy-launcher")  # pdsh is not asked for twice
    finally:
        backends.unregister("toy")
    assert backends.host_packages() == listed


def test_setup_sh_names_no_backends_package_and_installs_what_the_backends_name():
    text = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    named = [p for p in backends.host_packages() if re.search(rf"(?<![\w.-]){re.escape(p)}(?![\w.-])", text)]
    assert not named, f"scripts/setup.sh names a backend's package itself: {named}"
    assert re.search(rf'backend_pkgs=\$\(PYTHONPATH="\$root/src" "\$py" -S -m {re.escape(ENTRY)}\)', text)
    assert re.search(r"apt_install [^\n]*\\\n\s+\$backend_pkgs\n", text)
    # the check finds what it is there to find
    assert re.search(r"(?<![\w.-])mpich(?![\w.-])", "apt_install openmpi-bin mpich\n")
    assert not re.search(r"(?<![\w.-])pdsh(?![\w.-])", "MPIRUN=mpirun.mpich pdsh-rcmd-ssh\n")


@pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK), reason="needs the system's python3")
def test_the_entry_runs_on_the_system_python_with_the_standard_library_only():
    """What setup.sh runs before the venv holds anything: the system's python3, PYTHONPATH=src, no
    site-packages (-S) and none of this environment's variables."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([SYSTEM_PYTHON, "-S", "-m", ENTRY], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(backends.host_packages()) and done.stdout.count("\n") == 1
    # importing the registry loads nothing but the standard library and dscluster itself
    probe = ("import sys, dscluster.launcher.backends.packages\n"
             "tops = {m.split('.')[0] for m in sys.modules}\n"
             "print(sorted(tops - set(sys.stdlib_module_names) - {'dscluster', '__main__'}))")
    loaded = subprocess.run([SYSTEM_PYTHON, "-S", "-c", probe], env=env, cwd=REPO, capture_output=True, text=True,
                            timeout=60)
    assert loaded.returncode == 0 and loaded.stdout.strip() == "[]", (loaded.stdout, loaded.stderr)
