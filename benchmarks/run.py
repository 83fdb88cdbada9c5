"""The benchmarks behind one entry point: named suites, each a list of the scripts beside this file with
the arguments RESULTS.md's figures were taken with. Every script prints its own figures (JSON lines or a
table, with a peer's figure from the same run as a ratio where one exists); this runs them in order.

    python3 benchmarks/run.py --list                    # the suites, what each needs, its scripts
    python3 benchmarks/run.py launch                    # one suite (sim suites need root)
    python3 benchmarks/run.py throughput --dry-run      # the commands, not run

A script's own options (`python3 benchmarks/SCRIPT.py --help`) change what one of them measures.

Needs: `cpu` suites run here (the simulated cluster: root, scripts/setup.sh test), `gpu` suites on an
NVIDIA GPU (benchmarks/h200_session.sh prepares a bare H200 machine the same way and runs them).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Suite:
    name: str
    needs: str  # "cpu" (this machine; root for the simulated cluster) or "gpu"
    what: str
    commands: tuple[tuple[str, ...], ...]  # script, then its arguments


SUITES = {s.name: s for s in (
    Suite("throughput", "gpu", "the reference trainer's tokens/s and MFU against the chip's matmul ceiling and "
          "against Hugging Face GPT-2 under DeepSpeed (the same run)",
          (("gpu_throughput.py", "run", "--suite", "full"), ("hf_baseline.py",))),
    Suite("checkpoint", "cpu", "the training pause of a sync and an async checkpoint next to the disk's own speed "
          "(dd), and the universal-format conversion (GPU: the same script, NCCL)",
          (("checkpoint_pause.py",),)),
    Suite("kernels", "gpu", "attention (FlashAttention-2 vs -4), the block's non-GEMM time, the SwiGLU MLP kernels "
          "and the GEMM shapes, each checked against a float32 reference",
          (("attention_kernels.py",), ("block_kernels.py", "--preset", "1.3b", "--mb", "16"),
           ("mlp_kernels.py",), ("gemm_shapes.py",))),
    Suite("launch", "cpu", "a newcomer's demo by phase, a launch's overhead on a simulated 3-node cluster "
          "(dscluster against plain deepspeed, the same run; the Hugging Face Trainer's whole command, by phase), "
          "and the node image's launch (podman)",
          (("demo_phases.py",), ("launch_overhead.py", "--nodes", "3"), ("hf_launch_overhead.py", "--nodes", "3"),
           ("node_image.py", "--launch", "3"))),
    Suite("scale", "cpu", "sim up/down, doctor, launch and teardown, stack dumps at a hang, and each fault found, "
          "torn down and restarted, by node count (4 to 32 simulated nodes); explain's time by log size (1 KB to "
          "8 MB, worst-case lines included)",
          (("sim_lifecycle.py", "3", "8", "16", "32"), ("doctor_scale.py",), ("cluster_scale.py", "4", "8", "16", "32"),
           ("hang_stacks.py", "--nodes", "3"), ("explain_scale.py",), ("fault_detect.py", "4", "8", "16", "32"))),
)}


# The scripts the suites run through others, or that read what a suite wrote.
HELPERS = ("gpu_metrics.py", "gpu_summary.py", "tiny_rank.py", "run.py")


def argv_of(command: tuple[str, ...]) -> list[str]:
    return [sys.executable, str(HERE / command[0]), *command[1:]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suite", nargs="?", choices=sorted(SUITES), help="the suite to run")
    p.add_argument("--list", action="store_true", help="list the suites")
    p.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    args = p.parse_args(argv)
    if args.list or not args.suite:
        for s in SUITES.values():
            print(f"{s.name:<11} [{s.needs}] {s.what}")
            for c in s.commands:
                print(f"{'':<17}benchmarks/{shlex.join(c)}")
        return 0
    suite = SUITES[args.suite]
    failed = []
    for command in suite.commands:
        argv_ = argv_of(command)
        print(f"== {shlex.join(argv_[1:])}", flush=True)
        if args.dry_run:
            continue
        t0 = time.monotonic()
        rc = subprocess.call(argv_, cwd=ROOT)
        print(f"== exit {rc} after {time.monotonic() - t0:.1f} s", flush=True)
        if rc != 0:
            failed.append(command[0])
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
