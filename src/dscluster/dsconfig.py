"""Load and validate a DeepSpeed config (ds_config.json) before anything starts.

DeepSpeed 0.19.8 silently ignores typo'd top-level keys, drops "auto" values, derives batch sizes
with floor division and only checks the result after the processes have started. This module catches all of that up front, for the
world size the job will really have, and every error names the key and the fix.

Light on purpose: no torch or deepspeed import, so `dscluster launch` can call it instantly.
"""

from __future__ import annotations

import copy
import difflib
import math
from pathlib import Path
from typing import Any

from dscluster.dsconfig_keys import (
    _PARAM_ALIASES,
    ADAM_PARAMS,
    BATCH_KEYS,
    DS_OPTIMIZERS,
    KNOWN_TOP_LEVEL,
    KNOWN_ZERO,
    REMOVED_TOP_LEVEL,
    REMOVED_ZERO,
    SCHEDULERS,
    scheduler_params,
)
from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.usertext import read_user_text


def _did_you_mean(key: str, choices) -> str:
    close = difflib.get_close_matches(key, sorted(choices), n=1, cutoff=0.6)
    return tr("did you mean {m!r}? ", m=close[0]) if close else ""


def load(path: str | Path) -> dict:
    """Read a ds_config file as DeepSpeed does (`parse`), under the user-text policy (fsutil)."""
    path = Path(path)
    try:
        text = read_user_text(path, "deepspeed_config")
    except FileNotFoundError as exc:
        raise ConfigError(tr("DeepSpeed config {path} does not exist", path=path),
                          tr("pass the path of a ds_config.json with --deepspeed_config"), setting="deepspeed_config") from exc
    except OSError as exc:
        raise ConfigError(tr("cannot read DeepSpeed config {path}: {err}", path=path, err=exc.strerror),
                          tr("make the file readable"), setting="deepspeed_config") from exc
    return parse(text, str(path))


