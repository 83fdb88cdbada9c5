"""Pre-warmed DeepSpeed launchers: the next attempt's `launch.py` (every node) and runner (the controller)
have imported torch and DeepSpeed before the fault, so a restart does not wait for them.

Why: after a healed partition or a restarted node, the next attempt's ranks were up 28-43 s after the heal
on 4-16 simulated nodes (benchmarks/fault_detect.py), almost all of it DeepSpeed's runner and every node's
`launch.py` importing torch (about 2 s of CPU each, all at once). Nothing in what they import changes
between attempts: only their arguments and environment do.

Node side (pdsh backend). DeepSpeed's runner puts `sys.executable` into every node's command line; the plan
(launcher/plan.py) makes it `python -P -m dscluster.launcher.warm`, so each node runs this module as
`... warm -u -m deepspeed.launcher.launch ARGS` (the *shim*). The shim
  1. when DSCLUSTER_WARM (`AFTER:LINGER`, set in the run's env file while restarts remain) is set, starts
     the next attempt's warm server on its node, detached: it binds the abstract socket named by the run,
     the attempt and the user, waits until this attempt's launch.py has had ranks for AFTER seconds (short
     runs, and every test, never pay for it), imports `deepspeed.launcher.launch`, then waits for its shim;
  2. connects to this attempt's warm server, if one is there: it hands over its argv, environment,
     working directory and its stdin/stdout/stderr (SCM_RIGHTS), forwards SIGTERM/SIGINT/SIGHUP to it
     and exits with its exit code; the server runs launch.py's `__main__` in itself, with the shim's
     environment, so the ranks get exactly what a cold start gives them;
  3. otherwise execs the real `python -u -m deepspeed.launcher.launch ARGS` (a cold start, as before).
Both ends check that the other is the same user (SO_PEERCRED): an abstract socket has no file mode.
A warm server carries DSCLUSTER_ATTEMPT of the attempt it is for, so a watchdog tearing down an earlier
attempt (runs/supervising/watchdog.py, `upto`) leaves it: a partitioned node keeps it through the partition, a frozen
one gets it back with SIGCONT. It exits when used, when told (`kill GRACE all`, the run's last teardown), when
its attempt's launch.py started cold without it (it came too late), or LINGER seconds after the launch.py it watched
is gone without a next attempt coming (a restarted node
lost it: `prestart RUN ATTEMPT LINGER`, which the supervisor runs there over ssh as soon as it answers
again, starts one that imports at once and waits LINGER seconds for its shim).

Controller side: `python -m dscluster.launcher.warm hold MODULE` imports MODULE (DeepSpeed's runner), then
reads one JSON line on stdin ({"argv", "env", "cwd"}) and runs the runner's `__main__` with them: the
supervisor starts it when an attempt fails, while the attempt is torn down and lost nodes are awaited.

Stdlib only until the module imports what it pre-warms.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time

from dscluster.safepython import module_argv

WARM_VAR = "DSCLUSTER_WARM"  # AFTER:LINGER seconds while restarts remain ("-" in the last attempt: none to warm)
AFTER = 15.0  # a launch.py whose ranks ran this long gets a warm successor (the supervisor's DSCLUSTER_WARM_AFTER)
LAUNCH = "deepspeed.launcher.launch"
READY_NAME = "dscluster-warm"  # a warm server's /proc/PID/comm once it has imported what it pre-warms
_HEAD = struct.Struct("!I")


def after_seconds() -> float:
    """Seconds an attempt runs before the next one's launchers are pre-warmed (the supervisor's setting)."""
    return float(os.environ.get("DSCLUSTER_WARM_AFTER", AFTER))


def socket_name(run_id: str, attempt: int) -> bytes:
    """The abstract socket of one attempt's warm launch.py on a node (per network namespace: per node)."""
    return f"\0dscluster-warm/{os.getuid()}/{run_id}/{attempt}".encode()


