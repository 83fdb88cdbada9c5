"""The user's program as a run starts it: its environment (DeepSpeed's .deepspeed_env files, --env), its
arguments (the ds_config they name, the Hugging Face Trainer's `--deepspeed FILE`, options given twice),
that it exists, the ds_config checked for the real world size, and the copy the ranks read (DeepSpeed's
monitor added, the batch kept on another world size)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dscluster import dsconfig
from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr


def parse_env(pairs: list[str]) -> dict[str, str]:
    """`--env NAME=value`, or `--env NAME` for this environment's value: the way to pass a secret
    without putting it on dscluster's own command line (visible in ps, kept in shell history)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not key or not key.replace("_", "a").isalnum() or not key.isascii() or key[0].isdigit():
            raise UsageError(tr("--env {pair!r} is not KEY=VALUE", pair=pair),
                             tr("write it as --env NAME=value, e.g. --env OMP_NUM_THREADS=4"))
        if not sep:
            if key not in os.environ:
                raise UsageError(tr("--env {key}: {key} is not set in this environment", key=key),
                                 tr("export {key}=... first, or write --env {key}=value", key=key), setting="--env")
            value = os.environ[key]
        if "\n" in value:
            raise UsageError(tr("--env {key}: the value contains a newline", key=key),
                             tr("pass a single-line value"))
        out[key] = value
    return out


@dataclass(frozen=True)
class ProgramEnv:
    """The environment a run gives its ranks: DeepSpeed's .deepspeed_env files first, --env on top."""

    files: list[Path]  # the .deepspeed_env files found (DeepSpeed's own lookup: cwd, then home)
    from_files: dict[str, str]
    values: dict[str, str]


def program_env(cwd: Path, pairs: list[str]) -> ProgramEnv:
    files = deepspeed_env_files(cwd)
    from_files = read_deepspeed_env(files)
    return ProgramEnv(files, from_files, {**from_files, **parse_env(pairs)})


def deepspeed_env_files(cwd: Path, environ: dict[str, str] | None = None) -> list[Path]:
    """The `.deepspeed_env` files DeepSpeed's runner would read for a launch from `cwd`: the name is
    DS_ENV_FILE's value when the user set it, else `.deepspeed_env`; first in the home directory, then in
    the launch directory (the later one wins on a name both set). dscluster points DS_ENV_FILE at the
    run's own file, so it reads these itself and merges them into it."""
    env = os.environ if environ is None else environ
    name = env.get("DS_ENV_FILE") or ".deepspeed_env"
    found: list[Path] = []
    for base in (Path(os.path.expanduser("~")), cwd):
        path = base / name  # an absolute DS_ENV_FILE names one file, as os.path.join makes it in DeepSpeed
        if path.is_file() and path.resolve() not in [p.resolve() for p in found]:
            found.append(path)
    return found


def read_deepspeed_env(files: list[Path]) -> dict[str, str]:
    """KEY=VALUE lines, as DeepSpeed's runner splits them (at the first `=`, both sides stripped). A blank or
    `#` line is skipped (DeepSpeed's runner would stop with a ValueError on it); any other line without
    `=` is refused, naming the file and line."""
    values: dict[str, str] = {}
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as err:
            raise ConfigError(tr("{path} cannot be read: {err}", path=path, err=err.strerror or err),
                              tr("make it readable, or move it aside"), setting=".deepspeed_env") from None
        for i, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise ConfigError(tr("{path}, line {n}: {line!r} is not NAME=VALUE", path=path, n=i, line=line[:80]),
                                  tr("write one NAME=VALUE per line (DeepSpeed's runner reads the file the same "
                                     "way)"), setting=".deepspeed_env")
            values[key.strip()] = value.strip()
    return values


# The value-taking options DeepSpeed's add_config_arguments gives a training script (plus this trainer's
# dashed spelling). argparse keeps the LAST of a repeated option, and takes an unambiguous prefix
# (`--deepspeed_conf`) as the option itself.
DS_CONFIG_OPTIONS = ("--deepspeed_config", "--deepspeed-config", "--deepscale_config")


