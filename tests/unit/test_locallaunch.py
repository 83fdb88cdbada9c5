"""launcher/locallaunch.py: DeepSpeed launch.py's contract on one machine, with real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dscluster.runs.supervising.verdict import first_rank_exit_code

RANK = """
import json, os, sys, time
keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_SIZE", "MASTER_ADDR", "MASTER_PORT", "CROSS_RANK",
        "CROSS_SIZE", "CUDA_VISIBLE_DEVICES", "LOCAL_WORLD_SIZE")
print(json.dumps({"argv": sys.argv[1:], **{k: os.environ.get(k) for k in keys}}))
if os.environ["RANK"] == os.environ.get("FAIL_RANK"):
    sys.exit(17)
if os.environ.get("FAIL_RANK"):
    time.sleep(120)  # a sibling: must be terminated when the failing rank exits
"""


def launch(tmp_path, *extra: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    argv = [sys.executable, "-m", "dscluster.launcher.locallaunch", "--devices=1,3", "--master_port=29511",
            f"--enable_each_rank_log={tmp_path / 'logs'}", *extra, str(script), "--x", "1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={**env} if env else None)


def rank_lines(tmp_path) -> dict[int, dict]:
    out = {}
    for log in sorted((tmp_path / "logs").glob("*_rank*.log")):
        rank = int(log.stem.rsplit("_rank", 1)[1])
        out[rank] = json.loads(log.read_text().splitlines()[0])
    return out


def test_each_rank_gets_launch_pys_environment_and_its_own_log(tmp_path):
    done = launch(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = rank_lines(tmp_path)
    assert sorted(ranks) == [0, 1]
    for r, seen in ranks.items():
        assert seen["argv"] == [f"--local_rank={r}", "--x", "1"]
        assert (seen["RANK"], seen["LOCAL_RANK"]) == (str(r), str(r))
        assert (seen["WORLD_SIZE"], seen["LOCAL_SIZE"], seen["CROSS_RANK"], seen["CROSS_SIZE"]) == ("2", "2", "0", "1")
        assert seen["LOCAL_WORLD_SIZE"] == "2"  # torchrun's name for LOCAL_SIZE: torchrun-written scripts read it
        assert (seen["MASTER_ADDR"], seen["MASTER_PORT"], seen["CUDA_VISIBLE_DEVICES"]) == ("127.0.0.1", "29511", "1,3")
    assert done.stdout.count("exits successfully.") == 2  # what the supervisor counts (reports_rank_exits)


def test_no_local_rank_and_quiet(tmp_path):
    done = launch(tmp_path, "--no_local_rank", "--quiet")
    assert done.returncode == 0 and "exits successfully" not in done.stdout
    assert rank_lines(tmp_path)[1]["argv"] == ["--x", "1"]


def test_a_failing_rank_ends_its_siblings_with_launch_pys_lines(tmp_path):
    done = launch(tmp_path, env={**os.environ, "FAIL_RANK": "1"})
    assert done.returncode == 17, done.stdout + done.stderr
    assert "Killing subprocess" in done.stdout and "[locallaunch.py:" in done.stdout
    assert "'--local_rank=1', '--x', '1'] exits with return code = 17" in done.stdout
    log = tmp_path / "launcher.log"
    log.write_text("attempt 1: ...\n" + done.stdout)
    assert first_rank_exit_code(log, {}, "attempt 1:") == 17  # read as the supervisor reads launch.py's


def test_ranks_get_a_bytecode_cache_where_torchs_would_be_compiled_at_every_start(tmp_path):
    """PYTHONDONTWRITEBYTECODE=1 (container images set it) and a torch without cached bytecode: every rank
    would compile torch from source (10 s of an H200 rank's start); the ranks get their own cache."""
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(fake), "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path / "c")}
    script = tmp_path / "rank.py"
    script.write_text("import os, torch; print('PREFIX', os.environ.get('PYTHONPYCACHEPREFIX'))")
    argv = [sys.executable, "-m", "dscluster.launcher.locallaunch", "--devices=0", "--master_port=29512",
            "--cache_bytecode", str(script)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    cache = tmp_path / "c" / "dscluster" / "pycache"
    assert f"PREFIX {cache}" in done.stdout and cache.is_dir() and (cache.stat().st_mode & 0o777) == 0o700
    assert "the ranks cache it in" in done.stdout
    assert list(cache.rglob("__init__*.pyc")) and not (fake / "torch" / "__pycache__").exists()  # written there only
    # Where the bytecode is written normally, or without the flag (the user's --env decides), nothing changes.
    for extra, environ in (([], env), (["--cache_bytecode"], {**env, "PYTHONDONTWRITEBYTECODE": ""})):
        argv = [sys.executable, "-m", "dscluster.launcher.locallaunch", "--devices=0", "--master_port=29513",
                *extra, str(script)]
        environ = {k: v for k, v in environ.items() if v}
        assert "PREFIX None" in subprocess.run(argv, capture_output=True, text=True, timeout=60, env=environ).stdout


def test_an_empty_bytecode_cache_is_filled_by_every_core_before_the_ranks_start(tmp_path):
    """fill_cache: compileall into the ranks' PYTHONPYCACHEPREFIX, nothing beside the sources, the test
    directories left out (the ranks never import them)."""
    from dscluster.launcher.locallaunch import fill_cache

    pkg = tmp_path / "src" / "pkg"
    (pkg / "tests").mkdir(parents=True)
    (pkg / "__init__.py").write_text("X = 1\n")
    (pkg / "mod.py").write_text("Y = 2\n")
    (pkg / "tests" / "test_x.py").write_text("Z = 3\n")
    (pkg / "broken.py").write_text("def (:\n")  # left to the ranks, as they would have met it
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    fill_cache({**env, "PYTHONPYCACHEPREFIX": str(cache)}, dirs=[str(tmp_path / "src")])
    mirrored = cache / str(tmp_path / "src").lstrip("/")  # the prefix mirrors the sources' absolute path
    names = sorted(p.name.split(".")[0] for p in mirrored.rglob("*.pyc"))
    assert names == ["__init__", "mod"], names
    assert not list((tmp_path / "src").rglob("__pycache__"))


STUBBORN = """
import os, signal, sys, time
print(os.getpid(), flush=True)
if os.environ["RANK"] == "1":
    sys.exit(17)
def slow_exit(*_):  # a sibling slow to go: the teardown waits for it while the signals come
    time.sleep(1.5)
    sys.exit(0)
signal.signal(signal.SIGTERM, slow_exit)
time.sleep(120)
"""


def test_signals_during_the_teardown_neither_crash_the_launcher_nor_leave_a_rank(tmp_path):
    """The supervisor SIGTERMs the launcher as soon as it sees a rank's exit, while the launcher is already tearing
    down: the handler re-entered its own teardown (once halfway through importing psutil, which crashed the launcher
    with a traceback). Now a signal during the teardown lets it finish: the failed rank's code, every rank gone."""
    import signal
    import time

    script = tmp_path / "rank.py"
    script.write_text(STUBBORN)
    out = tmp_path / "launcher.out"
    argv = [sys.executable, "-m", "dscluster.launcher.locallaunch", "--devices=0,1", "--master_port=29514",
            f"--enable_each_rank_log={tmp_path / 'logs'}", str(script)]
    with open(out, "w") as f:
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "Killing subprocess" not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "Killing subprocess" in out.read_text(), out.read_text()
        for _ in range(5):
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.05)
        assert proc.wait(timeout=60) == 17, out.read_text()
    finally:
        proc.kill()
    text = out.read_text()
    assert "Traceback" not in text, text
    assert text.count("Killing subprocess") == 2, text  # one teardown, each rank once: the signals did not re-enter it
    pids = [int(p.read_text().split()[0]) for p in (tmp_path / "logs").glob("*_rank*.log")]
    assert len(pids) == 2
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().split()[2] == "Z", f"rank {pid} outlived its launcher"  # only a zombie of a dead parent
