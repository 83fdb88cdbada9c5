"""Checks that judge one node's own facts (and compare them with the master's).

Each check: (ctx, node) -> CheckResult. They are called only for nodes whose probe ran; the
engine reports unreachable nodes once, under `ssh`, and skips the rest for them.
"""

from __future__ import annotations

import re

from dscluster.doctor.context import DoctorContext
from dscluster.doctor.model import CheckResult, failed, passed, skipped, warned
from dscluster.i18n import tr

GiB = 1024**3
SHM_MIN_GPU = 1 * GiB
# Leftover DeepSpeed CPU all-reduce buffers worth a warning (each is ~70 MB of RAM held until reboot).
SHM_LEFTOVER_WARN = 1 * GiB
SHARED_FREE_MIN = 1 * GiB
SHARED_FREE_WARN = 10 * GiB


def check_python(ctx: DoctorContext, node) -> CheckResult:
    name, facts = ctx.node_name(node), ctx.facts(node)
    py = facts.get("python") or {}
    if "error" in py:
        return failed(name, "python", tr("cannot inspect Python: {err}", err=py["error"]),
                      tr("install Python 3 on {node}", node=name))
    if not py.get("expected_exists"):
        return failed(name, "python", tr("{path} is missing or not executable by {user} on {node} (found {other})",
                                         path=ctx.expected_python, user=ctx.spec.ssh_user, node=name,
                                         other=py.get("executable")),
                      tr("DeepSpeed runs the launcher's interpreter by absolute path on every node: use the "
                         "same image on every node, or install the environment at {path} on {node}",
                         path=ctx.expected_python, node=name))
    master_py = (ctx.master_facts or {}).get("python") or {}
    if master_py and master_py.get("version") != py.get("version"):
        return failed(name, "python", tr("Python {v} but {master} has {mv}", v=py.get("version"),
                                         master=ctx.node_name(ctx.master), mv=master_py.get("version")),
                      tr("use the same image (same Python) on every node"))
    return passed(name, "python", tr("Python {v} at {path}", v=py.get("version"), path=py.get("executable")))


def _versions(facts: dict) -> dict[str, str | None]:
    pkgs = facts.get("packages") or {}
    build = facts.get("torch_build") or {}
    gpu = facts.get("gpu") or {}
    out = {"torch": pkgs.get("torch"), "deepspeed": pkgs.get("deepspeed"), "dscluster": pkgs.get("dscluster")}
    if gpu.get("count"):
        out["CUDA (torch)"] = build.get("cuda")
        out["NCCL"] = next((pkgs[k] for k in pkgs if k.startswith("nvidia-nccl") and pkgs[k]), None)
        out["driver"] = gpu.get("driver")
    return out


def check_versions(ctx: DoctorContext, node) -> CheckResult:
    name, facts = ctx.node_name(node), ctx.facts(node)
    mine = _versions(facts)
    missing = [k for k in ("torch", "deepspeed", "dscluster") if not mine.get(k)]
    if missing:
        return failed(name, "versions", tr("not installed for {py}: {what}",
                                           py=(facts.get("python") or {}).get("executable"), what=", ".join(missing)),
                      tr("use the dscluster image on every node, or pip install {what} into that Python",
                         what=" ".join(missing)))
    master = ctx.master_facts
    if master and not ctx.is_master(node):
        theirs = _versions(master)
        diff = [f"{k} {mine.get(k)} ≠ {theirs.get(k)}" for k in mine if k in theirs and mine.get(k) != theirs.get(k)]
        if diff:
            return failed(name, "versions", tr("differs from {master}: {diff}", master=ctx.node_name(ctx.master),
                                               diff="; ".join(diff)),
                          tr("use the same image on every node (mixed versions hang or crash at init)"))
    shown = ", ".join(f"{k} {v}" for k, v in mine.items() if v)
    return passed(name, "versions", shown, **mine)


def check_slots(ctx: DoctorContext, node) -> CheckResult:
    name, facts = ctx.node_name(node), ctx.facts(node)
    gpu = facts.get("gpu") or {}
    if gpu.get("error"):
        return failed(name, "slots", tr("nvidia-smi failed: {err}", err=gpu["error"]),
                      tr("check the NVIDIA driver on {node} (nvidia-smi must work)", node=name))
    count = int(gpu.get("count") or 0)
    if ctx.gpu_mode:
        if count < node.slots:
            return failed(name, "slots", tr("{n} GPU(s) visible but slots = {slots}", n=count, slots=node.slots),
                          tr("set slots = {n} for {node} in dscluster.toml (or the hostfile), or make the GPUs "
                             "visible (CUDA_VISIBLE_DEVICES, docker --gpus all)", n=count, node=name))
        return passed(name, "slots", tr("{n} GPU(s) ({gpu}), slots = {slots}", n=count,
                                        gpu=", ".join(sorted(set(gpu.get("names") or []))), slots=node.slots))
    cores = int(facts.get("cpus") or 1)
    if node.slots > cores:
        return failed(name, "slots", tr("CPU mode (no GPU): slots = {slots} but only {cores} CPU core(s)",
                                        slots=node.slots, cores=cores),
                      tr("set slots ≤ {cores} for {node} in dscluster.toml; each slot is one training process",
                         cores=cores, node=name))
    return passed(name, "slots", tr("CPU mode (gloo): {slots} slot(s) on {cores} core(s)",
                                    slots=node.slots, cores=cores))


