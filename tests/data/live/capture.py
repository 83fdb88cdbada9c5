"""Capture one live failure case: run a broken user script through `dscluster launch --local N` for real and keep
what a user would read.

    python tests/data/live/capture.py [--local 2] [--timeout S] tests/data/live/<case-id> -- script.py ARGS...

The case directory holds the script (and its ds_config, data...); the launch runs there, with no restart
(--max-restarts 0), and this writes beside them:
  log.txt          `dscluster logs RUN`: every rank's lines and the launcher's, as a user pastes them
  logs/            the run's own files the supervisor explained (launcher.log, each rank's *_rank<N>.log)
  supervisor.json  the explanation the supervisor recorded for the run (`dscluster status --json RUN`), the answer
                   the user saw when it happened, with the versions it ran on
The case's case.toml (mistake, expected, restart_helps, round, split) is written by hand; tests/unit/
test_live_failures.py explains every log.txt and checks it against case.toml.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"  # this checkout's dscluster, whatever the case's directory
FINISHED = ("succeeded", "failed", "stopped")  # runs/records/store.py's FINISHED: every other status is still going


def _dscluster(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    # -P: the case directory is not put on sys.path, as for the dscluster console script (a case's own logging.py or
    # queue.py shadows the standard library's for the ranks' script, never for dscluster itself).
    argv = [sys.executable, "-P", "-c", "import sys; from dscluster.cli import main; sys.exit(main())", *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=check, timeout=1800)


def _versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for name in ("torch", "deepspeed", "transformers", "accelerate"):
        try:
            out[name] = __import__(name).__version__
        except Exception:  # noqa: BLE001 - not installed: not part of the case
            pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", type=Path)
    ap.add_argument("--local", type=int, default=2, help="processes on this machine (default 2)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before the run is stopped")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- then the script and its arguments")
    args = ap.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    case = args.case.resolve()
    started = _dscluster("launch", "--local", str(args.local), "--max-restarts", "0", "--detach", *script, cwd=case,
                         check=False)
    if started.returncode != 0:  # refused before any rank started (preflight): that message is what the user read
        (case / "log.txt").write_text(started.stdout + started.stderr)
        (case / "supervisor.json").write_text(json.dumps({"refused": True, "exit": started.returncode,
                                                          "versions": _versions()}, indent=1) + "\n")
        return 0
    run = started.stdout.strip().splitlines()[-1].strip()
    deadline = time.monotonic() + args.timeout
    while True:
        status = _dscluster("status", "--json", run, cwd=case, check=False)
        if status.returncode not in (0, 5):  # 5: the run failed or was lost (ExitCode.RUN), its record is still printed
            raise SystemExit(f"dscluster status --json {run} exited {status.returncode}: {status.stderr.strip()}")
        record = json.loads(status.stdout)
        if record["status"] in FINISHED:
            break
        if time.monotonic() > deadline:
            _dscluster("stop", run, cwd=case, check=False)
            deadline = float("inf")
        time.sleep(2)
    (case / "log.txt").write_text(_dscluster("logs", run, cwd=case).stdout)
    logs = Path(record["run_dir"]) / "logs"  # the files the supervisor explained: each rank's own and the launcher's
    (case / "logs").mkdir(exist_ok=True)
    for f in sorted(logs.glob("*.log")):
        if f.name == "launcher.log" or "_rank" in f.name:
            shutil.copy(f, case / "logs" / f.name)
    exp = record.get("explanation") or {}
    keep = {k: exp.get(k) for k in ("signature", "cause", "fix", "retry", "evidence")}
    (case / "supervisor.json").write_text(json.dumps({"run_status": record["status"], "exit": record.get("exit_code"),
                                                      **keep, "versions": _versions()}, indent=1) + "\n")
    print(run, record["status"], keep.get("signature"))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
