"""DeepSpeed's C++ ops that a ds_config makes every rank build on first use, seen before the launch,
and built ahead of time once per node.

DeepSpeed (0.19.8) compiles an op the first time a rank needs it unless the wheel was built with it
(`DS_BUILD_OPS=1`, as the node image does): `OpBuilder.load()` -> `jit_load()` -> torch's
`cpp_extension.load(verbose=False)`, so the rank prints nothing while g++ runs. The result is cached
under `$TORCH_EXTENSIONS_DIR` (default `~/.cache/torch_extensions/py<XY>_<cpu|cuXYZ>/<op>/<op>.so`),
guarded by a `lock` file in the op's directory. Measured with DeepSpeed 0.19.8 on a 2-core CPU host:
`fused_adam` 41 s and `deepspeed_shm_comm` 36 s (`dscluster node build-ops`), 86-97 s for both inside
a run, and about 170 s for a user's script while other jobs shared the cores; FusedAdam on an H200
host about 35 s. A cached op loads in about 2 s. Until then a first run looks hung.

Which op a config implies (runtime/engine.py `_configure_basic_optimizer`): Adam/AdamW ->
FusedAdam, or DeepSpeedCPUAdam when the optimizer is offloaded (`zero_optimization.offload_optimizer`
on cpu/nvme), nothing with `"torch_adam": true`; Lamb -> FusedLamb; Lion -> FusedLion / CPULion
offloaded; Adagrad offloaded -> CPUAdagrad. On the CPU accelerator every rank also builds the
shared-memory collective op (comm/torch.py `build_shm_op`).

Building once per node: `dscluster node build-ops` runs `python -m dscluster.launcher.ops CONFIG`
on the master first, then on the other nodes in parallel: where the cache is shared (an NFS home),
the others find it built; where it is not, each builds its own, and no two processes ever compile
into one shared directory at once (whose `lock`, left by a killed compile, would hang every later job).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Typical first-build seconds of one op by DeepSpeed accelerator name, measured as above (an order of
# magnitude for the user, not a deadline: a busy host takes twice as long).
TYPICAL_BUILD_S = {"cpu": 45, "cuda": 35}
_OFFLOAD_DEVICES = ("cpu", "nvme")


@dataclass(frozen=True)
class OpNeed:
    builder: str  # DeepSpeed's builder class, e.g. "FusedAdamBuilder"
    why: str  # what in the config needs it, e.g. 'optimizer "Adam"'


@dataclass(frozen=True)
class OpStatus:
    need: OpNeed
    name: str  # the op's own name, e.g. "fused_adam"
    state: str  # "prebuilt" (in the wheel), "cached" (JIT result present), "missing", "unavailable"
    cache_dir: str


def ops_needed(config: dict | None, accelerator: str) -> tuple[OpNeed, ...]:
    """The ops a (validated) ds_config makes DeepSpeed build on `accelerator` ("cpu", "cuda", ...). Pure."""
    config = config or {}
    opt = config.get("optimizer") if isinstance(config.get("optimizer"), dict) else {}
    otype = str(opt.get("type") or "").lower()
    params = opt.get("params") if isinstance(opt.get("params"), dict) else {}
    zero = config.get("zero_optimization") if isinstance(config.get("zero_optimization"), dict) else {}
    offload = zero.get("offload_optimizer") if isinstance(zero.get("offload_optimizer"), dict) else {}
    offloaded = str(offload.get("device") or "none").lower() in _OFFLOAD_DEVICES
    why = f'optimizer "{opt.get("type")}"' + (" (offloaded)" if offloaded else "")
    needs: list[OpNeed] = []
    if otype in ("adam", "adamw") and params.get("torch_adam") is not True:
        needs.append(OpNeed("CPUAdamBuilder" if offloaded else "FusedAdamBuilder", why))
    elif otype == "lamb":
        needs.append(OpNeed("FusedLambBuilder", why))
    elif otype == "lion":
        needs.append(OpNeed("CPULionBuilder" if offloaded else "FusedLionBuilder", why))
    elif otype == "adagrad" and offloaded:
        needs.append(OpNeed("CPUAdagradBuilder", why))
    if needs and accelerator == "cpu":
        needs.append(OpNeed("ShareMemCommBuilder", "the CPU accelerator's collectives"))
    return tuple(needs)


def extensions_root(env: dict[str, str] | None = None) -> Path:
    """torch's JIT cache root for this interpreter (cpp_extension._get_build_directory, without its mkdir)."""
    import torch  # noqa: PLC0415
    from torch.utils.cpp_extension import get_default_build_root  # noqa: PLC0415

    explicit = (env or {}).get("TORCH_EXTENSIONS_DIR") or os.environ.get("TORCH_EXTENSIONS_DIR")
    if explicit:
        return Path(explicit)
    if torch.version.hip is not None:
        accel = f"rocm{torch.version.hip.replace('.', '')}"
    elif torch.version.cuda is not None:
        accel = f"cu{torch.version.cuda.replace('.', '')}"
    else:
        accel = "cpu"
    py = f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"
    return Path(get_default_build_root()) / f"{py}_{accel}"


def _quiet_accelerator_detection(record) -> bool:
    """Drops DeepSpeed's "Setting accelerator to CPU" warning: the controller's own accelerator only
    sizes a notice, and each rank reports its own in its log."""
    return not (record.levelno < 40 and record.pathname.endswith("real_accelerator.py"))


