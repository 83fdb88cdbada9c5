"""Doctor's checks before a launch: a sick node refuses the launch before anything starts anywhere.

`before_launch` is the one pre-flight of every start (`launch`, `demo`, `restart`, a batch job's submission,
the panel's form and its check button, the Python API, a dry run): `runs.preparing.prepare.prepare` calls it, and
every start goes through `prepare`. Cluster runs get doctor's fast checks over SSH (the torch JIT-lock
check on every node among them). Everything else gets doctor's JIT-lock check on this machine: a `lock`
left in the torch extensions cache by a process killed while compiling makes every later DeepSpeed job
wait on it forever, silently, until the stall timeout (900 s by default). That covers local runs (the
ranks run here), runs a scheduler allocates (the ranks are reached through it, not ssh, and a cluster's home, where
the cache lives, is shared with the login node as a rule) and `--skip-doctor` (the nodes' checks are
skipped, and that is said; this machine's lock costs one directory scan and always means a hang).
Same probe, same verdict as `dscluster doctor`: nothing duplicated here. A dry run reaches the nodes only when that writes nothing
on this machine (the cluster's ssh files are current); otherwise it says the nodes' checks wait for the launch.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import SimpleNamespace

from dscluster.console import WARN
from dscluster.errors import ClusterError
from dscluster.i18n import tr

THIS_MACHINE = "localhost"


def run_fast_checks(spec, *, dry_run: bool = False) -> None:
    from dscluster.doctor import run_doctor

    runners = None
    if dry_run:
        from dscluster.cluster.ssh import SSHRunner, ssh_files_current

        if not ssh_files_current(spec):
            # Reaching the nodes would write this machine's ssh files (ssh_config, pinned host keys) first.
            print(f"{WARN} " + tr("a dry run writes nothing, and reaching {nodes} needs the cluster's ssh files "
                                  "written first: doctor's checks on the nodes run at the launch (or now: dscluster "
                                  "doctor)", nodes=", ".join(n.name for n in spec.nodes)), file=sys.stderr)
            return
        runners = [SSHRunner(spec, n) for n in spec.nodes]
    report = run_doctor(spec, fast=True, runners=runners)
    if report.ok:
        return
    lines = [f"{r.node}: {r.check}: {r.finding}" + (f" ({tr('fix')}: {r.fix})" if r.fix else "")
             for r in report.failures]
    first = report.failures[0]
    raise ClusterError(tr("the cluster is not ready to launch:\n  {lines}", lines="\n  ".join(lines)),
                       first.fix or tr("run: dscluster doctor"), node=first.node)


@contextmanager
def _extensions_dir(env: Mapping[str, str]) -> Iterator[None]:
    """The ranks' TORCH_EXTENSIONS_DIR (a --env K=V wins over this shell's) while the probe scans."""
    if "TORCH_EXTENSIONS_DIR" not in env:
        yield
        return
    old = os.environ.get("TORCH_EXTENSIONS_DIR")
    os.environ["TORCH_EXTENSIONS_DIR"] = env["TORCH_EXTENSIONS_DIR"]
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR", None)
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = old


def local_jit_lock_result(env: Mapping[str, str] | None = None):
    """Doctor's `jit-lock` check result for this machine (the ranks' env: TORCH_EXTENSIONS_DIR)."""
    from dscluster.cluster.runner import CommandResult
    from dscluster.doctor.checks_cluster import check_jit_lock
    from dscluster.doctor.context import DoctorContext
    from dscluster.doctor.probe import ProbeOutcome
    from dscluster.doctor.probe_facts import extension_locks

    with _extensions_dir(env or {}):
        jit = extension_locks()
    node = SimpleNamespace(name=THIS_MACHINE, address=THIS_MACHINE)
    now = time.time()
    outcome = ProbeOutcome(THIS_MACHINE, {"jit": jit}, CommandResult(THIS_MACHINE, ("probe",), 0), now, now)
    ctx = DoctorContext(spec=SimpleNamespace(nodes=(node,)), outcomes={THIS_MACHINE: outcome},
                        master_port=0, expected_python=sys.executable)
    return check_jit_lock(ctx, node)


def check_local_cuda_arch(env: Mapping[str, str] | None = None) -> None:
    """Doctor's `cuda-arch` rule for the ranks' environment here (--env wins over this shell's):
    TORCH_CUDA_ARCH_LIST=9.0a (NVIDIA's containers set it) crashes DeepSpeed's op builder on every rank."""
    from dscluster.doctor.checks_node import bad_arch_entries, fixed_arch_list

    value = (env or {}).get("TORCH_CUDA_ARCH_LIST", os.environ.get("TORCH_CUDA_ARCH_LIST"))
    if value and bad_arch_entries(value):
        good = fixed_arch_list(value) or "9.0"
        raise ClusterError(tr("this machine is not ready to launch: TORCH_CUDA_ARCH_LIST={value!r}: DeepSpeed's op "
                              "builder cannot parse {bad} (crashes with int('0a'))", value=value,
                              bad=", ".join(bad_arch_entries(value))),
                           tr("export TORCH_CUDA_ARCH_LIST={good} (numbers only, optional +PTX)", good=good))


def check_local_jit_lock(env: Mapping[str, str] | None = None) -> None:
    """Refuse a launch that would hang on a stale JIT lock in this machine's torch extensions cache (the
    ranks' TORCH_EXTENSIONS_DIR); warn about a recent lock, which may be a build still running."""
    result = local_jit_lock_result(env)
    if not result.ok:
        raise ClusterError(tr("this machine is not ready to launch: {finding}", finding=result.finding), result.fix)
    if result.severity == "warning":
        print(f"{WARN} {result.finding}" + (f" ({tr('fix')}: {result.fix})" if result.fix else ""), file=sys.stderr)


def run_local_checks(env: Mapping[str, str] | None = None) -> None:
    """Refuse a local launch that would hang on a stale JIT lock or crash on TORCH_CUDA_ARCH_LIST; warn
    about a recent lock."""
    check_local_cuda_arch(env)
    check_local_jit_lock(env)


def before_launch(spec, backend, hosts, env: Mapping[str, str] | None = None, *,
                  skip_doctor: bool = False, checked: bool = False, dry_run: bool = False) -> None:
    """The pre-flight of one start (see the module's docstring): `spec` is the cluster (None: this machine
    alone), `hosts` the (host, slots) the run uses, `env` the ranks' --env. Raises ClusterError to refuse.
    `checked`: doctor's fast checks already passed on exactly these hosts (--exclude-unhealthy ran them)."""
    over_ssh = backend.over_ssh  # else the scheduler (Slurm) or this machine alone
    if checked and spec is not None and over_ssh:
        return
    if skip_doctor:
        if spec is not None and over_ssh:
            print(f"{WARN} " + tr("doctor's checks on the nodes are skipped (--skip-doctor): only this machine's "
                                  "torch JIT cache is checked"), file=sys.stderr)
        check_local_jit_lock(env)
    elif backend.allocates:
        check_local_jit_lock(env)  # `dscluster doctor` checks Slurm itself; the nodes are not reached by ssh
    elif spec is not None:  # the nodes this run uses: a node left out (lost for good) is not asked
        from dataclasses import replace

        used = {h for h, _ in hosts}
        nodes = tuple(n for n in spec.nodes if n.name in used or n.address in used)
        # ...and the tools of the launcher this run uses (--launcher may differ from the spec's own).
        run_fast_checks(replace(spec, nodes=nodes or spec.nodes, launcher=backend.name),
                        dry_run=dry_run)
    else:  # a stale JIT lock here would hang the ranks silently
        run_local_checks(env)
