"""On the simulated cluster: the node agent on the master serves JupyterLab, reached the documented way.

The master's agent (`dscluster node start --role master --lab`, the image's entrypoint) starts
JupyterLab as the non-root node user on the master's own 127.0.0.1. The test reaches it like a user:
an `ssh -L` tunnel over the cluster's pinned ssh_config, and `dscluster lab url` run over ssh on the
master for the token. Then: no token / a wrong token are refused, the right one works, and the token
is in no log, no process command line or environment, and no file on the shared storage (run records).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from polling import wait_for
from support import free_port

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
LAB_PORT = 8888


def _get(url: str, headers: dict | None = None, data: bytes | None = None):
    req = urllib.request.Request(url, headers=headers or {}, data=data, method="POST" if data else None)
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as err:
        return None, str(err)


def _wait(predicate, timeout: float, what: str):
    value = wait_for(predicate, timeout, 0.5)
    assert value, f"timed out waiting for {what}"
    return value


@pytest.fixture(scope="module")
def lab_on_master(sim_cluster):
    from dscluster.cluster.ssh import SSHRunner, ssh_config_path

    # The master's own node agent runs with --lab (what the image's entrypoint does on the master).
    sim = sim_cluster(2, name="h5lab", lab=True)
    spec = sim.spec
    master = spec.master
    (spec.shared_dir / "lab-marker.txt").write_text("the file browser opens on the shared directory\n")
    local_port = free_port()
    # What the user runs on their own machine: ssh -L to the master's loopback-only lab.
    tunnel = subprocess.Popen(["ssh", "-F", str(ssh_config_path(spec)), "-N", "-o", "ExitOnForwardFailure=yes",
                               "-L", f"{local_port}:127.0.0.1:{LAB_PORT}", master.name],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        base = f"http://127.0.0.1:{local_port}"
        try:
            _wait(lambda: _get(f"{base}/api")[0] == 200, 90, "JupyterLab through the ssh tunnel")
        except AssertionError:
            raise AssertionError("lab did not come up; master agent log:\n"
                                 + sim.log_path(master.name).read_text(errors="replace")[-3000:]) from None
        url = SSHRunner(spec, master).run([str(VENV_BIN / "dscluster"), "lab", "url", "--ssh-host", master.address],
                                          timeout=60)
        assert url.ok, url.stderr
        token = url.stdout.split("?token=", 1)[1].split()[0]
        yield {"sim": sim, "base": base, "token": token, "url_out": url.stdout}
    finally:
        tunnel.terminate()
        tunnel.wait(10)


def test_lab_runs_as_the_node_user_on_loopback_only(lab_on_master):
    sim = lab_on_master["sim"]
    spec = sim.spec
    master = spec.master
    # Bound to the master's 127.0.0.1: the node's cluster address does not answer on the lab port.
    probe = sim.exec(spec.nodes[1].name, [sys.executable, "-c",
                     f"import socket; socket.create_connection(('{master.address}', {LAB_PORT}), 3)"])
    assert probe.returncode != 0
    out = lab_on_master["url_out"]
    assert f"ssh -N -L {LAB_PORT}:127.0.0.1:{LAB_PORT} {master.address}" in out
    home = os.path.expanduser(f"~{spec.ssh_user}")
    ours = f"--config={home}/.dscluster/lab/{master.name}/".encode()
    servers = [p for p in Path("/proc").glob("[0-9]*") if ours in _read(p / "cmdline")]
    assert len(servers) == 1, "expected exactly one JupyterLab for the master"
    for proc in servers:
        uid = int(next(ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("Uid:")).split()[1])
        assert uid != 0


def test_token_gates_every_request(lab_on_master):
    base, token = lab_on_master["base"], lab_on_master["token"]
    assert _get(f"{base}/api/contents")[0] == 403
    assert _get(f"{base}/api/contents", {"Authorization": "token not-the-token"})[0] == 403
    assert _get(f"{base}/api/contents?token={token[:-1]}")[0] == 403
    status, body = _get(f"{base}/api/contents", {"Authorization": f"token {token}"})
    assert status == 200 and json.loads(body)["type"] == "directory"
    # The file browser opens on the shared directory.
    assert "lab-marker.txt" in {item["name"] for item in json.loads(body)["content"]}
    status, page = _get(f"{base}/lab?token={token}")
    assert status == 200 and "jupyter-config-data" in page


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_token_is_in_no_log_command_line_environment_or_run_record(lab_on_master):
    token = lab_on_master["token"].encode()
    base = lab_on_master["base"]
    # A kernel, as a notebook starts one (runs launched from a notebook inherit its environment).
    status, body = _get(f"{base}/api/kernels", {"Authorization": f"token {lab_on_master['token']}",
                                                "Content-Type": "application/json"}, data=b"{}")
    assert status == 201, body
    kernel_id = json.loads(body)["id"]
    _wait(lambda: any(kernel_id.encode() in _read(p / "cmdline") for p in Path("/proc").glob("[0-9]*")), 60,
          "the kernel process")
    for proc in Path("/proc").glob("[0-9]*"):
        assert token not in _read(proc / "cmdline"), f"token on the command line of pid {proc.name}"
        assert token not in _read(proc / "environ"), f"token in the environment of pid {proc.name}"
    sim = lab_on_master["sim"]
    logs = [sim.log_path(n) for n in sim.nodes]
    home = Path(os.path.expanduser(f"~{sim.spec.ssh_user}"))
    logs += list(home.glob(".dscluster/lab/*/lab.log")) + list(home.glob(".dscluster/logs/*"))
    assert any(p.name == "lab.log" for p in logs)
    for log in logs:
        assert token not in _read(log), f"token in {log}"
    # Nothing on the shared storage (run records, metadata, notebooks) holds it.
    for path in Path(sim.spec.shared_dir).rglob("*"):
        if path.is_file():
            assert token not in _read(path), f"token in {path}"
    token_files = list(home.glob(".dscluster/lab/*/token"))
    assert token_files and all(f.stat().st_mode & 0o777 == 0o600 for f in token_files)


_PLANT_RUNS = """
import json, os, sys
shared, state = sys.argv[1], sys.argv[2]
runs = os.path.join(shared, "runs")
# A run whose logs directory is the lab's own state directory (it holds the token file).
run = os.path.join(runs, "planted-20260101-000000-aaaa")
os.makedirs(run, exist_ok=True)
json.dump({"id": "planted-20260101-000000-aaaa", "status": "running", "attempts": []}, open(os.path.join(run, "run.json"), "w"))
os.symlink(state, os.path.join(run, "logs"))
# A run with a real logs directory holding a symlinked subdirectory and a symlinked file.
run2 = os.path.join(runs, "planted-20260101-000000-bbbb")
os.makedirs(os.path.join(run2, "logs"), exist_ok=True)
json.dump({"id": "planted-20260101-000000-bbbb", "status": "running", "attempts": []}, open(os.path.join(run2, "run.json"), "w"))
open(os.path.join(run2, "logs", "launcher.log"), "w").write("a real log line\\n")
os.symlink(state, os.path.join(run2, "logs", "sub"))
os.symlink(os.path.join(state, "token"), os.path.join(run2, "logs", "token.log"))
# A run directory that is itself a symlink to the lab's state directory.
os.symlink(state, os.path.join(runs, "planted-20260101-000000-cccc"))
"""


def test_logs_endpoint_serves_nothing_outside_the_run_directory(lab_on_master):
    """Any rank (the node user) can write the run directories the panel reads: a run whose `logs` is a
    symlink to the lab's state directory, a symlinked subdirectory or file inside logs/, or a run directory
    that is itself a symlink, must not serve the lab's token to whoever calls the logs endpoint."""
    sim, base, token = lab_on_master["sim"], lab_on_master["base"], lab_on_master["token"]
    spec = sim.spec
    state = Path(os.path.expanduser(f"~{spec.ssh_user}")) / ".dscluster" / "lab" / spec.master.name
    res = sim.exec(spec.master.name, [sys.executable, "-c", _PLANT_RUNS, str(spec.shared_dir), str(state)],
                   user=spec.ssh_user, cwd="/", timeout=60)
    assert res.returncode == 0, res.stderr
    auth = {"Authorization": f"token {token}"}
    api = f"{base}/dscluster/api/runs"
    for run, rel in [("planted-20260101-000000-aaaa", "token"), ("planted-20260101-000000-bbbb", "sub/token"),
                     ("planted-20260101-000000-bbbb", "token.log"), ("planted-20260101-000000-cccc", "token")]:
        status, body = _get(f"{api}/{run}/logs/{rel}", auth)
        assert status == 404 and token not in body, (run, rel, status, body[:300])
        status, body = _get(f"{api}/{run}/logs", auth)
        names = [f["name"] for f in json.loads(body)["logs"]] if status == 200 else []
        assert token not in body and not any("token" in n for n in names), body
    status, body = _get(f"{api}/planted-20260101-000000-bbbb/logs/launcher.log", auth)
    assert status == 200 and "a real log line" in json.loads(body)["text"]
    status, body = _get(api, auth)
    assert status == 200 and token not in body