def _config_option(token: str) -> str | None:
    name = token.split("=", 1)[0]
    for option in DS_CONFIG_OPTIONS:
        if option.startswith(name) and len(name) > len("--deepspeed"):  # `--deepspeed` alone is the flag
            return option
    return None


# Finds a dotted module without executing any of it: PathFinder on the launch directory + sys.path for
# the top-level name (importlib.util.find_spec for one that a meta-path finder provides), then the
# parent's submodule_search_locations for each further part.
_FIND_MODULE = """import sys
from importlib.machinery import PathFinder
from importlib.util import find_spec
top, *rest = sys.argv[1].split(".")
spec = PathFinder.find_spec(top, [sys.argv[2]] + [p for p in sys.path if p not in ("", "/")]) or find_spec(top)
for part in rest:
    locations = spec.submodule_search_locations if spec else None
    spec = PathFinder.find_spec(part, list(locations)) if locations else None
sys.exit(0 if spec else 1)
"""


HF_DS_OPTION = "--deepspeed"  # the Hugging Face Trainer's (and Accelerate examples') `--deepspeed ds_config.json`


def _hf_value(value: str | None) -> bool:
    """Whether the word after `--deepspeed` is HF's ds_config file (DeepSpeed's own `--deepspeed` is a switch,
    followed by another option or nothing)."""
    return bool(value) and not value.startswith(("-", "{"))


def ds_config_uses(args: list[str]) -> list[tuple[str, str | None]]:
    """(option as typed, value) for every ds_config option in a script's arguments, in order, up to a
    `--` (after which argparse reads no options). A missing value is None. HF's `--deepspeed FILE` and
    `--deepspeed=FILE` count (option "--deepspeed"); DeepSpeed's `--deepspeed` switch does not."""
    uses: list[tuple[str, str | None]] = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == HF_DS_OPTION and i + 1 < len(args) and _hf_value(args[i + 1]):
            uses.append((arg, args[i + 1]))
            continue
        if arg.startswith(HF_DS_OPTION + "="):
            uses.append((HF_DS_OPTION, arg.split("=", 1)[1] or None))
            continue
        if not arg.startswith("--") or _config_option(arg) is None:
            continue
        if "=" in arg:
            uses.append((arg.split("=", 1)[0], arg.split("=", 1)[1]))
        else:
            uses.append((arg, args[i + 1] if i + 1 < len(args) else None))
    return uses


def check_repeated_options(args: list[str]) -> None:
    """The script's own arguments: the ds_config is named once. Given twice, DeepSpeed's argparse would
    use the last while a check of the first would pass a file that never runs; `--deepscale_config`
    beside `--deepspeed_config` is an assertion inside every rank. Refused here, with the fix."""
    uses = ds_config_uses(args)
    for option, value in uses:
        if value is None or value.startswith("--"):
            raise UsageError(tr("{option} has no value in the script's arguments", option=option),
                             tr("write {option} ds_config.json", option=option), setting="deepspeed_config")
    if len({value for _, value in uses}) > 1 or len({_config_option(o) for o, _ in uses} - {"--deepspeed-config"}) > 1:
        shown = " ".join(f"{o} {v}" for o, v in uses)
        raise UsageError(tr("the script's arguments name the DeepSpeed config {n} times ({shown}); DeepSpeed "
                            "would use only the last", n=len(uses), shown=shown),
                         tr("keep one --deepspeed_config: the file you mean to run ({last}?)", last=uses[-1][1]),
                         setting="deepspeed_config")


def find_ds_config(args: list[str]) -> str | None:
    """The ds_config the script will read: the last one named, as argparse takes it."""
    uses = [value for _, value in ds_config_uses(args) if value is not None]
    return uses[-1] if uses else None


def hf_ds_config(args: list[str]) -> bool:
    """Whether the script names its ds_config the Hugging Face way (`--deepspeed FILE`): the Trainer (or
    Accelerate) then fills its "auto" values in before DeepSpeed reads it."""
    return any(option == HF_DS_OPTION for option, _ in ds_config_uses(args))


