"""The per-node watchdog of one run attempt: `python -m dscluster.runs.supervising.watchdog RUN_ID`.

The supervisor starts one on every node (over the cluster's ssh, or locally) before it starts the
DeepSpeed runner, and keeps its stdin open. Protocol, one line each way:

  supervisor -> node: "ping" (every quarter second), "kill [GRACE [all]]" (tear the attempt down here now;
                      `all`: the run ends, later attempts' pre-warmed launchers go too), "exit"
  node -> supervisor: "hb <number of the run's processes here> ranks=<RANK,...> stopped=<RANK,...> [build=1] [prog=...]"
                      every quarter second (stopped: ranks in the stopped state, SIGSTOP or a debugger: their
                      collectives hang every other rank; build: a process of the run holds torch's JIT build lock,
                      it compiles an op; prog: each rank's collectives and idleness,
                      runs/supervising/rankprogress.py), and "reaped N (why)" when it tore the run down here.

Why it exists: the run's ranks must not outlive the supervisor (SIGKILLed, its machine gone) nor a
network partition. The watchdog reaps the run's processes on its node when
  - its stdin reaches EOF (the supervisor process died: its pipe closed, ssh forwarded the EOF), or
  - no ping arrived for --ping-timeout seconds (partition, or a frozen supervisor; 3 s by default: the
    supervisor pings from a thread of its own that never waits on a disk, so a busy controller or a slow
    shared disk does not silence it), or
  - the supervisor says "kill".
The supervisor in turn treats missing "hb" lines as a lost node (crash or partition).
It reaps only its own attempt's processes and earlier ones (DSCLUSTER_ATTEMPT): a watchdog that wakes up late
(its node was frozen, or partitioned and healed) never touches the next attempt's ranks.
Whatever ended the attempt, the watchdog then removes the attempt's DeepSpeed CPU all-reduce buffers
from /dev/shm on its node: DeepSpeed creates one per rank (about 70 MB of RAM) and never unlinks it; and the
ranks' progress records (launcher/progress.py). A torch JIT build lock a process of the run held when it died
(killed while it built a DeepSpeed op) is removed once its holder is gone, at any time (runs/supervising/jitlocks.py):
else the next attempt, and every other job on that cache, would wait on it forever. Each removal is a line on
stderr (the run's watchdog log). Stdlib only, fast to start.
"""

from __future__ import annotations

import os
import re
import select
import sys
import time

from dscluster.runs.supervising import jitlocks, rankprogress
from dscluster.runs.supervising.reaper import reap, run_pids


def _say(line: str) -> bool:
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return True
    except (BrokenPipeError, OSError):
        return False


def remove_shm_buffers(master_port: int, shm_dir: str = "/dev/shm") -> int:
    """Unlink this user's DeepSpeed CPU all-reduce buffers of one rendezvous port; returns how many.
    DeepSpeed's shm comm op names them deepspeed_allreduce_buffer_<uid>_<master addr>_<port>_<rank>."""
    pattern = re.compile(rf"deepspeed_allreduce_buffer_{os.getuid()}_[^_/]+_{int(master_port)}_\d+")
    removed = 0
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return 0
    for name in names:
        if pattern.fullmatch(name):
            try:
                os.unlink(os.path.join(shm_dir, name))
                removed += 1
            except OSError:
                pass  # gone already, or another user's
    return removed


def rank_numbers(pids: list[int]) -> list[int]:
    """The RANK values among these processes: which ranks still live here. The first one to vanish
    before any teardown is the rank that died (killed by a signal names it)."""
    ranks = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith(b"RANK=") and item[5:].isdigit():
                ranks.add(int(item[5:]))
    return sorted(ranks)


def stopped_ranks(pids: list[int]) -> list[int]:
    """The RANK values of the ranks here whose process is stopped (state T or t in /proc/PID/stat)."""
    stopped = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state in ("T", "t"):
            stopped.append(pid)
    return rank_numbers(stopped)


def serve(run_id: str, ping_timeout: float, grace: float, interval: float = 0.25, attempt: int | None = None) -> int:
    last_ping = time.monotonic()
    fd = sys.stdin.fileno()
    buf = b""
    reason = None
    next_hb = 0.0
    activity = rankprogress.Activity()
    locks = jitlocks.LockWatch()
    while reason is None:
        now = time.monotonic()
        if now >= next_hb:
            pids = run_pids(run_id, upto=attempt)
            _removed(locks.tick(pids, now))
            ranks, stopped = rank_numbers(pids), stopped_ranks(pids)
            prog = rankprogress.report(run_id, attempt, pids, activity)
            if not _say(f"hb {len(pids)} ranks={','.join(map(str, ranks))} stopped={','.join(map(str, stopped))}"
                        + (" build=1" if locks.building else "") + (f" {prog}" if prog else "")):
                reason = "stdout closed"
                break
            next_hb = now + interval
        ready, _, _ = select.select([fd], [], [], max(0.05, next_hb - time.monotonic()))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                reason = "supervisor gone (stdin closed)"
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = line.strip().decode(errors="replace")
                if cmd == "ping":
                    last_ping = time.monotonic()
                elif cmd.startswith("kill"):
                    reason = "kill requested"
                    parts = cmd.split()
                    if parts[2:3] == ["all"]:  # the run's end: its pre-warmed next launch.py too (launcher/warm.py)
                        attempt = None
                    if len(parts) > 1:
                        try:
                            grace = float(parts[1])
                        except ValueError:
                            pass
                elif cmd == "exit":
                    return 0
        if reason is None and time.monotonic() - last_ping > ping_timeout:
            reason = f"no ping from the supervisor for {ping_timeout:.0f}s"
    locks.scan(run_pids(run_id, upto=attempt))  # a build started since the last scan: its holder is about to go
    n = reap(run_id, grace, upto=attempt)
    _removed(locks.release_orphans())
    _say(f"reaped {n} ({reason})")
    return 0


def _removed(paths: list[str]) -> None:
    for path in paths:
        print(f"watchdog: removed {path}: torch's JIT build lock, held by a process of this run that is gone "
              "(killed while it built; nobody could release it)", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dscluster.runs.supervising.watchdog")
    parser.add_argument("run_id")
    parser.add_argument("--ping-timeout", type=float, default=3.0)
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between heartbeats")
    parser.add_argument("--attempt", type=int, default=None, help="reap this attempt's processes and earlier ones")
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--master-port", type=int, default=0, help="the attempt's rendezvous port (0: unknown)")
    args = parser.parse_args(argv)
    try:
        serve(args.run_id, args.ping_timeout, args.grace, args.interval, args.attempt)
    except KeyboardInterrupt:
        reap(args.run_id, args.grace, upto=args.attempt)
    if args.master_port:
        remove_shm_buffers(args.master_port)
    rankprogress.remove_records(args.run_id, args.attempt)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