def test_no_file_but_the_token_file_holds_the_token(lab_on_master):
    """Jupyter's jpserver-<pid>-open.html (a redirect carrying the token) is not written either."""
    token = lab_on_master["token"].encode()
    home = Path(os.path.expanduser(f"~{lab_on_master['sim'].spec.ssh_user}"))
    holders = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink() and token in _read(p)]
    # Besides our token file, only Jupyter's own server-info file (`jupyter server list` reads it), 0600.
    kinds = sorted("server-info" if p.name.startswith("jpserver-") and p.suffix == ".json" else p.name for p in holders)
    assert kinds in (["token"], ["server-info", "token"]), holders
    assert all(p.stat().st_mode & 0o077 == 0 for p in holders), holders
    assert not [p for p in home.rglob("jpserver-*-open.html") if token in _read(p)]


def test_sim_down_removes_the_lab_token(lab_on_master):
    """Last in this module: takes the cluster down. The lab dies with its node (SIGKILL, no `lab stop`)."""
    from dscluster.sim import down

    sim = lab_on_master["sim"]
    state = Path(os.path.expanduser(f"~{sim.spec.ssh_user}")) / ".dscluster" / "lab" / sim.spec.master.name
    assert (state / "token").exists()
    down(sim.name)
    assert not (state / "token").exists() and not (state / "lab.json").exists()
