"""DeepSpeed's `launch.py` for one machine, without importing torch: the `local` backend's rank starter.

A local run used to start DeepSpeed's runner, which started DeepSpeed's `launch.py`, which started the
ranks: three Python processes one after the other, each importing torch and DeepSpeed (about 5 s each on
an H200 host's file system, `benchmarks/demo_phases.py`) before the ranks' own import even began. On one
machine the runner only turns `--num_gpus N` / `--include localhost:1,3` into a device list and runs
`launch.py`, and `launch.py` only sets each rank's environment and watches the processes. This module
does exactly that, with the standard library (and psutil, which DeepSpeed requires, for the process
tree), so the ranks start at once. Multi-node runs (every other backend) still go through DeepSpeed's
runner, and a local run with `--bind_cores_to_rank` / `--bind_core_list` too (DeepSpeed's numactl logic).

What it keeps from DeepSpeed 0.19's launch.py, line for line where others read it:
- each rank's environment: CUDA_VISIBLE_DEVICES = the selected devices, MASTER_ADDR=127.0.0.1,
  MASTER_PORT, WORLD_SIZE, LOCAL_SIZE, RANK, LOCAL_RANK, CROSS_RANK=0, CROSS_SIZE=1 (and torchrun's name for
  LOCAL_SIZE, LOCAL_WORLD_SIZE: scripts written for torchrun read it, launch.py does not set it); argv
  `python -u [-m] PROGRAM --local_rank=N ARGS` (`--no_python`, `--no_local_rank` as DeepSpeed);
- one log per rank, `<log_dir>/<%Y%m%d%H%M%S>_rank<N>.log`, stdout and stderr together;
- fail fast: the first rank that exits non-zero gets its siblings' process trees terminated (SIGTERM,
  then SIGKILL after 30 s), and "CMD exits with return code = N" is logged (before the teardown, where
  launch.py logs it after), as the supervisor, `dscluster explain` and the rank-error reader expect
  (runs/supervising/verdict.py, signatures.py); the launcher then exits 128+N for a rank killed by signal N;
- "Process PID exits successfully." per rank at INFO (the supervisor counts them: `reports_rank_exits`),
  silenced by `--quiet` / `--log_level warning` as DeepSpeed's are;
- SIGINT/SIGTERM terminate every rank's tree, then exit 1.
As DeepSpeed's runner does with `--num_gpus`, a CUDA_VISIBLE_DEVICES of the launching environment is
replaced by the selected devices (`--devices`), never combined with it.

One addition, `--cache_bytecode`: where torch's compiled bytecode is neither there nor going to be written
(PYTHONDONTWRITEBYTECODE=1, as many container images set, or a site-packages the ranks cannot write),
every rank compiles about 2,800 modules from source at every start: 10 s of an H200 host's 14 s rank
start-up (cProfile: `builtins.compile`, benchmarks/RESULTS.md). The ranks then get PYTHONPYCACHEPREFIX, a
0700 directory of their user's (`$XDG_CACHE_HOME/dscluster/pycache`, else `~/.cache/...`), and
PYTHONDONTWRITEBYTECODE is dropped for them, so the bytecode is compiled once, written there only, and
read afterwards; site-packages itself stays untouched. The plan leaves the
flag out when the user's `--env` names PYTHONDONTWRITEBYTECODE or PYTHONPYCACHEPREFIX. On a host of 8 cores
or more, a new, empty cache is first filled by all of them at once (`fill_cache`).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time

LOG = logging.getLogger("dscluster.locallaunch")
KILL_AFTER_S = 30.0  # launch.py's terminate_process_tree: SIGTERM, then SIGKILL what is left after 30 s


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m dscluster.launcher.locallaunch", allow_abbrev=False,
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", required=True, help="the device indices the ranks get, e.g. 0,1 (one rank each)")
    ap.add_argument("--master_port", type=int, required=True)
    ap.add_argument("--enable_each_rank_log", default=None, help="directory of one log per rank")
    ap.add_argument("--module", action="store_true")
    ap.add_argument("--no_python", action="store_true")
    ap.add_argument("--no_local_rank", action="store_true")
    ap.add_argument("--log_level", default="info", choices=["debug", "info", "warning", "error", "critical"])
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--cache_bytecode", action="store_true",
                    help="give the ranks a bytecode cache of their user's when torch's is missing and unwritable")
    ap.add_argument("training_script")
    ap.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.module and args.no_python:
        ap.error("Don't use both the '--no_python' flag and the '--module' flag at the same time.")
    return args


def devices_of(text: str) -> list[int]:
    return [int(d) for d in text.split(",") if d.strip()]


def rank_env(base: dict[str, str], devices: list[int], master_port: int, local_rank: int) -> dict[str, str]:
    env = dict(base)
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(d) for d in devices)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(master_port), WORLD_SIZE=str(len(devices)),
               CROSS_RANK="0", CROSS_SIZE="1", LOCAL_SIZE=str(len(devices)), RANK=str(local_rank),
               LOCAL_RANK=str(local_rank), LOCAL_WORLD_SIZE=str(len(devices)))
    return env


def cache_dir(env: dict[str, str]) -> str:
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dscluster", "pycache")


def bytecode_is_lost(env: dict[str, str]) -> bool:
    """Whether the ranks would compile torch from source at every start: its `__init__`'s bytecode is not
    cached beside it, and will not be (PYTHONDONTWRITEBYTECODE, or a directory this user cannot write).
    Asked here, without importing torch: the ranks run this interpreter, with this environment."""
    import importlib.util  # noqa: PLC0415

    if env.get("PYTHONPYCACHEPREFIX"):
        return False
    spec = importlib.util.find_spec("torch")
    origin = spec.origin if spec else None
    if not origin or os.path.exists(importlib.util.cache_from_source(origin)):
        return False
    return bool(env.get("PYTHONDONTWRITEBYTECODE")) or not os.access(os.path.dirname(origin), os.W_OK)


def with_bytecode_cache(env: dict[str, str]) -> dict[str, str]:
    """The ranks' environment with PYTHONPYCACHEPREFIX at this user's cache (made 0700) when their torch
    bytecode would be lost; unchanged otherwise, or when that directory cannot be made."""
    if not bytecode_is_lost(env):
        return env
    where = cache_dir(env)
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError:
        return env
    LOG.info("torch's bytecode is not cached and would not be (PYTHONDONTWRITEBYTECODE or a read-only "
             "site-packages): the ranks cache it in %s (PYTHONPYCACHEPREFIX)", where)
    # Bytecode is written there only, never beside the sources: what PYTHONDONTWRITEBYTECODE keeps clean.
    cached = {**{k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPYCACHEPREFIX": where}
    if not os.listdir(where) and (os.cpu_count() or 1) >= FILL_MIN_CORES:
        fill_cache(cached)
    return cached


# A first, empty cache is filled by every core at once before the ranks start (one rank compiles alone,
# module by module, as it imports): on a 16-core host a few seconds instead of 10. On fewer cores the
# ranks' own compilation is left to do it, compiling no more than they import.
FILL_MIN_CORES = 8
FILL_PACKAGES = ("torch", "deepspeed", "sympy", "numpy", "triton", "pydantic", "networkx", "jinja2", "dscluster")
_NOT_IMPORTED = r"[/\\](tests?|idlelib|tkinter|lib2to3|turtledemo|ensurepip|_vendor)[/\\]"


def fill_cache(env: dict[str, str], dirs: list[str] | None = None) -> None:
    """compileall with one worker per core over the standard library and the packages a DeepSpeed rank
    imports, writing into the ranks' cache (env's PYTHONPYCACHEPREFIX); what fails to compile is left to
    the ranks, which compile it (or fail on it) as they would have."""
    import importlib.util  # noqa: PLC0415
    import sysconfig  # noqa: PLC0415

    if dirs is None:
        dirs = [sysconfig.get_paths()["stdlib"]]
        for name in FILL_PACKAGES:
            spec = importlib.util.find_spec(name)
            dirs += list(spec.submodule_search_locations or []) if spec else []
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", "-x", _NOT_IMPORTED, *dirs], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return
    LOG.info("bytecode cache filled by %d cores in %.1f s", os.cpu_count() or 1, time.monotonic() - started)


def rank_argv(args: argparse.Namespace, local_rank: int) -> list[str]:
    cmd = [] if args.no_python else [sys.executable, "-u", *(["-m"] if args.module else [])]
    cmd.append(args.training_script)
    if not args.no_local_rank:
        cmd.append(f"--local_rank={local_rank}")
    return cmd + list(args.training_script_args)


def terminate_tree(pid: int) -> None:
    """launch.py's terminate_process_tree: SIGTERM the process and its descendants, SIGKILL what is left. psutil (a
    DeepSpeed requirement) is imported by main() before any handler is set: imported here, inside the teardown a
    signal handler runs, a second SIGTERM (the supervisor's, at the same moment) re-entered the handler halfway
    through the import, met a partially initialized psutil and crashed the launcher with its ranks still alive."""
    import psutil  # noqa: PLC0415  (already in sys.modules: main() imports it first)

    try:
        parent = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    tree = [parent, *parent.children(recursive=True)]
    for p in tree:
        try:
            p.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(tree, timeout=KILL_AFTER_S)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


class Ranks:
    """The started ranks, and launch.py's rules for watching them."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.processes: list[subprocess.Popen] = []
        self.last_cmd: list[str] = []
        self.last_return_code: int | None = None
        self.tearing_down = False

    def start(self) -> None:
        args = self.args
        devices = devices_of(args.devices)
        base = dict(os.environ)
        if args.cache_bytecode:
            base = with_bytecode_cache(base)
        log_dir = args.enable_each_rank_log
        if log_dir:
            if os.path.isfile(log_dir):
                raise SystemExit(f"{log_dir} should not be a file, it should be a directory.")
            os.makedirs(log_dir, exist_ok=True)
        prefix = time.strftime("%Y%m%d%H%M%S", time.localtime())
        LOG.info("devices=%s, num_local_procs=%d, master_port=%d", devices, len(devices), args.master_port)
        for local_rank in range(len(devices)):
            cmd = rank_argv(args, local_rank)
            env = rank_env(base, devices, args.master_port, local_rank)
            if log_dir:
                with open(os.path.join(log_dir, f"{prefix}_rank{local_rank}.log"), "w") as log:
                    process = subprocess.Popen(cmd, env=env, stdout=log, stderr=log)
            else:
                process = subprocess.Popen(cmd, env=env)
            LOG.info("process %d spawned with command: %s", process.pid, cmd)
            self.processes.append(process)
            self.last_cmd = cmd

    def sigkill_handler(self, signum: int, frame=None) -> None:  # the name launch.py's teardown lines carry
        if self.tearing_down:  # a signal during the teardown (the supervisor's SIGTERM after a rank's exit): it goes on
            return
        self.tearing_down = True
        for process in self.processes:
            LOG.info("Killing subprocess %d", process.pid)
            try:
                terminate_tree(process.pid)
            except OSError:
                pass
        if self.last_return_code is not None:
            # launch.py's sys.exit(-9) is status 247; a rank killed by a signal exits as a shell says it: 128+N
            code = self.last_return_code
            sys.exit(128 - code if code < 0 else code)
        if signum in (signal.SIGINT, signal.SIGTERM):
            LOG.info("Main process received %s, exiting", signal.Signals(signum).name)
        sys.exit(1)

    def watch(self) -> int:
        alive = list(self.processes)
        while alive:
            for process in list(alive):
                code = process.poll()
                if code is None:
                    continue
                if code != 0:
                    self.last_return_code = code
                    self.last_cmd = process.args if isinstance(process.args, list) else self.last_cmd
                    # Said before the teardown (launch.py says it after): the supervisor may stop this launcher
                    # while a sibling still takes its time to go, and the failed rank's own code (a signal) must
                    # be in the log by then, not this launcher's status.
                    LOG.error("%s exits with return code = %d", self.last_cmd, code)
                    self.sigkill_handler(signal.SIGTERM)  # exits
                LOG.info("Process %d exits successfully.", process.pid)
                alive.remove(process)
            if alive:
                time.sleep(0.2)
        return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    level = "error" if args.quiet else args.log_level
    logging.basicConfig(level=getattr(logging, level.upper()), stream=sys.stdout,
                        format="[%(asctime)s] [%(levelname)s] [locallaunch.py:%(lineno)d:%(funcName)s] %(message)s")
    ranks = Ranks(args)
    import psutil  # noqa: F401, PLC0415 - terminate_tree's, imported before a signal handler can need it

    signal.signal(signal.SIGINT, ranks.sigkill_handler)
    signal.signal(signal.SIGTERM, ranks.sigkill_handler)
    ranks.start()
    return ranks.watch()


if __name__ == "__main__":
    sys.exit(main())