def _plain(value: Any) -> Any:
    """hjson's OrderedDicts as plain dicts: what is recorded in run.json and ds_config.resolved.json is JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse(text: str, where: str) -> dict:
    """A ds_config's text -> dict, accepting exactly what DeepSpeed 0.19.8 accepts: it reads the file with
    hjson (runtime/config.py), so `//` and `#` comments, trailing commas, unquoted keys and an object
    without braces are valid DeepSpeed configs (published configs use them); a duplicate key is an
    error there as here. `where` names the source (a path, or "config" for inline text)."""
    import hjson  # noqa: PLC0415 - DeepSpeed's own dependency; only needed when a file is read

    def no_duplicates(pairs):
        seen = {}
        for k, v in pairs:
            if k in seen:
                raise ConfigError(tr("{path}: key {key!r} appears twice", path=where, key=k),
                                  tr("keep one {key!r} entry", key=k), setting=k)
            seen[k] = v
        return seen

    if text.startswith("\ufeff"):  # a second mark: hjson would drop it, DeepSpeed's hjson keeps it as text
        raise ConfigError(tr("{path}: starts with two byte-order marks", path=where),
                          tr("re-save the file as UTF-8 (without BOM)"), setting="deepspeed_config")
    try:
        config = hjson.loads(text, object_pairs_hook=no_duplicates)
    except hjson.HjsonDecodeError as exc:
        raise ConfigError(tr("{path}:{line}:{col}: not a valid DeepSpeed config (JSON or hjson): {msg}", path=where,
                             line=exc.lineno, col=exc.colno, msg=exc.msg),
                          tr("fix the syntax there; DeepSpeed reads JSON, and also allows comments and trailing "
                             "commas"), setting="deepspeed_config") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # 1e999 (OverflowError), nesting too deep
        raise ConfigError(tr("{path}: not a valid DeepSpeed config: {err}", path=where, err=exc),
                          tr("write plain numbers and at most a few levels of nesting, as in DeepSpeed's examples"),
                          setting="deepspeed_config") from None
    if not isinstance(config, dict):
        raise ConfigError(tr("{path}: a DeepSpeed config must be a JSON object", path=where),
                          tr('start the file with {{ and put settings like "train_micro_batch_size_per_gpu" inside'),
                          setting="deepspeed_config")
    return _plain(config)


def _find_auto(value: Any, where: str) -> str | None:
    if isinstance(value, str) and value.strip().lower() == "auto":
        return where
    if isinstance(value, dict):
        for k, v in value.items():
            found = _find_auto(v, f"{where}.{k}" if where else k)
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _find_auto(v, f"{where}[{i}]")
            if found:
                return found
    return None


def auto_keys(value: Any, where: str = "") -> list[str]:
    """Every key whose value is "auto" (dotted paths), in order."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return [where]
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            found += auto_keys(v, f"{where}.{k}" if where else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += auto_keys(v, f"{where}[{i}]")
    return found


def _without_autos(value: Any, keep_as: Any = None) -> Any:
    """A copy with every "auto" value dropped (the checks then see what the user wrote), or replaced by
    `keep_as` where a check needs the key to be there (a scheduler's total_num_steps)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(v, str) and v.strip().lower() == "auto":
                if keep_as is not None:
                    out[k] = keep_as
                continue
            out[k] = _without_autos(v, keep_as)
        return out
    if isinstance(value, list):
        return [_without_autos(v, keep_as) for v in value]
    return value


def _positive_int(config: dict, key: str) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(tr("{key} must be a positive integer, got {v!r}", key=key, v=value),
                          tr('set "{key}" to a whole number >= 1', key=key), setting=key)
    return value


def _resolve_batch(config: dict, world_size: int) -> None:
    """DeepSpeed's rules (runtime/config.py _set_batch_related_parameters), checked exactly. DeepSpeed counts the
    data-parallel ranks, which are fewer than the world with pipeline stages (PipelineModule's num_stages) or tensor
    parallelism (an mpu): neither is in the config, so three keys that agree with a data-parallel size dividing the
    world are taken as written (a script with neither meets DeepSpeed's own batch assertion at start)."""
    tb, micro, gas = (_positive_int(config, k) for k in BATCH_KEYS)
    W = world_size
    if tb is None and micro is None:
        raise ConfigError(tr("neither train_batch_size nor train_micro_batch_size_per_gpu is set"),
                          tr('add "train_micro_batch_size_per_gpu" (and optionally "gradient_accumulation_steps")'),
                          setting="train_micro_batch_size_per_gpu")
    if tb is not None and micro is not None and gas is not None:
        if tb != micro * gas * W:
            dp, rest = divmod(tb, micro * gas)
            if not rest and 0 < dp < W and W % dp == 0:
                return  # data parallel over dp of the W ranks: pipeline stages or tensor parallelism (DeepSpeed's mpu)
            fix = tr("set train_batch_size to {want}, or drop it and let it be derived", want=micro * gas * W) + \
                tr("; with pipeline or tensor parallelism, write all three batch keys for the data-parallel size "
                   "(the world size / (pipeline stages x tensor-parallel degree))")
            raise ConfigError(tr("train_batch_size {tb} != train_micro_batch_size_per_gpu {m} x gradient_accumulation_steps {g} x world size {w}",
                                 tb=tb, m=micro, g=gas, w=W), fix, setting="train_batch_size")
    elif tb is not None and micro is not None:
        if tb % (micro * W):
            raise ConfigError(
                tr("train_batch_size {tb} is not divisible by train_micro_batch_size_per_gpu {m} x world size {w}",
                   tb=tb, m=micro, w=W),
                tr("use a train_batch_size that is a multiple of {mw} (e.g. {ex}), or give gradient_accumulation_steps instead",
                   mw=micro * W, ex=max(1, round(tb / (micro * W))) * micro * W), setting="train_batch_size")
        gas = tb // (micro * W)
    elif tb is not None and gas is not None:
        if tb % (gas * W):
            raise ConfigError(
                tr("train_batch_size {tb} is not divisible by gradient_accumulation_steps {g} x world size {w}",
                   tb=tb, g=gas, w=W),
                tr("use a train_batch_size that is a multiple of {gw}, or give train_micro_batch_size_per_gpu instead",
                   gw=gas * W), setting="train_batch_size")
        micro = tb // (gas * W)
    elif tb is not None:
        if tb % W:
            raise ConfigError(tr("train_batch_size {tb} is not divisible by the world size {w}", tb=tb, w=W),
                              tr("use a multiple of {w}, or give train_micro_batch_size_per_gpu instead", w=W),
                              setting="train_batch_size")
        gas, micro = 1, tb // W
    else:
        gas = gas or 1
        tb = micro * gas * W
    config["train_batch_size"], config["train_micro_batch_size_per_gpu"], config["gradient_accumulation_steps"] = (
        micro * gas * W, micro, gas)


def _check_section_keys(section: dict, name: str, known, removed=()) -> None:
    for key in section:
        if key in removed:
            raise ConfigError(tr("{name}.{key} was removed in DeepSpeed 0.19.8", name=name, key=key),
                              tr("delete {name}.{key} from the config", name=name, key=key), setting=f"{name}.{key}")
        if key not in known:
            raise ConfigError(tr("unknown key {name}.{key}", name=name, key=key),
                              _did_you_mean(key, known) + tr("DeepSpeed would reject it; fix or delete it"),
                              setting=f"{name}.{key}")


def _check_optimizer(otype: str, params: dict) -> None:
    """DeepSpeed takes its own optimizers by name in any case, anything else from torch.optim exactly."""
    import torch.optim

    own = {name.lower(): name for name in DS_OPTIMIZERS}
    if otype.lower() not in own and not isinstance(getattr(torch.optim, otype, None), type):
        choices = list(DS_OPTIMIZERS) + sorted(n for n in dir(torch.optim) if n[:1].isupper() and n != "Optimizer")
        same_letters = {c.lower(): c for c in choices}.get(otype.lower())  # "sgd": torch.optim names are exact
        raise ConfigError(tr("optimizer.type {t!r} is neither a DeepSpeed optimizer nor a torch.optim class", t=otype),
                          (tr("did you mean {m!r}? ", m=same_letters) if same_letters
                           else _did_you_mean(otype, choices)) + tr("DeepSpeed's own: {c}", c=", ".join(DS_OPTIMIZERS)),
                          setting="optimizer.type")
    if own.get(otype.lower()) in ("Adam", "AdamW"):
        for key in params:
            if key not in ADAM_PARAMS:
                alias = _PARAM_ALIASES.get(key.lower())
                raise ConfigError(tr("optimizer {t} has no parameter {key!r}", t=otype, key=key),
                                  (tr("did you mean {m!r}? ", m=alias) if alias else _did_you_mean(key, ADAM_PARAMS))
                                  + tr("its parameters are: {p}", p=", ".join(ADAM_PARAMS[:5])),
                                  setting=f"optimizer.params.{key}")
    # The values every optimizer shares, checked here instead of by torch's ValueError on every rank.
    for key, lowest, example in (("lr", 0.0, "3e-4"), ("weight_decay", None, "0.1"), ("eps", 0.0, "1e-8")):
        if key not in params:
            continue
        v = params[key]
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
            (v > lowest if lowest is not None else v >= 0)
        if not ok:
            raise ConfigError(tr("optimizer.params.{key} must be a finite number {bound}, got {v!r}", key=key, v=v,
                                 bound="> 0" if lowest is not None else ">= 0"),
                              tr('e.g. "{key}": {example}', key=key, example=example), setting=f"optimizer.params.{key}")
    betas = params.get("betas")
    if betas is not None and not (isinstance(betas, list) and len(betas) == 2 and
                                  all(isinstance(b, (int, float)) and not isinstance(b, bool) and 0 <= b < 1
                                      for b in betas)):
        raise ConfigError(tr("optimizer.params.betas must be two numbers in [0, 1), got {v!r}", v=betas),
                          tr('e.g. "betas": [0.9, 0.95]'), setting="optimizer.params.betas")


def validate(config: dict, world_size: int, *, auto_ok: bool = False) -> dict:
    """Check `config` for a job of `world_size` data-parallel ranks; returns a resolved copy.

    The copy has all three batch keys filled in (as DeepSpeed derives them). Raises ConfigError
    naming the key and the fix for: unknown/removed top-level keys, "auto" values, inconsistent or
    non-integer batch sizes, an unknown ZeRO stage or ZeRO key, fp16+bf16 together, an unknown
    scheduler or scheduler parameter, a missing total_num_steps, a negative gradient_clipping.

    `auto_ok`: the config is the Hugging Face Trainer's (or Accelerate's), which fills "auto" values from
    its own arguments before DeepSpeed reads them. The checks then apply to what the user wrote; one that
    needs an "auto" value (the batch arithmetic when a batch key is "auto", the range of an "auto"
    optimizer value...) is skipped, and `auto_keys` of the config names them. The copy keeps "auto".
    """
    if auto_ok and isinstance(config, dict) and auto_keys(config):
        return _validate_with_autos(config, world_size)
    if not isinstance(config, dict):
        raise ConfigError(tr("a DeepSpeed config must be a JSON object"), tr("pass a dict / JSON object"),
                          setting="deepspeed_config")
    if not isinstance(world_size, int) or world_size <= 0:
        raise ConfigError(tr("world size must be a positive integer, got {w!r}", w=world_size),
                          tr("check the hostfile slots / --num_gpus"), setting="world_size")
    config = copy.deepcopy(config)
    _check_top_level(config)
    auto = _find_auto(config, "")
    if auto:
        raise ConfigError(tr('{key} is "auto": only the Hugging Face Trainer integration resolves "auto"', key=auto),
                          tr("set {key} to a concrete value", key=auto), setting=auto)
    _resolve_batch(config, world_size)
    _check_zero(config)
    _check_precision(config)
    clip = config.get("gradient_clipping")
    if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float)) or clip < 0):
        raise ConfigError(tr("gradient_clipping must be a number >= 0, got {v!r}", v=clip),
                          tr("e.g. \"gradient_clipping\": 1.0 (0 disables clipping)"), setting="gradient_clipping")
    _check_optimizer_section(config.get("optimizer"))
    _check_scheduler(config.get("scheduler"))
    return config


