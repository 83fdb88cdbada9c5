"""Slurm's clients for a run: what to ask for, the commands that ask, and what Slurm says back.

A run with `launcher = "slurm"` either runs inside an allocation that already exists (`salloc`,
`sbatch`: SLURM_JOB_ID and SLURM_JOB_NODELIST are set), or asks for one itself (`salloc --no-shell`
with the run's --partition/--nodes/--gpus-per-node/--time) and gives it back when the run ends.
Either way the ranks are one srun step per attempt (DeepSpeed's SlurmRunner), so a restart stays
inside the same allocation and teardown cancels exactly the run's own step (`scancel JOB.STEP`),
never another job, and the run's own job only when the run asked for it.

The builders here are pure (argv and text); `query`/`allocate`/`cancel_*` run Slurm's own clients.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr

_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


@dataclass(frozen=True)
class SlurmAsk:
    """What a run asks Slurm for when it is not already inside an allocation."""

    nodes: int = 1
    tasks_per_node: int = 1
    partition: str | None = None
    gpus_per_node: int = 0
    time: str | None = None  # Slurm's own format: MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]
    # DeepSpeed's --include / --exclude of whole nodes, as Slurm's own node selection (comma lists)
    nodelist: str | None = None
    exclude: str | None = None

    @property
    def ranks(self) -> int:
        """The world size the request asks for."""
        return self.nodes * self.tasks_per_node


def time_seconds(text: str | None) -> int | None:
    """A Slurm time limit in seconds ("30" is 30 minutes, "0:30" 30 seconds); None for none/UNLIMITED."""
    if text is None or text.strip().upper() in ("", "UNLIMITED", "INFINITE", "NOT_SET", "PARTITION_LIMIT", "N/A",
                                                "NONE"):
        return None
    m = _TIME.match(text.strip())
    if not m:
        raise UsageError(tr("--time {value!r} is not a Slurm time limit", value=text),
                         tr("use minutes (30), MM:SS (0:30), HH:MM:SS (2:00:00) or D-HH (1-12)"), setting="time")
    days, a, b, c = (int(x) if x else None for x in m.groups())
    if days is not None:  # D-HH[:MM[:SS]]
        return days * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    if c is not None:
        return a * 3600 + b * 60 + c
    if b is not None:
        return a * 60 + b
    return a * 60


def check_ask(ask: SlurmAsk) -> SlurmAsk:
    if ask.nodes < 1 or ask.tasks_per_node < 1 or ask.gpus_per_node < 0:
        raise UsageError(tr("--nodes and the slots per node must be 1 or more, --gpus-per-node 0 or more"),
                         tr("e.g. --nodes 2 --gpus-per-node 8"), setting="nodes")
    time_seconds(ask.time)
    if ask.partition is not None and not re.match(r"^[\w.-]+$", ask.partition):
        raise UsageError(tr("--partition {value!r} is not a partition name", value=ask.partition),
                         tr("list them with: sinfo -s"), setting="partition")
    return ask


def job_name(run_id: str) -> str:
    return f"dsc-{run_id}"


def step_name(run_id: str, attempt: int) -> str:
    return f"dsc-{run_id}-a{attempt}"


def ask_args(ask: SlurmAsk) -> list[str]:
    """The resource options salloc and sbatch share."""
    out = [f"--nodes={ask.nodes}", f"--ntasks-per-node={ask.tasks_per_node}"]
    if ask.partition:
        out.append(f"--partition={ask.partition}")
    if ask.gpus_per_node:
        out.append(f"--gpus-per-node={ask.gpus_per_node}")
    if ask.time:
        out.append(f"--time={ask.time}")
    if ask.nodelist:
        out.append(f"--nodelist={ask.nodelist}")
    if ask.exclude:
        out.append(f"--exclude={ask.exclude}")
    return out


def salloc_argv(ask: SlurmAsk, run_id: str) -> list[str]:
    """An allocation with no shell: it lives until `scancel` or its time limit, and srun steps run in it."""
    return ["salloc", "--no-shell", f"--job-name={job_name(run_id)}", *ask_args(ask)]


def srun_args(run_id: str, attempt: int, nodes: int, tasks_per_node: int, logs: Path, log_prefix: str) -> list[str]:
    """srun options for one attempt (DeepSpeed's --launcher_args). Why each:
    - --kill-on-bad-exit=1: one rank that fails ends the step at once (fail fast, like launch.py).
    - --job-name: the step's name, so teardown finds and cancels only this run's step.
    - --nodes/--ntasks-per-node: DeepSpeed's runner passes only -n, which srun may pack onto fewer nodes.
    - --output with %t: one log per rank (stdout and stderr), named like DeepSpeed's per-rank logs.
    - --unbuffered: rank output reaches the log as it is printed, so stall detection sees progress."""
    return ["--kill-on-bad-exit=1", f"--job-name={step_name(run_id, attempt)}", f"--nodes={nodes}",
            f"--ntasks-per-node={tasks_per_node}", f"--output={logs}/{log_prefix}_rank%t.log", "--unbuffered"]


def sbatch_script(*, run_id: str, ask: SlurmAsk, python: str, run_dir: Path, env: dict[str, str],
                  supervisor: str, private_dir: Path | None = None) -> str:
    """The batch script of `launch --sbatch`: its first node runs the run's supervisor (the module
    `supervisor`), which starts one srun step per attempt inside the job's allocation. No secret is in it: the supervisor's hand-off
    (record and secrets) is a 0600 file in `private_dir`, a directory only the submitting user can write
    (never the run dir, which the node user can write), read once and removed by the supervisor, which
    runs isolated (`-I`: nothing imported from the job's working directory). The job's own output goes
    there too, so no file in the run dir is opened by name as the submitting user."""
    private = private_dir or run_dir
    lines = ["#!/bin/sh", f"#SBATCH --job-name={job_name(run_id)}"]
    lines += [f"#SBATCH {a}" for a in ask_args(ask)]
    lines += [f"#SBATCH --output={private}/sbatch.log", "#SBATCH --open-mode=append",
              f"# dscluster run {run_id}: supervised from inside this job (restarts stay in its allocation)"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    handoff = shlex.quote(str(private / "handoff.json"))
    lines.append(f"exec {shlex.quote(python)} -I -m {supervisor} --handoff {handoff} "
                 f"{shlex.quote(str(run_dir))}")
    return "\n".join(lines) + "\n"


def parse_granted(text: str) -> str | None:
    """The job id in salloc's "Granted job allocation 42" (or "Pending job allocation 42")."""
    m = re.search(r"job allocation (\d+)", text)
    return m.group(1) if m else None


def parse_show_job(text: str) -> dict[str, str]:
    """`scontrol show job -o ID` -> {"JobState": "RUNNING", ...} (one line of Key=Value words)."""
    out: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep and key not in out:
            out[key] = value
    return out


def parse_steps(text: str, name: str) -> list[str]:
    """Step ids named `name` in `squeue --steps -h -o '%i %j'` output."""
    return [line.split()[0] for line in text.splitlines() if len(line.split()) == 2 and line.split()[1] == name]


# ---- running Slurm's clients ---------------------------------------------------------------------

def _run(argv: list[str], timeout: float = 30.0) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ConfigError(tr("{cmd} is not installed here: the slurm launcher needs Slurm's client commands",
                             cmd=argv[0]), tr("install Slurm's clients (apt-get install slurm-client) or use "
                                              "launcher = \"pdsh\""), setting="launcher") from None
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]} timed out after {timeout:.0f}s")


