"""Shared fixtures and marker gates.

Markers say what a test needs (root, browser, gpu); a test whose need is missing on this machine is
skipped with the reason. CI runs as root with Chromium installed, so only `gpu` tests skip there, and
`long` ones (longer than CI's time): those run where DSCLUSTER_LONG_TESTS=1 asks for them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - any import problem means no usable GPU
        return False


def pytest_collection_modifyitems(config, items):
    is_root = os.geteuid() == 0
    has_chromium = shutil.which("chromium") is not None
    gpu = None
    long_ok = os.environ.get("DSCLUSTER_LONG_TESTS") == "1"
    for item in items:
        if "long" in item.keywords and not long_ok:
            item.add_marker(pytest.mark.skip(reason="longer than CI's time; DSCLUSTER_LONG_TESTS=1 runs it"))
        if "root" in item.keywords and not is_root:
            item.add_marker(pytest.mark.skip(reason="needs root (network namespaces, sshd)"))
        if "browser" in item.keywords and not has_chromium:
            item.add_marker(pytest.mark.skip(reason="needs Chromium (scripts/setup.sh test installs it)"))
        if "gpu" in item.keywords:
            gpu = _has_gpu() if gpu is None else gpu
            if not gpu:
                item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU (runs on the device machine)"))


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    """A failure's last lines the moment it happens, not only in the summary at the session's end: a CI run
    cut short (its time limit, a killed job) still says why a test failed."""
    if not report.failed:
        return
    config = _CONFIG.get("config")
    reporter = config.pluginmanager.get_plugin("terminalreporter") if config else None
    if reporter is None:
        return
    lines = [line for line in str(report.longreprtext).splitlines() if line.strip()]
    reporter.write_line("")
    reporter.write_line(f"FAILED {report.nodeid} ({report.when}), its last lines:", red=True)
    for line in lines[-25:]:
        reporter.write_line("    " + line[:400])


_CONFIG: dict = {}  # the session's config (its terminal reporter is registered after the conftests)


def pytest_configure(config):
    _CONFIG["config"] = config


@pytest.fixture
def dscluster_home(tmp_path, monkeypatch):
    """Redirect every per-user state directory into tmp_path."""
    home = tmp_path / "dscluster-home"
    monkeypatch.setenv("DSCLUSTER_HOME", str(home))
    monkeypatch.setenv("DSCLUSTER_SHARED", str(tmp_path / "shared"))
    return home


def _in_triton_interpreter(argv: list[str]) -> dict:
    """Run a check in a fresh Python with Triton's CPU interpreter on (it runs the hand-written kernels
    block by block on CPU tensors); the check's last stdout line is its JSON report."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture
def in_triton_interpreter():
    """`in_triton_interpreter(["-c", CODE])` -> the check's JSON report (see _in_triton_interpreter)."""
    return _in_triton_interpreter


# ---- no run outlives its test module ---------------------------------------------------------------
# Every process this pytest session starts carries SESSION_VAR (the CLI's children inherit it: the
# supervisor, DeepSpeed's runner, local ranks). A module that fails half-way can leave a run going; at the
# module's end, after its own fixtures tore down (a simulated cluster's `sim down --purge` included),
# whatever run processes it started that are still alive are named and killed, so they cannot slow or
# break the modules after it.
SESSION_VAR = "DSCLUSTER_TEST_SESSION"
os.environ.setdefault(SESSION_VAR, f"{os.getpid()}-{os.urandom(4).hex()}")


def _run_processes() -> dict[int, str]:
    """pid -> command line of this session's run processes (supervisors, and anything with a run id)."""
    mine = f"{SESSION_VAR}={os.environ[SESSION_VAR]}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if mine in env and ("dscluster.runs.supervising.supervisor" in cmd or any(v.startswith(b"DSCLUSTER_RUN_ID=") for v in env)):
            found[int(entry)] = cmd
    return found


@pytest.fixture(scope="module", autouse=True)
def no_run_outlives_its_module(request):
    before = set(_run_processes()) if sys.platform.startswith("linux") else set()
    yield
    if not sys.platform.startswith("linux"):
        return
    left = {pid: cmd for pid, cmd in _run_processes().items() if pid not in before}
    if left:
        from dscluster.runs.supervising.jitlocks import LockWatch

        print(f"\n{request.module.__name__}: run processes left going, killed: "
              + "; ".join(f"{pid} {cmd[:120]}" for pid, cmd in sorted(left.items())))
        locks = LockWatch()
        locks.scan(list(left))  # a torch JIT build lock one of them holds would block every later build
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        for pid in left:
            _wait_gone(pid)
        for path in locks.release_orphans():
            print(f"{request.module.__name__}: removed {path}, the JIT build lock a killed leftover held")


def _wait_gone(pid: int, timeout: float = 5.0) -> None:
    """Until the killed process is reaped (its parent, or init, waits for it), at most `timeout` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)


# ---- the session starts from a clean torch extensions cache -----------------------------------------
# A torch JIT build lock left by a process killed before this session (an earlier run of the suite on this
# machine, a build stopped by hand) blocks every build of that op: doctor fails the node and every launch
# refuses (doctor/checks_cluster.py check_jit_lock). Such a lock is not this session's doing, and no process
# holds it, so it is removed once at the start, in the caches the tests use: this user's and the simulated
# nodes' user's. A lock some process has open (a build going on) is kept. Locks this session's runs leave are
# not swept again: those are failures of the product the tests must see.
def pytest_sessionstart(session):
    if not sys.platform.startswith("linux"):
        return
    import pwd

    from dscluster.runs.supervising.jitlocks import extensions_root, open_elsewhere
    from dscluster.sim.nodeuser import SIM_USER

    roots = {extensions_root(dict(os.environ))}
    try:
        roots.add(extensions_root({"HOME": pwd.getpwnam(SIM_USER).pw_dir}))
    except KeyError:
        pass  # no simulated cluster ran on this machine yet
    removed = []
    for root in filter(None, roots):
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath[len(root):].count(os.sep) >= 2:
                dirnames[:] = []  # <root>/<pyXY_cpu>/<op>/lock
            path = os.path.join(dirpath, "lock")
            if "lock" in filenames and not open_elsewhere(path):
                try:
                    os.unlink(path)
                    removed.append(path)
                except OSError:
                    pass
    if removed:
        print(f"\nremoved torch JIT build locks no process holds, left before this session: {' '.join(removed)}")