def _check_top_level(config: dict) -> None:
    for key in config:
        if key in REMOVED_TOP_LEVEL:
            raise ConfigError(tr("{key!r} ({what}) was removed in DeepSpeed 0.19.8; DeepSpeed now refuses the config",
                                 key=key, what=REMOVED_TOP_LEVEL[key]),
                              tr("delete the {key!r} block", key=key), setting=key)
        if key not in KNOWN_TOP_LEVEL:
            raise ConfigError(tr("unknown top-level key {key!r}: DeepSpeed would silently ignore it", key=key),
                              _did_you_mean(key, KNOWN_TOP_LEVEL) + tr("fix the spelling or delete it"), setting=key)


def _check_zero(config: dict) -> None:
    zero = config.get("zero_optimization")
    if zero is None:
        return
    if not isinstance(zero, dict):
        raise ConfigError(tr("zero_optimization must be an object"), tr('e.g. "zero_optimization": {{"stage": 2}}'),
                          setting="zero_optimization")
    _check_section_keys(zero, "zero_optimization", KNOWN_ZERO, REMOVED_ZERO)
    stage = zero.get("stage", 0)
    if isinstance(stage, bool) or stage not in (0, 1, 2, 3):
        raise ConfigError(tr("zero_optimization.stage must be 0, 1, 2 or 3, got {v!r}", v=stage),
                          tr("set zero_optimization.stage to 0-3"), setting="zero_optimization.stage")


