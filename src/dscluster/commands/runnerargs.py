"""DeepSpeed's runner flags on `dscluster launch` and `dscluster demo`, spelled as `deepspeed` spells them.

The recipe's `deepspeed --hostfile=H --master_addr=A train.py ...` works with only `deepspeed` replaced by
`dscluster launch`. Parsing only: launcher/runnerflags.py checks them against the cluster.
"""

from __future__ import annotations

import argparse

from dscluster.i18n import tr
from dscluster.launcher.runnerflags import REFUSED, RunnerFlags

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")  # DeepSpeed's set_log_level_from_string

# Refused flags that take a value in DeepSpeed's runner (the others are switches).
_REFUSED_WITH_VALUE = ("--min_elastic_nodes", "--max_elastic_nodes", "--node_rank", "--autotuning",
                       "--enable_each_rank_log", "--venv_script")


class _Refused(argparse.Action):
    """Remembers a flag dscluster refuses, so the refusal comes with its reason (not argparse's 'unrecognized')."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = list(getattr(namespace, "refused_runner_flags", None) or [])
        seen.append(option_string)
        namespace.refused_runner_flags = seen


def _int_flag(flag: str):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(tr("{flag} needs a whole number, not {text!r}", flag=flag, text=text)) \
                from None
    parse.__name__ = flag
    return parse


def add_runner_flags(p: argparse.ArgumentParser, *, demo: bool = False) -> None:
    """DeepSpeed runner flags that apply to launch (and, where noted, demo). --hostfile, --launcher and
    -m/--module are defined by launch itself."""
    g = p.add_argument_group(tr("DeepSpeed runner flags (as `deepspeed` takes them)"))
    g.add_argument("--master_addr", metavar="ADDR", help=tr("must be the first host of the hostfile (checked)"))
    g.add_argument("--master_port", type=_int_flag("--master_port"), metavar="PORT",
                   help=tr("a fixed rendezvous port (default: a free random port per attempt)"))
    g.add_argument("--num_nodes", type=_int_flag("--num_nodes"), metavar="N", help=tr("the first N hosts of the hostfile"))
    g.add_argument("--num_gpus", "--num_accelerators", dest="num_gpus", type=_int_flag("--num_gpus"), metavar="N",
                   help=tr("ranks per node: slots 0..N-1 of every host"))
    g.add_argument("-i", "--include", metavar="SPEC", help=tr("hosts and slots to use, e.g. node1@node2:0,1"))
    g.add_argument("-e", "--exclude", metavar="SPEC", help=tr("hosts or slots not to use, e.g. node2:1"))
    g.add_argument("--launcher_args", metavar="ARGS", help=tr("extra arguments for the launcher DeepSpeed runs (pdsh, an MPI launcher, a scheduler's), one quoted string"))
    g.add_argument("--ssh_port", type=_int_flag("--ssh_port"), metavar="PORT",
                   help=tr("must match the nodes' sshd port (checked)"))
    g.add_argument("--force_multi", action="store_true", help=tr("accepted: dscluster always starts nodes over ssh"))
    g.add_argument("--bind_cores_to_rank", action="store_true",
                   help=tr("bind each rank to its own CPU cores with numactl (needs numactl on every node)"))
    g.add_argument("--bind_core_list", metavar="CORES", help=tr("the cores to bind ranks to, e.g. 0-15,32-47"))
    g.add_argument("--log_level", choices=LOG_LEVELS, metavar="LEVEL",
                   help=tr("DeepSpeed's launcher log level: debug, info (default), warning, error, critical"))
    g.add_argument("-q", "--quiet", action="store_true", help=tr("DeepSpeed's launcher logs errors only"))
    if not demo:
        g.add_argument("--no_python", action="store_true", help=tr("the program is an executable, not a Python script"))
        g.add_argument("--no_local_rank", action="store_true", help=tr("do not pass --local_rank to the program"))
    for flag in REFUSED:
        g.add_argument(flag, action=_Refused, nargs=1 if flag in _REFUSED_WITH_VALUE else 0, help=argparse.SUPPRESS)


def passed_flags(args: argparse.Namespace) -> tuple[str, ...]:
    """The runner flags DeepSpeed hands on to every node's launch.py, as argv words."""
    words: list[str] = []
    if getattr(args, "bind_cores_to_rank", False):
        words.append("--bind_cores_to_rank")
    if getattr(args, "bind_core_list", None) is not None:
        words.append(f"--bind_core_list={args.bind_core_list}")
    if getattr(args, "log_level", None) is not None:
        words.append(f"--log_level={args.log_level}")
    if getattr(args, "quiet", False):
        words.append("--quiet")
    return tuple(words)


def flags_from_args(args: argparse.Namespace) -> RunnerFlags:
    return RunnerFlags(master_addr=args.master_addr, master_port=args.master_port, num_nodes=args.num_nodes,
                       num_gpus=args.num_gpus, include=args.include, exclude=args.exclude,
                       launcher_args=args.launcher_args, ssh_port=args.ssh_port,
                       no_python=getattr(args, "no_python", False), no_local_rank=getattr(args, "no_local_rank", False),
                       force_multi=args.force_multi, passed=passed_flags(args),
                       refused=tuple(getattr(args, "refused_runner_flags", None) or ()))