def accelerator():
    """DeepSpeed's accelerator object, imported as the controller must: with nothing on stdout.

    DeepSpeed's logger writes to stdout (utils/logging.py: `StreamHandler(stream=sys.stdout)`, taken
    when `import deepspeed` runs, which already detects the accelerator and warns about it). In the
    controller stdout is a command's result (`run=$(dscluster launch --detach ...)`), so DeepSpeed is
    imported with stdout pointing at stderr, where its handler then keeps writing; a handler created
    before (DeepSpeed imported by someone else first) is pointed at stderr too."""
    import contextlib  # noqa: PLC0415
    import logging  # noqa: PLC0415

    ds_logger = logging.getLogger("DeepSpeed")
    ds_logger.addFilter(_quiet_accelerator_detection)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            from deepspeed.accelerator import get_accelerator  # noqa: PLC0415

            accel = get_accelerator()
    finally:
        ds_logger.removeFilter(_quiet_accelerator_detection)
    for handler in ds_logger.handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (sys.stdout, sys.__stdout__):
            handler.setStream(sys.stderr)
    return accel


def accelerator_name() -> str:
    """DeepSpeed's accelerator here ("cpu", "cuda", ...)."""
    return accelerator()._name


def op_status(need: OpNeed, env: dict[str, str] | None = None) -> OpStatus:
    """Whether `need`'s op is in the wheel, in the JIT cache, or will be compiled by the first rank."""
    from deepspeed.git_version_info import installed_ops  # noqa: PLC0415

    builder = accelerator().create_op_builder(need.builder)
    name = getattr(builder, "name", None) if builder is not None else None
    if not name or type(builder).__name__ == "NotImplementedBuilder":
        return OpStatus(need, need.builder, "unavailable", "")
    folder = extensions_root(env) / name
    if installed_ops.get(name, False):
        return OpStatus(need, name, "prebuilt", str(folder))
    built = (folder / f"{name}.so").is_file() and not (folder / "lock").exists()
    return OpStatus(need, name, "cached" if built else "missing", str(folder))


def first_run_builds(config: dict | None, env: dict[str, str] | None = None) -> list[OpStatus]:
    """The ops this machine's ranks would compile before their first step (empty: nothing to wait for)."""
    if not ops_needed(config, "cuda") and not ops_needed(config, "cpu"):
        return []  # no optimizer op: skip importing DeepSpeed (seconds) for nothing
    accel = accelerator_name()
    return [s for s in (op_status(n, env) for n in ops_needed(config, accel)) if s.state == "missing"]


def typical_build_s(accelerator: str) -> int:
    return TYPICAL_BUILD_S.get(accelerator, TYPICAL_BUILD_S["cuda"])


def first_run_notice(ops: list[str], accelerator: str, cluster_arg: str | None = None) -> str:
    """What a user reads before a first run that will compile `ops`: what, how long, how to avoid it."""
    from dscluster.i18n import tr  # noqa: PLC0415

    where = f" --cluster {cluster_arg}" if cluster_arg else ""
    return tr("the first steps wait while DeepSpeed compiles its {ops} op(s) on every node, silently (typically "
              "{s} s on {accel}; later runs load them from the cache in seconds). To build them ahead of time, "
              "once per node: dscluster node build-ops{where} --deepspeed_config FILE",
              ops=", ".join(ops), s=typical_build_s(accelerator) * len(ops), accel=accelerator, where=where)


def op_request(config: dict | None) -> dict:
    """The part of a ds_config that decides its ops (what `build_argv` sends to a node). Pure."""
    config = config or {}
    zero = config.get("zero_optimization") if isinstance(config.get("zero_optimization"), dict) else {}
    out: dict = {"optimizer": config.get("optimizer") or {"type": "Adam"}}
    if isinstance(zero.get("offload_optimizer"), dict):
        out["zero_optimization"] = {"offload_optimizer": zero["offload_optimizer"]}
    return out


def build_argv(python: str, config: dict | None) -> list[str]:
    """What `dscluster node build-ops` runs on a node: the node decides the ops for its own accelerator
    (a CPU master and GPU workers need different ones). Pure."""
    import json  # noqa: PLC0415

    return [python, "-m", "dscluster.launcher.ops", json.dumps(op_request(config), separators=(",", ":"))]


def build(config: dict | None) -> int:
    """Compile (or load from the cache) each op `config` needs here, saying which and how long."""
    from dscluster.i18n import tr  # noqa: PLC0415

    accel = accelerator_name()
    needs = ops_needed(op_request(config), accel)
    failed = 0
    for need in needs:
        status = op_status(need)
        if status.state == "unavailable":
            print("- " + tr("{op}: not available on the {accel} accelerator", op=need.builder, accel=accel), flush=True)
            continue
        if status.state == "prebuilt":
            print("- " + tr("{op}: prebuilt in the installed DeepSpeed", op=status.name), flush=True)
            continue
        print("- " + tr("{op} ({why}): building in {dir} (a first build takes about {s} s here)...", op=status.name,
                        why=need.why, dir=status.cache_dir, s=typical_build_s(accel)), flush=True)
        started = time.monotonic()
        try:
            accelerator().create_op_builder(need.builder).load(verbose=False)
        except Exception as exc:  # noqa: BLE001 - one op's compiler error must not hide the others'
            failed += 1
            print("- " + tr("{op}: FAILED after {s:.0f} s: {err}", op=status.name, s=time.monotonic() - started,
                            err=exc), flush=True)
            continue
        print("- " + tr("{op}: ready in {s:.1f} s", op=status.name, s=time.monotonic() - started), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    import json

    sys.exit(build(json.loads(sys.argv[1]) if len(sys.argv) > 1 else None))