def _check_precision(config: dict) -> None:
    for section in ("fp16", "bf16", "bfloat16"):
        value = config.get(section)
        if value is None:
            continue
        if not isinstance(value, dict):
            # DeepSpeed reads `"fp16": true` as a section and fails, or ignores it, depending on the version.
            raise ConfigError(tr("{s} must be an object, got {v!r}", s=section, v=value),
                              tr('e.g. "{s}": {{"enabled": true}}', s=section), setting=section)
        flag = value.get("enabled", False)
        if not isinstance(flag, bool):
            raise ConfigError(tr("{s}.enabled must be true or false, got {v!r}", s=section, v=flag),
                              tr('write "enabled": {v} without quotes', v=str(flag).lower() if isinstance(flag, str)
                                 else "true"), setting=f"{section}.enabled")

    def enabled(section: str) -> bool:
        value = config.get(section)
        return isinstance(value, dict) and value.get("enabled", False) is True

    if enabled("fp16") and (enabled("bf16") or enabled("bfloat16")):
        raise ConfigError(tr("fp16 and bf16 are both enabled"), tr("enable only one of them"), setting="fp16")


def _check_optimizer_section(opt) -> None:
    if opt is None:
        return
    if not isinstance(opt, dict) or not isinstance(opt.get("type"), str):
        raise ConfigError(tr("optimizer needs a \"type\""), tr('e.g. "optimizer": {{"type": "AdamW", "params": {{"lr": 3e-4}}}}'),
                          setting="optimizer.type")
    if not isinstance(opt.get("params", {}), dict):
        raise ConfigError(tr("optimizer.params must be an object"), tr('e.g. "params": {{"lr": 3e-4}}'),
                          setting="optimizer.params")
    _check_optimizer(opt["type"], opt.get("params", {}))