def check_program(program: str, module: bool, cwd: Path, python: str, no_python: bool = False) -> None:
    if no_python:
        if module:
            raise UsageError(tr("--no_python and --module cannot be used together"),
                             tr("--no_python runs an executable; --module runs python -m MODULE: keep one"),
                             setting="--no_python")
        import shutil

        path = (cwd / program) if "/" in program else None
        if path is not None and not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(tr("--no_python: {path} is not an executable file", path=path),
                              tr("chmod +x it, or drop --no_python to run it with python"), setting="--no_python")
        if path is None and shutil.which(program) is None and not (cwd / program).is_file():
            raise ConfigError(tr("--no_python: {name} is not found on PATH", name=program),
                              tr("give the executable's path, e.g. ./{name}", name=program), setting="--no_python")
        return
    if module:
        # The module must be found by the interpreter the ranks use, from the launch directory - found,
        # never imported: importing `pkg.mod` runs pkg/__init__.py, and the launch directory may be the
        # node user's to write while this runs as the launching user. So: cwd "/" (nothing from the
        # launch directory on the probe's own sys.path), the launch directory only searched as data.
        res = subprocess.run([python, "-c", _FIND_MODULE, program, str(cwd)], cwd="/", capture_output=True,
                             timeout=60)
        if res.returncode != 0:
            raise ConfigError(tr("module {name!r} cannot be imported by {python}", name=program, python=python),
                              tr("check the module name, or install it on every node"), setting="module")
        return
    path = (cwd / program) if not os.path.isabs(program) else Path(program)
    if path.is_dir():
        main = path / "__main__.py"
        hint = (tr("give the script inside it, e.g. {path}/train.py; or run the package: -m {name}", path=program,
                   name=path.name) if main.is_file() else
                tr("give the path of the .py file inside it, e.g. {path}/train.py", path=program))
        raise ConfigError(tr("training script {path} is a directory, not a file", path=path), hint, setting="script")
    if not path.is_file():
        raise ConfigError(tr("training script {path} does not exist", path=path),
                          tr("give the path of a .py file (relative to {cwd}), or -m MODULE", cwd=cwd),
                          setting="script")