def check_shm(ctx: DoctorContext, node) -> CheckResult:
    name, shm = ctx.node_name(node), ctx.facts(node).get("shm") or {}
    if "error" in shm:
        return failed(name, "shm", tr("/dev/shm is missing: {err}", err=shm["error"]),
                      tr("mount a tmpfs at /dev/shm (docker: --shm-size=8g or --ipc=host)"))
    total = shm.get("total", 0)
    text = tr("/dev/shm {size:.1f} GiB ({free:.1f} GiB free)", size=total / GiB, free=shm.get("free", 0) / GiB)
    leftovers = shm.get("ds_buffers", 0)
    if leftovers and shm.get("ds_buffer_bytes", 0) >= SHM_LEFTOVER_WARN:
        return warned(name, "shm", text + " — " + tr("{n} leftover DeepSpeed all-reduce buffers hold {size:.1f} GiB of RAM",
                                                    n=leftovers, size=shm["ds_buffer_bytes"] / GiB),
                      tr("DeepSpeed never removes them after CPU runs; with no run active on the node: "
                         "rm /dev/shm/deepspeed_allreduce_buffer_*"))
    if total < SHM_MIN_GPU:
        fix = tr("give the node at least 1 GiB of /dev/shm (docker: --shm-size=8g or --ipc=host)")
        if ctx.gpu_mode:
            return failed(name, "shm", text + " — " + tr("NCCL fails with 'Bus error' below 1 GiB"), fix)
        return warned(name, "shm", text, fix)
    return passed(name, "shm", text)


def check_launcher(ctx: DoctorContext, node) -> CheckResult:
    """The tools the spec's launcher backend needs on this node (launcher/backends: `check_tools`)."""
    from dscluster.launcher import backends  # noqa: PLC0415

    name, facts = ctx.node_name(node), ctx.facts(node)
    found = ctx.backend.check_tools(
        backends.NodeTools(node=name, is_master=ctx.is_master(node), tools=facts.get("tools") or {},
                           packages=facts.get("packages") or {}))
    if found.ok:
        return passed(name, "launcher", found.finding)
    return failed(name, "launcher", found.finding, found.fix)


_ARCH_OK = re.compile(r"^\d+(\.\d+)?(\+PTX)?$")


def bad_arch_entries(value: str) -> list[str]:
    """TORCH_CUDA_ARCH_LIST entries DeepSpeed's op builder cannot parse (it does int() on each part).

    e.g. "9.0a" crashes with ValueError: invalid literal for int() with base 10: '0a'.
    """
    entries = [e.strip() for e in value.replace(" ", ";").split(";") if e.strip()]
    return [e for e in entries if not _ARCH_OK.match(e)]


def fixed_arch_list(value: str) -> str:
    entries = [e.strip() for e in value.replace(" ", ";").split(";") if e.strip()]
    fixed = []
    for e in entries:
        m = re.match(r"^(\d+)(?:\.(\d+))?", e)
        if m:
            cc = m.group(1) + "." + (m.group(2) or "0") + ("+PTX" if e.endswith("+PTX") else "")
            if cc not in fixed:
                fixed.append(cc)
    return ";".join(fixed)


def check_cuda_arch(ctx: DoctorContext, node) -> CheckResult:
    name, facts = ctx.node_name(node), ctx.facts(node)
    sources = [(tr("the login environment"), (facts.get("env") or {}).get("TORCH_CUDA_ARCH_LIST"))]
    ds_env = facts.get("deepspeed_env") or {}
    sources.append((ds_env.get("path", "~/.deepspeed_env"), (ds_env.get("vars") or {}).get("TORCH_CUDA_ARCH_LIST")))
    if ctx.is_master(node):
        sources.append((tr("doctor's environment"), ctx.local_env.get("TORCH_CUDA_ARCH_LIST")))
    for where, value in sources:
        if value and bad_arch_entries(value):
            good = fixed_arch_list(value) or "9.0"
            return failed(name, "cuda-arch",
                          tr("TORCH_CUDA_ARCH_LIST={value!r} in {where}: DeepSpeed's op builder cannot parse {bad} "
                             "(crashes with int('0a'))", value=value, where=where,
                             bad=", ".join(bad_arch_entries(value))),
                          tr("export TORCH_CUDA_ARCH_LIST={good} (numbers only, optional +PTX)", good=good))
    values = [v for _, v in sources if v]
    return passed(name, "cuda-arch", tr("TORCH_CUDA_ARCH_LIST={v}", v=values[0]) if values else tr("not set (fine)"))


def skip_unreachable(ctx: DoctorContext, node, check: str) -> CheckResult:
    return skipped(ctx.node_name(node), check, tr("not checked: the node did not answer"))
