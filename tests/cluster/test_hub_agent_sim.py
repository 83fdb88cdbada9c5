"""`dscluster sim up --hub`: the master's node agent runs JupyterHub (as `up --hub` does in the master's
container) on the master's own 127.0.0.1:8000; a person added afterwards logs in there and their
JupyterLab runs as their UID; `sim down` stops the hub and everything it started, and removes the
people made for it."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
PERSON = f"hag{os.getpid() % 100000:05d}"
OTHER = PERSON + "o"  # left for `sim down` to remove

# Runs inside the master's network namespace: log in through the hub's form, as a browser would.
LOGIN = r"""
import http.cookiejar, re, sys, time, urllib.parse, urllib.request
base, name = sys.argv[1:3]
password = sys.stdin.read().strip()  # never on a command line
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
deadline = time.monotonic() + 120
while True:
    try:
        page = opener.open(base + "hub/login", timeout=5).read().decode()
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.5)
xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page).group(1)
form = urllib.parse.urlencode({"username": name, "password": password, "_xsrf": xsrf}).encode()
print(opener.open(base + "hub/login", data=form, timeout=60).url)
"""


def _servers(home: str) -> dict[str, int]:
    """The people's JupyterLab servers of this hub: {JUPYTERHUB_USER: uid}."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if f"--config={home}/hub/singleuser/".encode() not in (proc / "cmdline").read_bytes():
                continue
            environ = dict(kv.split(b"=", 1) for kv in (proc / "environ").read_bytes().split(b"\0") if b"=" in kv)
            uid = int(next(ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("Uid:")).split()[1])
        except (OSError, StopIteration):
            continue
        found[environ[b"JUPYTERHUB_USER"].decode()] = uid
    return found


def test_the_masters_agent_runs_the_hub_and_a_person_gets_their_own_lab(sim_cluster):
    sim = sim_cluster(1, hub=True)
    home = sim.state["home"]
    env = {**os.environ, "DSCLUSTER_HOME": home, "DSCLUSTER_LANG": "en"}
    try:
        add = subprocess.run([str(VENV_BIN / "dscluster"), "user", "add", PERSON, "--cluster", str(sim.spec.path)],
                             env=env, capture_output=True, text=True, timeout=120)
        assert add.returncode == 0, add.stdout + add.stderr
        password = re.search(r"hand it over privately\): (\S+)", add.stdout).group(1)
        login = sim.exec(sim.spec.master.name, [sys.executable, "-c", LOGIN, "http://127.0.0.1:8000/", PERSON],
                         input=password, timeout=180)
        assert login.returncode == 0, login.stdout + login.stderr
        assert f"/user/{PERSON}/" in login.stdout or "spawn-pending" in login.stdout
        deadline = time.monotonic() + 120
        while PERSON not in _servers(home) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _servers(home) == {PERSON: pwd.getpwnam(PERSON).pw_uid}
        assert password not in (Path(home) / "hub" / "private" / "hub.log").read_text(errors="replace")
        gone = subprocess.run([str(VENV_BIN / "dscluster"), "user", "remove", PERSON, "--cluster", str(sim.spec.path)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert gone.returncode == 0, gone.stderr
        other = subprocess.run([str(VENV_BIN / "dscluster"), "user", "add", OTHER, "--cluster", str(sim.spec.path)],
                               env=env, capture_output=True, text=True, timeout=120)
        assert other.returncode == 0, other.stderr
        sim.down()
        assert not _servers(home)
        with pytest.raises(KeyError):  # the people made for a simulated cluster go with it
            pwd.getpwnam(OTHER)
    finally:
        for name in (PERSON, OTHER):
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