def current_job(env: dict[str, str] | None = None) -> str | None:
    """The allocation this process runs in (salloc's shell, a batch script), if any."""
    env = os.environ if env is None else env
    return env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID") or None


def hostnames(nodelist: str) -> list[str]:
    res = _run(["scontrol", "show", "hostnames", nodelist])
    if res.returncode != 0:
        raise ConfigError(tr("scontrol cannot expand the node list {nodes!r}: {err}", nodes=nodelist,
                             err=res.stderr.strip()), tr("check the allocation: squeue --me"), setting="nodes")
    return res.stdout.split()


def job_info(job_id: str) -> dict[str, str]:
    """Slurm's view of a job ({} when the controller no longer knows it)."""
    res = _run(["scontrol", "show", "job", "-o", str(job_id)], timeout=15)
    return parse_show_job(res.stdout) if res.returncode == 0 else {}


def allocate(ask: SlurmAsk, run_id: str, timeout: float) -> str:
    """salloc --no-shell; returns the job id once granted (waits up to `timeout` for resources)."""
    res = _run(["timeout", "--signal=INT", f"{max(1, int(timeout))}"] + salloc_argv(ask, run_id), timeout=timeout + 15)
    job = parse_granted(res.stderr + res.stdout)
    if res.returncode != 0 or job is None:
        if job is not None:
            cancel_job(job)
        raise ConfigError(tr("Slurm did not grant the allocation: {err}", err=(res.stderr.strip() or "?")[-400:]),
                          tr("check the partition and nodes: sinfo; dscluster doctor"), setting="partition")
    return job