def _check_scheduler(sched) -> None:
    if sched is None:
        return
    if not isinstance(sched, dict):
        raise ConfigError(tr("scheduler must be an object with a \"type\", got {v!r}", v=sched),
                          tr('e.g. "scheduler": {{"type": "WarmupLR", "params": {{"warmup_num_steps": 100}}}}'),
                          setting="scheduler")
    stype = sched.get("type")
    if (known := scheduler_params(stype)) is None:  # DeepSpeed's own, or a torch.optim.lr_scheduler class by name
        raise ConfigError(tr("scheduler.type {t!r} is not a DeepSpeed scheduler", t=stype),
                          _did_you_mean(str(stype), SCHEDULERS) + tr("choose one of: {c}", c=", ".join(SCHEDULERS)),
                          setting="scheduler.type")
    params = sched.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(tr("scheduler.params must be an object"), tr('e.g. "params": {{"warmup_num_steps": 100}}'),
                          setting="scheduler.params")
    for key in params:
        if key not in known:
            raise ConfigError(tr("scheduler {t} has no parameter {key!r}", t=stype, key=key),
                              _did_you_mean(key, known) + tr("its parameters are: {p}", p=", ".join(known[:-1])),
                              setting=f"scheduler.params.{key}")
    if stype in SCHEDULERS and "total_num_steps" in known and "total_num_steps" not in params:
        raise ConfigError(tr("scheduler {t} needs params.total_num_steps", t=stype),
                          tr("set scheduler.params.total_num_steps to the number of training steps"),
                          setting="scheduler.params.total_num_steps")


def _validate_with_autos(config: dict, world_size: int) -> dict:
    """validate() of an "auto" config: every check on what is written; batch arithmetic only when no batch
    key is "auto"."""
    autos = set(auto_keys(config))
    batch_auto = any(k in autos for k in BATCH_KEYS)
    checked = _without_autos({k: v for k, v in config.items() if k != "scheduler"})
    if isinstance(config.get("scheduler"), dict):
        checked["scheduler"] = _without_autos(config["scheduler"], keep_as=1)  # its names are checked, not values
    if batch_auto:
        for key in BATCH_KEYS:
            _positive_int(checked, key)  # a written value is still a positive integer
        checked = {k: v for k, v in checked.items() if k not in BATCH_KEYS}
        checked["train_micro_batch_size_per_gpu"] = 1  # a stand-in: the Trainer's value is checked by DeepSpeed
    validate(checked, world_size)
    out = copy.deepcopy(config)
    if not batch_auto:
        _resolve_batch(out, world_size)
    return out
