"""How fast each fault is found and torn down, and the next attempt runs, by node count (issue #46).

    sudo .venv/bin/python benchmarks/fault_detect.py [4 8 16 32]

For each size N: one simulated cluster of N nodes, one supervised run of one tiny rank per node
(benchmarks/tiny_rank.py: no torch in the rank) with one restart per fault, each fault on its last node:
  killed rank     a rank SIGKILLed
  partition       the node's link cut (`sim partition`), healed once the attempt is torn down
  frozen node     every process on the node SIGSTOPped (`sim freeze`), healed (SIGCONT) once torn down
  restarted node  the node's every process SIGKILLed (`sim crash`), started again (`sim heal`) once torn down
  stopped rank    one rank SIGSTOPped: its peers' collectives hang on it (the hung collective's usual cause)
  hung collective the ranks all-reduce over gloo (tiny_rank.py --collective: torch in every rank); the last
                  rank sleeps in Python between two all-reduces, every process alive (runs/hang.py finds it);
                  timed from the moment it starts sleeping (its own log line)
and for each:
  torn down       fault -> no rank of the attempt left on any node (a frozen node's stopped ranks aside:
                  they are gone once it is healed)
  decided         heal (or the fault, where nothing is healed) -> the supervisor's `restart` event (the nodes
                  answer again; what follows is DeepSpeed's launch, every node's launch.py importing torch)
  restarted       heal (or the fault) -> every rank of the next attempt started
Ranks are read from this machine's process table, which holds every simulated node's processes: RANK,
DSCLUSTER_RUN_ID and DSCLUSTER_ATTEMPT in their environment. The 1-minute load average is printed beside
each figure: the machine is shared. One run per size. Needs root.
Each fault comes once the next attempt's launchers are pre-warmed (launcher/warm.py: a launch.py on every
node that has imported torch, from 15 s after the ranks started; the run's runner is held from the failure
on), as on any run that has trained for more than a few seconds; a restarted node has lost its own and
starts cold.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "tiny_rank.py"
PY = sys.executable
FAULTS = ("killed rank", "partition", "frozen node", "restarted node", "stopped rank", "hung collective")


def processes(needle: bytes):
    """The PIDs (as /proc names them) of the processes whose command line holds `needle`."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read():
                    yield entry
        except OSError:
            continue


def ranks(run_id: str) -> dict[int, list[tuple[int, str]]]:
    """attempt -> [(pid, state)] of the run's ranks (tiny_rank.py processes) on every simulated node."""
    out: dict[int, list[tuple[int, str]]] = {}
    needle = f"DSCLUSTER_RUN_ID={run_id}".encode()
    for entry in processes(b"tiny_rank.py"):
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle not in env or not any(e.startswith(b"RANK=") for e in env):
            continue
        attempt = next((int(e[18:]) for e in env if e.startswith(b"DSCLUSTER_ATTEMPT=")), 0)
        if state != "Z":
            out.setdefault(attempt, []).append((int(entry), state))
    return out