def check_ds_config(args: list[str], cwd: Path, world_size: int, batch_plan: Any | None = None,
                    unwritten: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The ds_config the script names, resolved for `world_size` ranks; with a `batch_plan`
    (dscluster.batchplan) its batch keys are the plan's, as the ranks of a restart will read them."""
    ref = find_ds_config(args)
    if ref is None:
        return None
    return checked_config_file(ref, cwd, world_size, batch_plan, auto_ok=hf_ds_config(args), unwritten=unwritten)


# Accelerate's own way to name a ds_config without `accelerate launch` (with ACCELERATE_USE_DEEPSPEED=true):
# DeepSpeedPlugin reads it when the script gives none. Given with --env, it is the run's ds_config too.
ACCELERATE_DS_ENV = "ACCELERATE_DEEPSPEED_CONFIG_FILE"


def checked_config_file(ref: str, cwd: Path, world_size: int, batch_plan: Any | None = None, *,
                        auto_ok: bool = False, unwritten: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ds_config file read as DeepSpeed reads it and checked for `world_size` ranks ("auto" allowed for
    the Hugging Face / Accelerate way of naming it)."""
    path = (cwd / ref) if not os.path.isabs(ref) else Path(ref)
    from dscluster import batchplan

    config = dict(unwritten[str(path)]) if unwritten and str(path) in unwritten else dsconfig.load(path)
    if batch_plan is not None:
        config = batchplan.apply(config, batch_plan)
    try:
        return dsconfig.validate(config, world_size, auto_ok=auto_ok)
    except ConfigError as err:  # name the file: the message names a key, but which config holds it?
        raise ConfigError(f"{path}: {err.message}", err.hint, setting=err.setting) from None


def with_monitor(args: list[str], ds_config: dict[str, Any] | None, run_dir: Path,
                 reference: bool) -> tuple[list[str], str | None]:
    """(the script's arguments, the run's ds_config text or None). When the user's ds_config turns on no
    monitor, the run's copy adds DeepSpeed's csv monitor writing into the run directory, and the
    script's --deepspeed_config points at that copy: learning rate and step timers of any script are
    then charted with no change to it. The reference trainer writes its own metrics."""
    from dscluster.launcher.plan import RUN_DS_CONFIG
    from dscluster.runs.records.metrics import has_monitor, monitor_config

    if ds_config is None or reference or has_monitor(ds_config):
        return args, None
    import json

    config = {**ds_config, "csv_monitor": monitor_config(run_dir)}
    return pointed_at(args, str(run_dir / RUN_DS_CONFIG)), json.dumps(config, indent=2, sort_keys=True) + "\n"


def with_batch(args: list[str], ranks_args: list[str], ds_config_text: str | None, ds_config: dict[str, Any] | None,
               run_dir: Path, planned: Any) -> tuple[list[str], str]:
    """(the script's arguments, the run's ds_config text) with the batch keys of `planned`
    (dscluster.batchplan) on top of what `with_monitor` made: the ranks of a run continued on another
    world size read the run's own copy. A script given no ds_config (the reference trainer's defaults)
    is given one holding only the batch keys."""
    import json

    from dscluster import batchplan
    from dscluster.launcher.plan import RUN_DS_CONFIG

    base = json.loads(ds_config_text) if ds_config_text else ds_config
    text = json.dumps(batchplan.apply(base, planned), indent=2, sort_keys=True) + "\n"
    path = str(run_dir / RUN_DS_CONFIG)
    if find_ds_config(args) is None:
        return [*args, "--deepspeed_config", path], text
    return pointed_at(ranks_args, path), text


def pointed_at(args: list[str], path: str) -> list[str]:
    """The arguments with their --deepspeed_config value replaced by `path`."""
    out = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("--deepspeed_config", "--deepspeed-config") and i + 1 < len(args) or \
                arg == HF_DS_OPTION and i + 1 < len(args) and _hf_value(args[i + 1]):
            out += [arg, path]
            skip = True
        elif arg.startswith(("--deepspeed_config=", "--deepspeed-config=", HF_DS_OPTION + "=")):
            out.append(arg.split("=", 1)[0] + "=" + path)
        else:
            out.append(arg)
    return out


def git_commit(cwd: Path) -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def first_run_builds(ds_config: dict[str, Any] | None, env: dict[str, str]) -> dict[str, Any] | None:
    """The DeepSpeed ops the ranks will compile before their first step, as this machine's cache shows
    (None: none). Never fails a launch: it only tells the user why the first steps will wait."""
    from dscluster.launcher import ops  # noqa: PLC0415

    try:
        missing = ops.first_run_builds(ds_config, env)
        return {"ops": [s.name for s in missing], "builders": [s.need.builder for s in missing],
                "accelerator": ops.accelerator_name()} if missing else None
    except Exception:  # noqa: BLE001 - an unimportable or odd DeepSpeed: the ranks will say so themselves
        return None


def auto_note(config: dict, world_size: int) -> str | None:
    """What a launch says about an "auto" config: which values the Trainer fills in, and which checks were
    left to it (None: no "auto" value)."""
    autos = dsconfig.auto_keys(config)
    if not autos:
        return None
    shown = ", ".join(autos[:8]) + (tr(" and {n} more", n=len(autos) - 8) if len(autos) > 8 else "")
    skipped = tr("; the batch arithmetic for {w} ranks is left to it", w=world_size) \
        if any(k in autos for k in dsconfig.BATCH_KEYS) else ""
    return tr('ds_config: {n} value(s) are "auto", filled in by the Hugging Face Trainer / Accelerate: {keys}{skipped}',
              n=len(autos), keys=shown, skipped=skipped)
