"""`mpich`: the runner starts every rank through MPICH's mpirun (Hydra), over the cluster's ssh settings.

DeepSpeed's MPICHRunner runs `mpirun -n N -ppn P LAUNCHER_ARGS -genv K=V... -hosts H1,H2 python -u
launcher_helper.py --launcher mpich PROGRAM ARGS`, without its launch.py. What this backend adds, and why:

- `mpirun` is looked up on PATH, and Debian's alternatives make it Open MPI's where both are installed:
  the runner's PATH starts with a directory of the cluster's private state holding an `mpirun`
  that execs `mpirun.mpich` (`transport_env`), so the one runner finds MPICH without touching the alternatives.
- Hydra's ssh launcher runs `ssh` from PATH, which is the cluster's wrapper (ssh_config, pinned host
  keys); HYDRA_LAUNCHER_EXTRA_ARGS keeps the run's connections off the shared ControlMaster.
- launcher_helper.py waits for the program and exits 0 whatever it did, and Hydra then reports nothing:
  so each rank runs through this very file, by path (`program_prefix`; `python mpich.py --hosts H1,H2
  [--module] PROGRAM ARGS`; the nodes have dscluster, their watchdog is its own). It starts the program as its child with `--local_rank` as
  launch.py would, and prints launch.py's own words for the rank's end, prefixed by its node:
  `NODE: rank R: Process PID exits successfully.` or `NODE: rank R: exits with return code = -9`. That
  is the supervisor's failure line (with the node) and its count of ranks that finished
  (`reports_rank_exits`).
- the same slots on every host, and whole hosts only: MPICHRunner refuses either, but only once started.
- Hydra's proxies connect back to mpirun at this machine's name, which the nodes may not reach (a
  controller outside the nodes' network): mpirun is given the address this machine uses toward the
  master node (`-localhost`, through DSCLUSTER_MPICH_LOCALHOST in the runner's environment).
- the ranks' environment: the node's login environment, the DS_ENV_FILE's values (the runner's -genv) and
  the run's secrets by name (`-genvlist`: Hydra copies their values from mpirun's environment, never a
  command line); not mpirun's whole environment, Hydra's default (this machine's HOME, USER...).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend, NodeTools, ToolCheck
from dscluster.sigtypes import sig as _sig

SHIM = Path(__file__)
MPIRUN = "mpirun.mpich"  # Debian's name beside Open MPI's mpirun.openmpi
LOCALHOST_VAR = "DSCLUSTER_MPICH_LOCALHOST"  # this machine's address toward the master: mpirun's -localhost


class MPICHBackend(Backend):
    name = "mpich"
    selects_slots = False
    reports_rank_exits = True  # this file's shim prints launch.py's words for every rank
    node_tools = (MPIRUN, "hydra_pmi_proxy")
    # Beside Open MPI's openmpi-bin: installed without recommends (setup.sh's apt_install: no libmpich-dev), and
    # its mpirun/mpicc alternatives (priority 40) stay below Open MPI's (50), so `mpirun` stays Open MPI's;
    # this backend starts mpirun.mpich itself.
    host_packages = ("mpich",)
    node_packages = ("mpich",)
    # The shim's line for a failed rank is launch.py's (runs/supervising/detect.py knows it); Hydra's words for a proxy
    # that could not reach mpirun (mpirun would wait for it forever).
    failure_lines = (r"unable to connect to server \S+ at port \d+",)
    # What Hydra prints when it is handed Open MPI's options (the explainer's, placed right after the messages'
    # signatures: signatures.py).
    signatures = (
        # Round 113. MPICH's process manager Hydra (mpiexec/mpirun of MPICH, MVAPICH and Intel MPI): match_arg
        # (src/pm/hydra/lib/utils/args.c, earlier utils/args/args.c) ends its option table with "unrecognized argument %s"
        # for an option it lacks, printed without its dashes, then HYDU_parse_array's "argument matching returned error".
        # Only Open MPI's own options (mpirun's --allow-run-as-root, --mca, -x, --tag-output, --oversubscribe, ...; Hydra
        # has -bind-to, -map-by, -hostfile and -np): a command written for Open MPI (torchpack dist-run, DeepSpeed's
        # --launcher openmpi) run by an MPICH-family mpirun first on the PATH. (horovodrun asks mpirun --version and
        # writes Hydra's options for MPICH and Intel MPI.) In this backend's table: read for every log; it may name MPICH.
        _sig("hydra-open-mpi-option", r"\bmatch_arg \([^()\n]{1,200}\): unrecognized argument (?:allow-run-as-root|"
             r"g?mca|x|tag-output|timestamp-output|oversubscribe|npernode|npersocket|display-map|display-allocation|"
             r"output-filename|merge-stderr-to-stdout|rank-by|prefix)\b",
             "The MPI launcher that ran is Hydra's mpiexec (the launcher of MPICH and of Intel MPI and MVAPICH, built on "
             "it), but the command was written for Open MPI's launcher: Hydra does not know the Open MPI option it "
             "names (--allow-run-as-root, --mca, -x ...) and stopped while reading its arguments, before any rank "
             "started. Tools that build the MPI command line (torchpack dist-run, DeepSpeed's launcher for Open MPI) "
             "write Open MPI's options.",
             "See which MPI launcher comes first on the PATH (command -v, then its --version) and put Open MPI's first "
             "on every node (its distribution packages or environment module), with mpi4py and Horovod built against "
             "it; or use the tool's mode for a Hydra-based MPI where it has one (DeepSpeed: --launcher impi). A restart "
             "fails the same way.", retry=False),
    )

    def check_selection(self, include: str, setting: str) -> None:
        raise UsageError(tr("--launcher mpich cannot select single slots of a host ({spec}): DeepSpeed's "
                            "MPICH runner refuses --include/--exclude (mpirun takes whole hosts)", spec=include),
                         tr("select whole hosts (--include node1@node2, or --exclude node3), or use the pdsh "
                            "launcher"), setting=setting)

    def check_tools(self, node: NodeTools) -> ToolCheck:
        need = MPIRUN if node.is_master else "hydra_pmi_proxy"
        if not node.tools.get(need):
            return ToolCheck(False, tr("{tool} is not installed (MPICH's Hydra)", tool=need),
                             tr("apt-get install mpich on {node} (every node needs it)", node=node.node))
        return ToolCheck(True, tr("MPICH {path}", path=node.tools[need]))

    def transport_env(self, spec, no_mux: tuple[str, ...]) -> dict[str, str]:
        from dscluster.cluster.identity import cluster_state_dir  # noqa: PLC0415
        from dscluster.cluster.pdsh import path_with_wrapper  # noqa: PLC0415

        folder = cluster_state_dir(spec, create=False) / "mpich"
        write_mpirun(folder)
        env = {"PATH": os.pathsep.join([str(folder), path_with_wrapper(spec)]), "HYDRA_LAUNCHER": "ssh",
               "HYDRA_LAUNCHER_EXTRA_ARGS": " ".join(no_mux)}
        here = address_toward(spec.nodes[0].address) if spec.nodes else None
        if here:
            env[LOCALHOST_VAR] = here
        return env

    def runner_args(self, req, *, logs: Path, secret_env: Mapping[str, str], add_file: Callable) -> list[str]:
        per_node = {s for _, s in req.hosts}
        if len(per_node) != 1:
            raise ValueError(f"the mpich launcher needs the same slots on every host, not {sorted(per_node)}")
        argv = ["--force_multi"] if len(req.hosts) == 1 else []
        # Hydra would give every rank mpirun's whole environment (this machine's HOME and USER included):
        # only the secrets' names (values from mpirun's environment, never on a command line) and the
        # runner's own -genv values (the DS_ENV_FILE's) reach the ranks, over the node's login environment.
        mpi_args = ["-genvlist", ",".join(sorted(secret_env))] if secret_env else ["-genvnone"]
        argv.append("--launcher_args=" + shlex.join([*mpi_args, *req.launcher_args]))
        return argv

    def program_prefix(self, req) -> list[str]:
        shim = [str(SHIM), f"--hosts={','.join(h for h, _ in req.hosts)}"]
        if req.runner.no_local_rank:
            shim.append("--no_local_rank")
        # With --no_python the helper starts its target directly: the shim is then started by the interpreter.
        return [req.python, *shim, "--no_python"] if req.runner.no_python else shim


def write_mpirun(folder: Path) -> None:
    """`folder/mpirun`: a script that execs MPICH's mpirun by its own path (Hydra starts its proxy on every
    node from the directory mpirun was started from: a symlink here would send the nodes to this one)."""
    from dscluster.fsutil import atomic_write_text  # noqa: PLC0415

    real = shutil.which(MPIRUN)
    if not real:
        raise ConfigError(tr("MPICH's {tool} is not installed on this machine", tool=MPIRUN),
                          tr("apt-get install mpich (beside openmpi-bin, its mpirun stays Open MPI's)"))
    text = ("#!/bin/sh\n# dscluster: DeepSpeed's MPICH runner starts `mpirun`: MPICH's, whatever the alternatives say,\n"
            f"# told the address its proxies on the nodes connect back to.\n"
            f"exec {shlex.quote(real)} ${{{LOCALHOST_VAR}:+-localhost \"${LOCALHOST_VAR}\"}} \"$@\"\n")
    script = folder / "mpirun"
    if not script.is_symlink() and script.is_file() and script.read_bytes() == text.encode():
        return
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write_text(script, text, mode=0o755)


def address_toward(address: str) -> str | None:
    """This machine's own address on the way to `address` (no packet is sent); None when there is no route."""
    import socket  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect((address, 9))
            return sock.getsockname()[0]
        except OSError:
            return None