def cancel_step(job_id: str, run_id: str, attempt: int, wait: float = 10.0) -> list[str]:
    """Cancel this attempt's own step(s) of the job, and wait until Slurm has ended them."""
    name = step_name(run_id, attempt)
    found: list[str] = []
    deadline = time.monotonic() + wait
    while True:
        res = _run(["squeue", "--steps", "-h", "-j", str(job_id), "-o", "%i %j"], timeout=15)
        steps = parse_steps(res.stdout, name) if res.returncode == 0 else []
        if not steps or time.monotonic() >= deadline:
            return found
        for step in steps:
            if step not in found:
                _run(["scancel", step], timeout=15)
                found.append(step)
        time.sleep(0.3)


def cancel_job(job_id: str) -> None:
    _run(["scancel", str(job_id)], timeout=15)


def timed_out(info: dict[str, str]) -> bool:
    return info.get("JobState") == "TIMEOUT" or info.get("Reason") == "TimeLimit"


def submit_batch(script: Path, cwd: str) -> str:
    """sbatch --parsable SCRIPT -> the job id (sbatch exports this environment, SLURM_CONF included)."""
    try:
        res = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60,
                             cwd=cwd, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ConfigError(tr("sbatch is not installed here"), tr("install Slurm's clients, or run without --sbatch"),
                          setting="sbatch") from None
    job = res.stdout.strip().split(";")[0]
    if res.returncode != 0 or not job.isdigit():
        raise ConfigError(tr("sbatch refused the job: {err}", err=(res.stderr.strip() or res.stdout.strip())[-400:]),
                          tr("check the partition, nodes and time limit: sinfo; dscluster doctor"), setting="sbatch")
    return job


def live_job(job_id: str) -> dict[str, str]:
    """What squeue says of a queued or running job now: state, time left, nodes ({} once it left the queue)."""
    res = _run(["squeue", "-h", "-j", str(job_id), "-o", "%T|%L|%N|%l"], timeout=10)
    parts = res.stdout.strip().split("|") if res.returncode == 0 else []
    if len(parts) != 4:
        return {}
    return {"state": parts[0], "time_left": parts[1], "nodelist": parts[2], "time_limit": parts[3]}


def job_summary(info: Mapping | None, active: bool) -> dict | None:
    """The run's Slurm side for views: the fields recorded in the run record's `slurm` (`info`), refreshed
    from squeue while the job is queued or running (`active`: job_id, state, nodes, time_left,
    time_limit); None for a run that is not a Slurm run."""
    if not isinstance(info, Mapping) or not info.get("job_id"):
        return None
    out = {k: info.get(k) for k in ("job_id", "state", "nodes", "time_limit", "partition", "own_job")}
    out["time_left"] = None
    if active:
        try:
            live = live_job(info["job_id"])
        except ConfigError:  # no Slurm clients on this machine: the recorded view
            live = {}
        if live:
            out.update(state=live["state"], time_left=live["time_left"], time_limit=live["time_limit"],
                       nodelist=live["nodelist"])
    return out