def wait_until(cond, timeout: float, every: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(every)
    return bool(cond())


def load() -> float:
    return os.getloadavg()[0]


class Faults:
    def __init__(self, sim, env: dict[str, str], n: int):
        self.sim, self.env, self.n = sim, env, n
        self.last = sim.nodes[-1]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([PY, "-m", "dscluster.cli", *args], env=self.env, cwd=str(self.sim.spec.shared_dir),
                              capture_output=True, text=True, timeout=600)

    @property
    def hang_file(self) -> Path:
        return self.sim.spec.shared_dir / "hang-last-rank"

    def launch(self, collective: bool = False) -> str:
        self.attempt = 1
        rank_args = ["--collective", "--hang-file", str(self.hang_file), "--hang-rank", str(self.n - 1)] \
            if collective else []
        for _ in range(30):  # another user's torch JIT build holds its lock for a while: launch refuses meanwhile
            res = subprocess.run([PY, "-m", "dscluster.cli", "launch", "--cluster", str(self.sim.spec_path), "--detach",
                                  "--skip-doctor", "--max-restarts", "1", "--restart-wait", "300",
                                  "--name", "faults", str(SCRIPT), "--seconds", "1800", *rank_args],
                                 env=self.env, cwd=str(self.sim.spec.shared_dir), capture_output=True, text=True,
                                 timeout=600)
            if res.returncode == 0 or "not ready to launch" not in res.stderr:
                break
            time.sleep(10)
        if res.returncode != 0:
            raise RuntimeError(res.stdout + res.stderr)
        self.run_id = next(w for w in res.stdout.split() if w.startswith("faults-"))
        if not wait_until(lambda: len(ranks(self.run_id).get(1, [])) >= self.n, 900, 0.1):
            raise RuntimeError("the first attempt never started every rank")
        return self.run_id

    def warm_ready(self) -> bool:
        """Every node has the next attempt's launch.py pre-warmed: its warm server has imported (its name)."""
        ready = 0
        want = f"serve\0{self.run_id}\0{self.attempt + 1}\0".encode()
        for entry in processes(want):
            try:
                with open(f"/proc/{entry}/comm") as f:
                    ready += f.read().strip() == "dscluster-warm"
            except OSError:
                continue
        return ready >= self.n

    def last_rank(self) -> int:
        """A rank of the current attempt on the last node (its PID as this machine sees it)."""
        mine = {p for p, _ in ranks(self.run_id).get(self.attempt, [])}
        ns = os.readlink(f"/proc/{self.sim._node(self.last)['pid1']}/ns/pid")
        for pid in mine:
            try:
                if os.readlink(f"/proc/{pid}/ns/pid") == ns:
                    return pid
            except OSError:
                continue
        raise RuntimeError(f"no rank of attempt {self.attempt} on {self.last}")

    def hang(self) -> float:
        """The last rank starts sleeping between two all-reduces; when it did (its log line), as a monotonic time."""
        from dscluster.runs.records import store

        self.hang_file.write_text("")
        logs = store.run_path(self.sim.spec.shared_dir, self.run_id) / "logs"

        def said() -> float | None:
            for log in logs.glob(f"*_rank{self.n - 1}.log"):
                text = log.read_text(errors="replace")
                if "hanging at " in text:
                    return float(text.split("hanging at ")[1].split()[0])
            return None

        took = wait_until(lambda: said() is not None, 120, 0.05)
        self.hang_file.unlink()  # the next attempt runs on
        if not took:
            raise RuntimeError("hung collective: the last rank never saw the hang file")
        return time.monotonic() - (time.time() - said())

    def torn_down(self, frozen: bool) -> bool:
        left = ranks(self.run_id).get(self.attempt, [])
        return not [p for p, state in left if not (frozen and state in "Tt")]

    def restart_event(self) -> float | None:
        from dscluster.runs.records import store

        events = store.read_events(store.run_path(self.sim.spec.shared_dir, self.run_id))
        return next((e["t"] for e in events if e["event"] == "restart"), None)

    def phases(self, epoch: float) -> str:
        """Where the seconds from the heal to the ranks went: the supervisor's events, then the runner's pdsh
        command and every node's launch.py spawning its rank (their log stamps), in seconds from the heal."""
        import datetime

        from dscluster.runs.records import store

        run = store.run_path(self.sim.spec.shared_dir, self.run_id)
        marks = [(e["event"], e["t"] - epoch) for e in store.read_events(run) if e["t"] >= epoch - 0.001]
        text = (run / "logs" / "launcher.log").read_text(errors="replace")
        text = text[text.rfind(f"] attempt {self.attempt}:"):]
        for line in text.splitlines():
            if "cmd = pdsh" in line or "spawned with command" in line:
                stamp = line[line.index("[") + 1:line.index("]")]
                at = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
                marks.append(("pdsh" if "cmd = pdsh" in line else "spawned", at - epoch))
        return ", ".join(f"{name} {t:.2f}" for name, t in marks)

    def one(self, fault: str) -> tuple[float, float, float, float, float]:
        """(torn down s, load then, decided s, restarted s, load then) for one fault, on a run of its own."""
        self.launch(collective=fault == "hung collective")
        if not wait_until(self.warm_ready, 300, 0.2):
            raise RuntimeError(f"{fault}: the next attempt's launchers were not pre-warmed in 300 s")
        rank = self.last_rank()
        t0 = time.monotonic()
        if fault == "hung collective":
            t0 = self.hang()
        elif fault == "killed rank":
            os.kill(rank, signal.SIGKILL)
        elif fault == "partition":
            self.sim.partition(self.last)
        elif fault == "frozen node":
            self.sim.freeze(self.last)
        elif fault == "restarted node":
            self.sim.crash(self.last)
        else:
            os.kill(rank, signal.SIGSTOP)
        frozen = fault == "frozen node"
        healed = fault in ("partition", "frozen node", "restarted node")
        if not wait_until(lambda: self.torn_down(frozen), 300):
            raise RuntimeError(f"{fault}: attempt {self.attempt} not torn down in 300 s")
        down, down_load = time.monotonic() - t0, load()
        t1, epoch = t0, time.time() - (time.monotonic() - t0)
        if healed:
            time.sleep(1.0)  # the fault lasts a moment past the teardown
            t1, epoch = time.monotonic(), time.time()
            self.sim.heal(self.last)
        self.attempt += 1
        if not wait_until(lambda: len(ranks(self.run_id).get(self.attempt, [])) >= self.n, 900, 0.05):
            raise RuntimeError(f"{fault}: attempt {self.attempt} never started every rank")
        up, up_load = time.monotonic() - t1, load()
        decided = (self.restart_event() or float("nan")) - epoch
        print(f"  {fault}: {self.phases(epoch)}", flush=True)
        self.cli("stop", self.run_id, "--cluster", str(self.sim.spec_path))
        wait_until(lambda: not ranks(self.run_id), 120)
        return down, down_load, decided, up, up_load


def measure(n: int, home: Path, faults: tuple[str, ...] = FAULTS) -> dict[str, tuple[float, float, float, float]]:
    from dscluster.sim import SimCluster, down

    name = f"faults{os.environ.get('DSCLUSTER_SIM_SALT', '')}"[:20]
    env = {**os.environ, "DSCLUSTER_HOME": str(home)}
    sim = SimCluster.up(name, n, home=home)
    figures = {}
    try:
        subprocess.run([PY, "-m", "dscluster.cli", "doctor", "--cluster", str(sim.spec_path)], env=env,
                       capture_output=True, timeout=600)  # pins the host keys, as a first doctor does
        b = Faults(sim, env, n)
        for fault in faults:
            try:
                figures[fault] = d, dl, dec, up, ul = b.one(fault)
            except Exception as err:  # noqa: BLE001 - the other faults still measured
                print(f"{n} nodes, {fault}: {err}", flush=True)
                b.cli("stop", getattr(b, "run_id", "-"), "--cluster", str(sim.spec_path))
                continue
            print(f"{n} nodes, {fault}: torn down {d:.2f} s (load {dl:.1f}), restart decided {dec:.2f} s, "
                  f"ranks up {up:.2f} s (load {ul:.1f})", flush=True)
    finally:
        down(name, purge=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[4, 8, 16, 32])
    parser.add_argument("--fault", action="append", choices=FAULTS, help="only these faults (repeatable)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="dsc-faults-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    results = {}
    try:
        for n in args.sizes:
            try:
                results[n] = measure(n, home, tuple(args.fault or FAULTS))
            except Exception as err:  # noqa: BLE001 - report the sizes that ran
                print(f"{n} nodes: {err}", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("\n| fault | " + " | ".join(f"{n} nodes: torn down (load) / decided / up (load), s" for n in results) + " |")
    print("|---|" + "---|" * len(results))
    for fault in FAULTS:
        cells = [f"{d:.2f} ({dl:.0f}) / {dec:.2f} / {up:.2f} ({ul:.0f})"
                 for d, dl, dec, up, ul in (results[n][fault] for n in results if fault in results[n])]
        print(f"| {fault} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