def _peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a unix socket."""
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                         struct.calcsize("3i")))
    return pid, uid


def _peer_is_us(sock: socket.socket) -> bool:
    return _peer(sock)[1] == os.getuid()


def run_module_main(module: str, args: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                    executable: str | None = None) -> int:
    """Run an already imported module's `__main__` as `python -m module args` would; its exit status."""
    import runpy
    import traceback

    if cwd:
        os.chdir(cwd)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if executable:
        sys.executable = executable
    sys.argv = [module, *args]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    sys.modules.pop(module, None)  # run afresh as __main__ (what it imported stays): no runpy warning
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as a cold start would: traceback, exit 1
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


# ---- node side: the shim pdsh starts, and the warm server it talks to -----------------------------
def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _has_children(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return bool(f.read().split())
    except OSError:
        return False


def spawn_server(run_id: str, attempt: int, watched: int, after: float, linger: float) -> None:
    """Start attempt `attempt`'s warm server on this node, detached (double fork, own session)."""
    env = {**os.environ, "DSCLUSTER_ATTEMPT": str(attempt)}
    argv = [*module_argv(sys.executable, "dscluster.launcher.warm", unbuffered=True), "serve", run_id, str(attempt),
            str(watched), _start_time(watched) or "-", str(after), str(linger)]
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execve(sys.executable, argv, env)
    finally:
        os._exit(1)


def _wait_to_import(watched: int, started: str, after: float) -> bool:
    """Wait until the watched launch.py has had ranks for `after` seconds; False when it went first. Nothing
    watched (0: a node that came back, `prestart`): at once."""
    if not watched:
        return True
    since = None
    while _start_time(watched) == started:
        if _has_children(watched):
            since = since or time.monotonic()
            if time.monotonic() - since >= after:
                return True
        else:
            since = None
        time.sleep(0.5)
    return False


def serve(run_id: str, attempt: int, watched: int, started: str, after: float, linger: float) -> int:
    """The warm server of one attempt on this node (see the module's docstring)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(socket_name(run_id, attempt))
    except OSError:
        return 0  # one is there already
    sock.listen(4)
    if not _wait_to_import(watched, started, after):
        return 0  # the attempt ended before its successor was worth warming: a restart starts cold
    __import__(LAUNCH)
    _set_name(READY_NAME)
    sock.settimeout(1.0)
    gone_at = None
    while True:
        try:
            conn, _ = sock.accept()
        except TimeoutError:
            if not watched and _went_cold(run_id, attempt):
                return 0  # its attempt started without it (a `prestart` that bound after the shim looked)
            if _start_time(watched) != started:
                gone_at = gone_at or time.monotonic()
                if time.monotonic() - gone_at > linger:
                    return 0
            continue
        with conn:
            conn.settimeout(None)
            if _peer_is_us(conn):
                sock.close()
                return _serve_one(conn)


def _went_cold(run_id: str, attempt: int) -> bool:
    """Whether this attempt's launch.py already runs on this node without its warm server: a process of this run
    and attempt (its initial environment) whose command runs DeepSpeed's launch module. Seen in CI: a node that came
    back got its `prestart` server a moment after the attempt's shim had looked for one and started cold; the idle
    server, marked with the run and the attempt, then counted as a rank still running at the attempt's clean end.
    Asked of `prestart` servers only: one a shim spawned binds its socket an attempt ahead, so the next attempt's shim
    always finds it, and no /proc scan runs every second beside a whole attempt."""
    marks = {f"DSCLUSTER_RUN_ID={run_id}".encode(), f"DSCLUSTER_ATTEMPT={attempt}".encode()}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if LAUNCH.encode() not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marks <= set(f.read().split(b"\0")):
                    return True
        except OSError:
            continue
    return False


def _set_name(name: str) -> None:
    """This process's name in /proc/PID/comm (what `ps -o comm` shows): READY_NAME once it has imported."""
    try:
        import ctypes  # noqa: PLC0415

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _serve_one(conn: socket.socket) -> int:
    head, fds, _flags, _addr = socket.recv_fds(conn, _HEAD.size, 3)
    if len(head) < _HEAD.size or len(fds) != 3:
        return 1
    job = json.loads(_recv_exact(conn, _HEAD.unpack(head)[0]))
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    conn.sendall(f"pid {os.getpid()}\n".encode())
    code = run_module_main(LAUNCH, job["args"], env=job["env"], cwd=job["cwd"])
    try:
        conn.sendall(f"rc {code}\n".encode())
    except OSError:
        pass
    return code


def _hand_over(conn: socket.socket, args: list[str]) -> int | None:
    """The launch handed to the warm server: its exit code; None when the server never took it (it closed
    without running launch.py: the attempt it watched ended before it was worth warming, and a shim that
    connected in that moment finds its connection reset), so the shim starts a cold one instead."""
    payload = json.dumps({"args": args, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    try:
        socket.send_fds(conn, [_HEAD.pack(len(payload))], [0, 1, 2])
        conn.sendall(payload)
        reader = conn.makefile("r")
        first = reader.readline().split()
    except OSError:
        return None
    if first[:1] != ["pid"]:
        return None
    server = int(first[1])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(server, s))
    last = reader.readline().split()
    return int(last[1]) if last[:1] == ["rc"] else 1


def shim(argv: list[str]) -> int:
    """`warm -u -m deepspeed.launcher.launch ARGS` on a node: a warm launch.py if one waits, else a cold one."""
    if argv[:3] != ["-u", "-m", LAUNCH]:
        os.execv(sys.executable, [sys.executable, *argv])
    args = argv[3:]
    run_id, attempt = os.environ.get("DSCLUSTER_RUN_ID", ""), os.environ.get("DSCLUSTER_ATTEMPT", "")
    conn = None
    if run_id and attempt.isdigit():
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(socket_name(run_id, int(attempt)))
            if not _peer_is_us(conn):
                raise OSError("not ours")
        except OSError:
            conn.close()
            conn = None
    warm = os.environ.get(WARM_VAR, "")
    if ":" in warm and run_id and attempt.isdigit():
        after, _, linger = warm.partition(":")
        # Cold: this process becomes launch.py (exec keeps the pid); warm: the server runs it.
        watched = os.getpid() if conn is None else _peer(conn)[0]
        spawn_server(run_id, int(attempt) + 1, watched, float(after),
                     float(linger or 120))
    if conn is not None:
        with conn:
            code = _hand_over(conn, args)
        if code is not None:
            return code
    os.execv(sys.executable, [sys.executable, "-u", "-m", LAUNCH, *args])
    return 1  # not reached


# ---- controller side: DeepSpeed's runner, imported before the attempt that runs it -----------------
def hold(module: str) -> int:
    __import__(module)
    line = sys.stdin.readline()
    if not line.strip():
        return 0  # not needed after all
    job = json.loads(line)
    return run_module_main(module, job["args"], env=job["env"], cwd=job["cwd"], executable=job.get("executable"))


def module_call(argv: list[str]) -> tuple[str, str | None, list[str]] | None:
    """(module, sys.executable to report or None, args) of a `python ... -m MODULE ARGS` argv that
    safepython built, or None for any other form."""
    from dscluster.safepython import _RUN_MODULE, _RUN_MODULE_FOR  # noqa: PLC0415

    for i, word in enumerate(argv[1:], 1):
        if word == "-m" and i + 1 < len(argv):
            return argv[i + 1], None, argv[i + 2:]
        if word == "-c" and i + 1 < len(argv):
            code = argv[i + 1]
            if code == _RUN_MODULE and i + 2 < len(argv):
                return argv[i + 2], None, argv[i + 3:]
            if code == _RUN_MODULE_FOR and i + 3 < len(argv):
                return argv[i + 3], argv[i + 2], argv[i + 4:]
            return None
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        run_id, attempt, watched, started, after, linger = argv[1:7]
        return serve(run_id, int(attempt), int(watched), started, float(after), float(linger))
    if argv[:1] == ["hold"]:
        return hold(argv[1])
    if argv[:1] == ["prestart"]:  # a node that came back (restarted) lost its warm launch.py: one now
        os.environ["DSCLUSTER_RUN_ID"] = argv[1]  # the run's teardown finds it by its marker
        spawn_server(argv[1], int(argv[2]), 0, 0.0, float(argv[3]))
        return 0
    return shim(argv)


if __name__ == "__main__":
    raise SystemExit(main())
