"""`slurm`: every attempt is one srun step of the run's allocation (DeepSpeed's SlurmRunner); Slurm, not
dscluster's ssh, reaches the nodes. Everything Slurm-shaped is in this package:

- this module: the backend's traits, its options (`launch`'s request and `--sbatch`, `doctor --slurm`), its
  request (`clients.SlurmAsk`) as built, recorded and read back, its part of the plan, its job as the views
  show it;
- `clients.py`: the Slurm commands (salloc, srun, sbatch, scontrol, squeue, scancel) and their parsers;
- `srun_rank.py`: what srun starts for each rank (RANK, LOCAL_RANK... from Slurm's task variables);
- `supervise.py`: the supervisor's hooks (the allocation, the job watch, the time limit, the release);
- `batch.py`: `launch --sbatch`, a batch job that supervises the run from inside it;
- `doctor.py`: `doctor --slurm`, the checks of the Slurm cluster itself;
- `options.py`: those options, and DeepSpeed's --include/--exclude as Slurm's own node selection.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend, NodeTools, ToolCheck, option_unknown
from dscluster.sigtypes import sig

# What srun starts for each rank (it sets RANK etc. from SLURM_PROCID ...).
# slurmstepd's name for its own lines, with the node's after a dash; the node's name is read up to the next
# "slurmstepd" only, so a line of many is read once (linear time: tests/unit/test_explain_linear.py).
_STEPD = r"slurmstepd(?:-(?:(?!slurmstepd)[\w.-])+)?"
SRUN_RANK = Path(__file__).parent / "srun_rank.py"


class SlurmBackend(Backend):
    name = "slurm"
    over_ssh = False
    allocates = True
    nodes_python = False
    hooks = "dscluster.launcher.backends.slurm.supervise:SlurmRun"
    node_tools = ("srun",)
    host_packages = ("slurm-wlm", "munge")  # the simulated cluster's real Slurm (sim up --slurm) and its auth
    # srun's words for a task that failed, or that a signal ended (Slurm starts the ranks: no launch.py line),
    # and srun --label's prefix of every task's line.
    failure_lines = (r"srun: error: [^:\n]+: tasks? [\d,-]+: (?:Exited with exit code [1-9]|Killed|Terminated)",)
    signal_line = (r"srun: error: (?P<node>[\w.-]+): tasks? (?P<task>\d+)(?:[-,][\d,-]*)?: "
                   r"(?P<what>Killed|Segmentation fault|Aborted|Bus error|Floating point exception)\b")
    rank_label = r"^\s*(?P<rank>\d+): "
    programs = ("srun", "sbatch", "salloc", _STEPD)
    # What Slurm prints when a step waits on others, when it refuses a job's request or ends it at its time
    # limit, and a rank's Slurm task variable missing (the explainer's, placed right after the messages'
    # signatures: signatures.py).
    signatures = (
        # srun's words while a step waits for resources other steps of the job hold (before the refusals below:
        # "Unable to create step for job N: Requested nodes are busy" is this wait given up).
        sig("slurm-step-busy", r"step creation (?:still |temporarily )?disabled, retrying|Requested nodes are busy",
            "srun's job step is waiting for CPUs, memory or GPUs that other steps of the same job hold: several steps "
            "over the same nodes (or an srun started inside another srun's step), each asking for what the first "
            "already took.",
            "Let steps share the allocation's resources with srun --overlap (or SLURM_OVERLAP=1), give each step only "
            "what it needs (--exact with --ntasks, --gpus-per-task, --mem), or start one srun per node that launches all "
            "its ranks; don't start srun inside an srun step.", retry=False),
        # Its clients' words for an option they do not know (before the refusals below: "sbatch: error:
        # unrecognized option" is no resource request refused).
        option_unknown(r"sbatch|salloc|srun"),
        # What Slurm says when it refuses a request: the submission's verdict, or sbatch's/salloc's own error line
        # before it (a GRES form the cluster no longer accepts, a GPU request it requires) — except a controller that
        # did not answer, which a later try may pass.
        # The job id as quoted or elided ("for job 123.0", "for job ...", none); Slurm's own refusal reasons alone.
        sig("slurm-request-invalid", r"(?:Batch job submission failed|Unable to allocate resources|Unable to create step"
            r"(?: for job [^\s:]{1,40})?|(?:sbatch|salloc)(?:\.exe)?: error)(?::\s+|\s*:\s*)(?!Job/step already|Socket timed out|"
            r"Unable to contact|Job has been cancelled|Batch job submission failed|Unable to allocate|slurm_receive_msg|"
            r"Connection refused)\S|More processors requested than permitted|Requested node configuration is not available|"
            r"Invalid generic resource \(gres\) specification|Invalid (?:partition name|qos specification|account or "
            r"account/partition combination)|Node count specification invalid|Memory required by task is not available|"
            r"is not a valid node count|invalid node count|"
            # srun's/sbatch's option checks (src/common/slurm_opt.c, srun's opt.c) end in fatal(): "SLURM_GPUS_PER_TASK
            # is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", "SLURM_MEM_PER_CPU,
            # SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive" (an option and one inherited from sbatch).
            r"(?:srun|sbatch|salloc): fatal: [^\n]{0,200}?\bmutually exclusive\b",
            "Slurm refused the job's resource request: options it does not take together (one often inherited from "
            "the batch job's environment), or no node of the partition can satisfy it (more GPUs, tasks or "
            "CPUs per node than the nodes have or allow, a GRES form the cluster does not use, a partition, account "
            "or QOS it requires missing).",
            "Ask for what one node of the partition has (sinfo -o '%P %D %c %m %G', scontrol show node), use the "
            "cluster's GPU syntax (--gres=gpu:N or --gpus), and name the partition/account/QOS it requires; nothing "
            "ran, and the same request is refused again.", retry=False),
        # slurmstepd exec()s the batch script slurmd wrote into its spool directory (SlurmdSpoolDir/jobN/slurm_script;
        # src/slurmd/slurmstepd: error("execve(): %s: %m")): gone before it ran is the node's fault, not the job's.
        sig("slurm-node-fault", _STEPD + r": error: execve\(\): \S*/job\d+/slurm_script: No such file",
            "The node's Slurm daemon could not run the batch script it had stored in its own spool directory "
            "(SlurmdSpoolDir/jobN/slurm_script): the spool is on a /tmp that is cleaned or private to the service, "
            "or the node's slurmd is in a bad state; the job itself is not at fault.",
            "Tell the cluster's administrators the node's name (they fix its spool directory or restart slurmd or the "
            "node); meanwhile submit with --exclude=<node>.", retry=False),
        # slurmstepd's words when its memory accounting ends a job or step over its limit (the job's --mem, the
        # step's): "Job N exceeded memory limit (A > B), being killed", then "Exceeded job memory limit". Not its
        # warning "Exceeded step memory limit at some point" (the step went on, perhaps swapped out).
        sig("memcg-oom", _STEPD + r": (?:error: )?(?:Job|Step) [\d.]+ exceeded memory limit \(\d+ > \d+\), "
            r"being killed|" + _STEPD + r": (?:error: )?Exceeded (?:job|step) memory limit(?! at some point)",
            "A rank used more host memory than the Slurm job's (or step's) memory limit, and slurmstepd killed it.",
            "Ask for more memory (sbatch --mem or --mem-per-gpu) or use less: fewer DataLoader workers, no CPU offload, "
            "a smaller model per node. A restart hits the same limit.", retry=False),
        sig("slurm-time-limit", r"CANCELLED AT \S+ DUE TO TIME LIMIT",
            "Slurm stopped the job at its time limit (--time).",
            "Resume from the newest checkpoint in a new job (a restart resumes from the last committed checkpoint), "
            "save checkpoints more often than the time limit, or ask for a longer --time within the partition's "
            "limit."),
        # Round 109 of issue 45: a process that takes its rank from the variables Slurm sets for each task of a job
        # step, read with os.environ[...] (CPython's os._Environ.__getitem__: `raise KeyError(key) from None`, so the
        # error's line is KeyError: 'SLURM_NODEID'): Lightning's SLURMEnvironment (src/lightning/fabric/plugins/
        # environments/slurm.py: world_size, global_rank, local_rank, node_rank read SLURM_NTASKS, SLURM_PROCID,
        # SLURM_LOCALID, SLURM_NODEID), a project's own Slurm init (mqbench's dist_init: SLURM_PROCID), gpt-neox's
        # arguments.py (SLURM_NTASKS). Only Slurm's variable names: another launcher's (LOCAL_RANK,
        # OMPI_COMM_WORLD_RANK) and torch's env:// ValueError are not this.
        sig("slurm-env-missing", r"\bKeyError: 'SLURM_[A-Z0-9_]+'",
            "The program takes its ranks from the variables Slurm sets for each task of a job step (SLURM_PROCID, "
            "SLURM_NODEID, SLURM_LOCALID, SLURM_NTASKS), and this process does not have the one it read: it was not "
            "started by srun inside a Slurm job (a plain python or torchrun on a machine or node outside Slurm, or the "
            "batch script's own shell instead of srun), or the job's options do not set that variable (SLURM_NTASKS "
            "without --ntasks or --ntasks-per-node). Code that forces a Slurm cluster environment (Lightning's "
            "plugins=[SLURMEnvironment(...)]) reads them whether or not the job runs under Slurm.",
            "On a Slurm cluster, start the training with srun inside the allocation (sbatch or salloc with --nodes, "
            "--ntasks-per-node and the GPUs), one task per GPU where the program reads the task variables itself; "
            "outside Slurm, take the program's Slurm path out (the SLURMEnvironment plugin, a Slurm launcher or "
            "distributed option that reads SLURM_*) and start it with torchrun or python. A restart fails the same "
            "way.", retry=False),
    )

    def where(self) -> str:
        return tr("under Slurm")

    def check_local(self, local: int | None) -> None:
        if local is not None:
            raise UsageError(tr("--launcher slurm and --local contradict: Slurm starts the ranks on the nodes it "
                                "allocates"),
                             tr("drop --local to run through Slurm, or drop --launcher slurm to run on this machine "
                                "only"), setting="--launcher")

    def check_tools(self, node: NodeTools) -> ToolCheck:
        if node.is_master and not node.tools.get("srun"):
            return ToolCheck(False, tr("srun is not installed on the master"),
                             tr("run from a Slurm login node, or set launcher = \"pdsh\""))
        return ToolCheck(True, self.name)

    # ---- its options: launch's request and --sbatch, doctor --slurm (options.py) --------------------
    def options_title(self, command: str) -> str:
        return tr("Slurm (--launcher slurm)") if command == "launch" else tr("Slurm (--slurm)")

    def launch_options(self):
        from dscluster.launcher.backends.slurm import options  # noqa: PLC0415

        return options.LAUNCH()

    def request_from(self, given):
        from dscluster.launcher.backends.slurm import options  # noqa: PLC0415

        return options.request_from(given)

    def owns(self, request) -> bool:
        from dscluster.launcher.backends.slurm.clients import SlurmAsk  # noqa: PLC0415

        return isinstance(request, SlurmAsk)

    def refuse_request(self, launcher: str) -> None:
        raise UsageError(tr("--partition, --nodes, --ntasks-per-node, --gpus-per-node, --time and --sbatch are "
                            "Slurm options, but the launcher is {name!r}", name=launcher),
                         tr("add --launcher slurm (or set launcher = \"slurm\" in the cluster spec)"),
                         setting="launcher")

    def batch_requested(self, given) -> bool:
        return bool(given.get("sbatch"))

    def doctor_options(self):
        from dscluster.launcher.backends.slurm import options  # noqa: PLC0415

        return options.DOCTOR()

    def doctor(self, given):
        if not given.get("slurm"):
            return None
        from dscluster.launcher.backends.slurm import doctor  # noqa: PLC0415

        return doctor.run(given), doctor.SLURM_ROW

    # ---- Slurm's own request: --partition, --nodes, --ntasks-per-node, --gpus-per-node, --time --------
    def request(self, opts, spec):
        """The run's Slurm request (a clients.SlurmAsk): the options given, the spec's node count and slots
        otherwise."""
        from dscluster.launcher.backends.slurm.clients import SlurmAsk, check_ask  # noqa: PLC0415
        from dscluster.launcher.backends.slurm.options import node_selection  # noqa: PLC0415

        given = opts.scheduler or SlurmAsk(nodes=0, tasks_per_node=0)
        pick = node_selection(opts.runner)
        nodes = given.nodes or opts.runner.num_nodes or (len(pick["nodelist"].split(",")) if pick["nodelist"] else 0) \
            or (len(spec.nodes) if spec is not None else 1)
        per_node = given.tasks_per_node or opts.runner.num_gpus or (spec.nodes[0].slots if spec is not None else 1)
        return check_ask(SlurmAsk(nodes=nodes, tasks_per_node=per_node, partition=given.partition,
                                  gpus_per_node=given.gpus_per_node, time=given.time, **pick))

    def check_request(self, opts) -> None:
        """--num_nodes / --num_gpus under Slurm are --nodes / --ntasks-per-node; both given and different:
        refused."""
        given = opts.scheduler
        for flag, value, own, name in (("--num_nodes", opts.runner.num_nodes, getattr(given, "nodes", 0), "--nodes"),
                                       ("--num_gpus", opts.runner.num_gpus, getattr(given, "tasks_per_node", 0),
                                        "--ntasks-per-node")):
            if value is not None and own and value != own:
                raise UsageError(tr("{flag} {value} and {name} {own} disagree (under Slurm they are the same setting)",
                                    flag=flag, value=value, name=name, own=own), tr("keep one of them"), setting=flag)

    def allocated_hosts(self, opts, spec) -> tuple[tuple[str, int], ...]:
        """Inside an allocation: its nodes (SLURM_JOB_NODELIST) with the asked slots each. Outside one: none
        yet; the supervisor asks Slurm for the allocation and records its nodes."""
        from dscluster.launcher.backends.slurm import clients  # noqa: PLC0415
        from dscluster.launcher.runnerflags import RunnerFlags, select  # noqa: PLC0415

        ask = self.request(opts, spec)
        if clients.current_job() and os.environ.get("SLURM_JOB_NODELIST"):
            hosts = tuple((h, ask.tasks_per_node) for h in clients.hostnames(os.environ["SLURM_JOB_NODELIST"]))
            if ask.nodelist or ask.exclude:  # DeepSpeed's selection among the allocation's nodes
                hosts = select(hosts, RunnerFlags(include=opts.runner.include, exclude=opts.runner.exclude)).hosts
            return hosts
        return ()

    def request_record(self, request, hosts) -> dict[str, Any] | None:
        from dscluster.launcher.backends.slurm import clients  # noqa: PLC0415

        return {"ask": asdict(request), "job_id": clients.current_job() if hosts else None, "own_job": False}

    def recorded_request(self, recorded):
        from dscluster.launcher.backends.slurm.clients import SlurmAsk  # noqa: PLC0415

        return SlurmAsk(**recorded["ask"]) if recorded is not None else None

    def allocation_args(self, request, hosts) -> tuple[str, ...]:
        # Inside an allocation, the step runs on the nodes --include/--exclude left (srun may pick any otherwise).
        return (f"--nodelist={','.join(h for h, _ in hosts)}",) if hosts and (request.nodelist or request.exclude) \
            else ()

    def allocation_preview(self, request, run_id: str):
        from dscluster.launcher.backends.slurm.clients import salloc_argv  # noqa: PLC0415

        hosts = tuple((f"NODE{i + 1}", request.tasks_per_node) for i in range(request.nodes))
        return hosts, [tr("# first, the allocation (its nodes replace NODE1..NODE{n} below):", n=request.nodes),
                       shlex.join(salloc_argv(request, run_id))]

    # ---- a batch job (`launch --sbatch`: batch.py) -------------------------------------------------
    def batch_preview(self, record, run_dir: Path, supervisor: str) -> list[str]:
        from dscluster.launcher.backends.slurm import batch  # noqa: PLC0415

        return [tr("# the batch script (submitted with sbatch --parsable):"),
                batch.script_text(record, run_dir, supervisor).rstrip("\n")]

    def batch_record(self, recorded: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**(recorded or {}), "job_id": None}  # the batch job's supervisor finds its job in its environment

    def submit_batch(self, record, run_dir: Path, secrets: Mapping[str, str], supervisor: str):
        from dscluster.launcher.backends.slurm import batch  # noqa: PLC0415

        return batch.submit(record, run_dir, secrets, supervisor)

    def submitted_lines(self, run_id: str, job: str, world_size) -> tuple[str, list[str]]:
        from dscluster.console import OK  # noqa: PLC0415

        return (tr("{ok} run {id} submitted as Slurm job {job} (world size {n})", ok=OK, id=run_id, job=job,
                   n=world_size), [f"squeue -j {job}"])

    # ---- the job as the views show it ----------------------------------------------------------------
    def job_summary(self, recorded, active: bool):
        from dscluster.launcher.backends.slurm.clients import job_summary  # noqa: PLC0415

        return job_summary(recorded, active)

    def job_brief(self, job, long: bool = False) -> str:
        if not long:
            return f"slurm {job['job_id']}"
        left = f", {job['time_left']} left" if job.get("time_left") else ""
        return f"Slurm job {job['job_id']} {job.get('state') or ''}{left}".strip()

    def job_line(self, job) -> str:
        nodes = job.get("nodelist") or ",".join(job.get("nodes") or []) or "-"
        left = tr(", {left} left", left=job["time_left"]) if job.get("time_left") else ""
        return "Slurm: " + tr("job {job} {state} on {nodes}{left} (limit {limit})", job=job["job_id"],
                              state=job.get("state") or "?", nodes=nodes, left=left, limit=job.get("time_limit") or "-")

    # ---- the plan of an attempt -----------------------------------------------------------------------
    def env_values(self, req) -> dict[str, str]:
        # SlurmRunner starts no launch.py: the rendezvous address reaches srun_rank.py this way.
        return {"DSCLUSTER_MASTER_ADDR": req.hosts[0][0]} if req.hosts else {}

    def runner_args(self, req, *, logs: Path, secret_env: Mapping[str, str], add_file: Callable) -> list[str]:
        from dscluster.launcher.backends.slurm.clients import srun_args  # noqa: PLC0415

        argv = []
        argv += self.selection_args(req)
        per_node = {s for _, s in req.hosts}
        if len(per_node) != 1:
            raise ValueError(f"the slurm launcher needs the same slots on every host, not {sorted(per_node)}")
        stem = Path(req.target.program).stem if not req.target.is_module else req.target.program.rsplit(".")[-1]
        # srun's own options (one log per rank, kill the step when a rank fails, the step's name for
        # teardown), then the user's --launcher_args (srun takes the last of a repeated option).
        argv.append("--launcher_args=" + shlex.join([*srun_args(req.run_id, req.attempt, len(req.hosts),
                                                                per_node.pop(), logs, stem),
                                                     *req.launcher_args]))
        return argv

    def program_prefix(self, req) -> list[str]:
        return [str(SRUN_RANK)]  # SlurmRunner ignores --module: the shim runs the module itself