# ---- the shim every rank runs through (standard library only below) --------------------------------
def shim_argv(argv: list[str], env: Mapping[str, str]) -> tuple[list[str], str, str]:
    """(the program's argv, its node, its rank) from the shim's arguments and the rank's environment."""
    hosts, opts = [], set()
    while argv and argv[0].startswith("--") and argv[0] != "--":
        flag, _, value = argv.pop(0).partition("=")
        if flag == "--hosts":
            hosts = value.split(",")
        else:
            opts.add(flag)
    if not argv:
        raise SystemExit("usage: mpich.py --hosts=H1,H2 [--no_local_rank] [--no_python] [--module] PROGRAM [ARGS...]")
    rank = env.get("PMI_RANK") or env.get("PMIX_RANK") or "?"
    local = env.get("MPI_LOCALRANKID") or env.get("PALS_LOCAL_RANKID") or "0"
    per_node = int(env.get("LOCAL_SIZE") or 1)
    node = hosts[int(rank) // per_node] if rank.isdigit() and int(rank) // per_node < len(hosts) else "?"
    module = ["-m"] if "--module" in opts else []
    program = argv if "--no_python" in opts else [sys.executable, "-u", *module, *argv]
    if "--no_local_rank" not in opts:
        program.append(f"--local_rank={local}")  # as DeepSpeed's launch.py
    return program, node, rank


def shim_main(argv: list[str]) -> int:
    program, node, rank = shim_argv(list(argv), os.environ)
    child = subprocess.Popen(program)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    code = child.wait()
    words = f"Process {child.pid} exits successfully." if code == 0 else f"exits with return code = {code}"
    print(f"{node}: rank {rank}: {words}", flush=True)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(shim_main(sys.argv[1:]))
