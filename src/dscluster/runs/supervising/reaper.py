"""Find and kill exactly one run's processes on this machine.

Every process of a run carries DSCLUSTER_RUN_ID=<run-id> in its environment (launch/plan.py puts it
in the run's env file; the runner, pdsh, launch.py and every rank inherit it). This module reads
/proc/<pid>/environ and matches that exact value, so a teardown can never touch another run, unlike
DeepSpeed's own `pkill -f <python> -u -m deepspeed.launcher.launch`.

Stdlib only: it runs on every node, often inside the ssh session of the watchdog.
"""

from __future__ import annotations

import os
import signal
import time

RUN_ID_VAR = b"DSCLUSTER_RUN_ID"
ATTEMPT_VAR = b"DSCLUSTER_ATTEMPT="


def _later_attempt(env: list[bytes], upto: int | None) -> bool:
    """Whether the process belongs to an attempt after `upto` (None: every attempt is in scope)."""
    if upto is None:
        return False
    for item in env:
        if item.startswith(ATTEMPT_VAR) and item[len(ATTEMPT_VAR):].isdigit():
            return int(item[len(ATTEMPT_VAR):]) > upto
    return False


def run_pids(run_id: str, exclude: set[int] | None = None, upto: int | None = None) -> list[int]:
    """PIDs on this machine whose initial environment has DSCLUSTER_RUN_ID=run_id (and, with `upto`, no
    DSCLUSTER_ATTEMPT later than it: a late watchdog of attempt N leaves attempt N+1 alone)."""
    needle = RUN_ID_VAR + b"=" + run_id.encode()
    skip = {os.getpid()} | (exclude or set())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid in skip:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue  # gone, or not ours to read (another user's process is never ours to kill)
        env = data.split(b"\0")
        if needle in env and not _later_attempt(env, upto):
            found.append(pid)
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def proc_environ(pid: int) -> dict[str, str]:
    """A process's initial environment ({} when it is gone or not this user's)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            items = f.read().split(b"\0")
    except OSError:
        return {}
    out = {}
    for item in items:
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def _is_rank(pid: int) -> bool:
    """A rank of the run (or a process of one: its data loader's workers): RANK is in its environment, which
    DeepSpeed's launch.py (or a backend's rank shim) gives each rank; the launchers themselves have none."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return any(item.startswith(b"RANK=") for item in f.read().split(b"\0"))
    except OSError:
        return False


def reap(run_id: str, grace: float = 3.0, exclude: set[int] | None = None, upto: int | None = None) -> int:
    """SIGTERM the run's ranks, SIGKILL what is left after grace seconds. Returns how many were found.

    The grace is the ranks' (a program may flush or save on SIGTERM). The launchers around them (DeepSpeed's
    launch.py, pdsh's remote shells) are killed at once: on SIGTERM launch.py would terminate the ranks itself
    and then unload torch, which costs every node a second of CPU and, where nodes share CPUs (the
    simulated cluster), made a stop grow with the node count. When no rank is left, the rest get SIGTERM."""
    pids = run_pids(run_id, exclude, upto)
    if not pids:
        return 0
    ranks = [p for p in pids if _is_rank(p)]
    _signal_all(ranks, signal.SIGTERM)
    _signal_all(ranks, signal.SIGCONT)  # a stopped rank (SIGSTOP, the hung collective's cause) takes its SIGTERM now
    _signal_all([p for p in pids if p not in ranks], signal.SIGKILL if ranks else signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if not run_pids(run_id, exclude, upto):
            return len(pids)
    # Anything still there (including children started during the grace) gets SIGKILL, twice:
    # a launcher may spawn one more child between the scan and the kill.
    for _ in range(2):
        left = run_pids(run_id, exclude, upto)
        if not left:
            break
        _signal_all(left, signal.SIGKILL)
        time.sleep(0.2)
    return len(pids)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dscluster.runs.supervising.reaper")
    parser.add_argument("run_id")
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--list", action="store_true", help="only print the run's PIDs")
    parser.add_argument("--upto", type=int, default=None,
                        help="with --list: leave out a later attempt's processes (a pre-warmed next launcher)")
    args = parser.parse_args(argv)
    if args.list:
        print(" ".join(map(str, run_pids(args.run_id, upto=args.upto))))
        return 0
    n = reap(args.run_id, args.grace)
    left = run_pids(args.run_id)
    print(f"reaped {n} left {len(left)}")
    return 0 if not left else 1


if __name__ == "__main__":
    raise SystemExit(main())
