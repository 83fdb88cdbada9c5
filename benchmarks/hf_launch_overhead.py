"""The Hugging Face Trainer's whole command on the simulated cluster: `dscluster launch` against plain
`deepspeed --hostfile`, the same run alternating, with where each launch's seconds go.

    sudo .venv/bin/python benchmarks/hf_launch_overhead.py [--nodes 3] [--rounds 3] [--steps 12]

One simulated N-node cluster (root: network namespaces, real sshd/pdsh/DeepSpeed's launcher, gloo on CPU),
tests/data/hf_trainer_script.py (a tiny Llama from a config, HF's "auto" ZeRO-2 ds_config) on every node:
  - plain: `python -m deepspeed.launcher.runner --hostfile H --master_addr node0 script ...` with pdsh and the
    recipe's .deepspeed_env carrying PATH, from the command to its exit;
  - dscluster: `dscluster launch --hostfile H --attach script ...` (checks, run record, supervisor), from the
    command to its exit.
Rounds alternate (plain first in odd rounds, dscluster first in even ones) so both sides meet the same
load on a shared machine; the 1-minute load average is printed beside each figure. dscluster's source tree
is compiled first (as scripts/setup.sh and any pip install leave it), so neither side compiles its own
modules on every start.

Phases of each launch, in seconds from the command (`phases` in the output):
  checks      dscluster: its checks (prepare + preflight, ssh to every node) took this long (events.jsonl)
  created     dscluster: the run written and its supervisor started (the CLI's part done)
  launched    dscluster: the supervisor started DeepSpeed's runner (its own part done)
  runner_up   DeepSpeed's runner imported and started pdsh (its `cmd = pdsh ...` line)
  spawned     every node's launch.py spawned its rank (launch.py's stamps, the last node's)
  first_step  the Trainer's first progress-bar step (as the line arrived)
  last_step   its last step
  ranks_exited every rank exited (launch.py's stamps, the last one)
  finished    dscluster: the run recorded as finished (events.jsonl)
  exit        the command exited
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "data" / "hf_trainer_script.py"
PY = sys.executable
HF_DS_CONFIG = {
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto", "bf16": {"enabled": "auto"},
    "zero_optimization": {"stage": 2, "overlap_comm": False, "reduce_bucket_size": "auto",
                          "allgather_bucket_size": 5e7},
}
_STEP = re.compile(r"\|\s*(\d+)/(\d+)\s*\[")
_RANK_START = re.compile(r"(Loading|Initializing|\[rank|Using|loss|Setting ds_accelerator|\[INFO\]|\[WARNING\])")


def load() -> float:
    return os.getloadavg()[0]


def run_phases(runs_dir: Path, name: str, wall0: float) -> dict:
    """The dscluster run's own events (events.jsonl, time.time() stamps) as seconds from the command:
    the run created (the CLI's checks done, supervisor started), DeepSpeed's runner launched (the
    supervisor's preparation done), the run finished (the runner's end seen), the teardown done."""
    out: dict[str, float] = {}
    for run_dir in sorted(runs_dir.glob(f"{name}-*")):
        for line in (run_dir / "events.jsonl").read_text().splitlines():
            ev = json.loads(line)
            key = {"created": "created", "launched": "launched", "finished": "finished",
                   "teardown": "teardown"}.get(ev.get("event"))
            if key and key not in out:
                out[key] = round(float(ev["t"]) - wall0, 2)
            if key == "created" and "checks_s" in ev:
                out["checks"] = ev["checks_s"]
        for line in (run_dir / "logs" / "launcher.log").read_text(errors="replace").splitlines():
            launch_mark(line, wall0, out)
    return out


_LAUNCH_PY = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] \[INFO\] \[(?:launch|runner)\.py:\d+:main\] "
                        r"(process \d+ spawned|Process \d+ exits successfully|cmd = )")


def launch_mark(line: str, wall0: float, out: dict) -> None:
    """DeepSpeed's runner.py and launch.py lines carry each machine's clock (the simulated nodes share this
    one's), to the millisecond: the runner's pdsh command, the last node's rank spawned, the last rank's exit."""
    m = _LAUNCH_PY.search(line)
    if m:
        t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + int(m.group(2)) / 1000 - wall0
        key = {"c": "runner_up", "p": "spawned", "P": "ranks_exited"}[m.group(3)[0]]
        out[key] = round(max(out.get(key, t), t), 2)


def timed(argv: list[str], cwd: Path, env: dict, steps: int) -> dict:
    """Runs `argv` to its exit; the seconds at which its output first showed a rank, the first and last step."""
    t0 = time.monotonic()
    wall0 = time.time()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    marks: dict[str, float] = {}
    tail: list[str] = []
    assert proc.stdout is not None
    buf = b""
    while chunk := proc.stdout.read1(65536):
        now = time.monotonic() - t0
        buf += chunk
        *lines, buf = re.split(rb"[\r\n]", buf)
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            tail = (tail + [line])[-40:]
            launch_mark(line, wall0, marks)
            if "ranks" not in marks and _RANK_START.search(line) and "runner.py" not in line:
                marks["ranks"] = now
            if (m := _STEP.search(line)) and int(m.group(1)) >= 1:
                marks.setdefault("first_step", now)
                if int(m.group(1)) >= steps:
                    marks.setdefault("last_step", now)
    rc = proc.wait(timeout=600)
    marks["exit"] = time.monotonic() - t0
    marks["wall0"] = wall0
    if rc != 0:
        raise RuntimeError(f"{argv[:4]}... exit {rc}:\n" + "\n".join(tail))
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--name", default="hfbench" + os.environ.get("DSCLUSTER_SIM_SALT", ""))
    parser.add_argument("--json", help="also write every figure here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 2
    # As scripts/setup.sh (and any pip install) leaves it: bytecode for dscluster's tree, as DeepSpeed's has.
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "src" / "dscluster")], stdout=subprocess.DEVNULL,
                   check=False)
    from dscluster.cluster.pdsh import pdsh_env
    from dscluster.sim import SimCluster

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped benchmark still takes its cluster down
    home = Path(tempfile.mkdtemp(prefix="dsc-hfbench-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("DSCLUSTER_CLUSTER", None)
    env.pop("DSCLUSTER_SHARED", None)
    sim = SimCluster.up(args.name[:20], args.nodes, home=home)
    rows: list[dict] = []
    try:
        work = Path(sim.spec.shared_dir) / "hfbench"
        work.mkdir(exist_ok=True)
        os.chmod(work, 0o777)
        shutil.copy(SCRIPT, work / SCRIPT.name)
        (work / "ds_config.json").write_text(json.dumps(HF_DS_CONFIG))
        (work / "hostfile").write_text("".join(f"{n.address} slots=1\n" for n in sim.spec.nodes))
        (work / ".deepspeed_env").write_text(f"PATH={Path(PY).parent}:/usr/local/bin:/usr/bin:/bin\n")
        script_args = ["--deepspeed", "ds_config.json", "--per_device_train_batch_size", "2", "--max_steps",
                       str(args.steps), "--logging_steps", "4", "--save_steps", "1000", "--report_to", "none",
                       "--use_cpu"]
        plain_env = {**env, **pdsh_env(sim.spec)}

        def plain(i: int) -> dict:
            return timed([PY, "-u", "-m", "deepspeed.launcher.runner", "--hostfile", "hostfile", "--master_addr",
                          sim.spec.nodes[0].address, "--master_port", "29517", SCRIPT.name,
                          "--output_dir", f"out_plain_{i}", *script_args], work, plain_env, args.steps)

        def dsc(i: int) -> dict:
            marks = timed([PY, "-m", "dscluster.cli", "launch", "--hostfile", "hostfile", "--attach",
                           "--max-restarts", "0", "--name", f"bench{i}", SCRIPT.name,
                           "--output_dir", f"out_dsc_{i}", *script_args], work, env, args.steps)
            return {**marks, **run_phases(Path(sim.spec.shared_dir) / "runs", f"bench{i}", marks["wall0"])}

        dsc(0)  # warm-up (page cache, the node user's JIT ops), not measured
        for i in range(1, args.rounds + 1):
            order = [("plain", plain), ("dscluster", dsc)] if i % 2 else [("dscluster", dsc), ("plain", plain)]
            for side, fn in order:
                before = load()
                marks = fn(i)
                rows.append({"round": i, "side": side, "load_before": before, "load_after": load(), **marks})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        sim.down(purge=True)
        shutil.rmtree(home, ignore_errors=True)
    report(rows, args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


PHASES = ("checks", "created", "launched", "runner_up", "spawned", "first_step", "last_step", "ranks_exited",
          "finished", "exit")


def report(rows: list[dict], args) -> None:
    def med(side: str, key: str) -> float:
        vals = [r[key] for r in rows if r["side"] == side and key in r]
        return statistics.median(vals) if vals else float("nan")

    def fmt(v: float | None) -> str:
        return "    -" if v is None or v != v else f"{v:5.1f}"

    print(f"\nhf_launch_overhead.py: {args.nodes} simulated nodes x 1 rank, HF Trainer {args.steps} steps, "
          f"gloo on CPU, {os.cpu_count()} cores shared with other users")
    print("phases, seconds from the command (checks: a duration; -: not this side's)")
    print("round side       load " + " ".join(f"{k[:10]:>10}" for k in PHASES))
    for r in rows:
        print(f"{r['round']:>5} {r['side']:<10} {r['load_before']:4.1f} "
              + " ".join(f"{fmt(r.get(k)):>10}" for k in PHASES))
    print("median           " + " " * 5)
    for side in ("plain", "dscluster"):
        print(f"      {side:<10}      " + " ".join(f"{fmt(med(side, k)):>10}" for k in PHASES))
    tails = {side: statistics.median([r["exit"] - r["ranks_exited"] for r in rows if r["side"] == side
                                      and "ranks_exited" in r] or [float("nan")]) for side in ("plain", "dscluster")}
    print(f"median start path (command -> last rank spawned): plain {med('plain', 'spawned'):.1f}  "
          f"dscluster {med('dscluster', 'spawned'):.1f}")
    print(f"median end path (last rank exited -> command exited): plain {tails['plain']:.1f}  "
          f"dscluster {tails['dscluster']:.1f}")
    per_round = [d["exit"] / p["exit"] for i in {r["round"] for r in rows}
                 for p in rows if p["round"] == i and p["side"] == "plain"
                 for d in rows if d["round"] == i and d["side"] == "dscluster"]
    p, d = med("plain", "exit"), med("dscluster", "exit")
    print(f"whole command: median plain {p:.1f} s, dscluster {d:.1f} s, ratio of medians {d / p:.3f}; "
          f"per-round ratios {', '.join(f'{x:.3f}' for x in per_round)} (median {statistics.median(per_round):.3f})")
    loads = [r[k] for r in rows for k in ("load_before", "load_after")]
    print(f"1-minute load average while measured: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
