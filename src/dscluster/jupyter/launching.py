"""The panel's (and the notebook API's) launch form: its fields parsed into a `runs.options.RunRequest`.

The request is checked completely (fields here; program, cluster and the DeepSpeed config against the
cluster's world size in the service) before anything starts, so a bad form answers 400 with the message
naming the setting. Starting, stopping and restarting are `dscluster.runs.service`'s, which spawns a
detached supervisor; the Jupyter server never runs training itself, and a server restart does not touch
running jobs.
"""

from __future__ import annotations

import json
import re
import shlex

from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr
from dscluster.jupyter import clusterview
from dscluster.jupyter.backendfields import backend_request
from dscluster.runs.records.request import DEFAULTS, RunRequest

MAX_RESTARTS_LIMIT = 50
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

# What the panel's form starts with: the built-in trainer, tiny preset, a few steps. It runs anywhere.
DEMO_ARGS = ["--preset", "tiny", "--steps", "30", "--log-interval", "1", "--save-interval", "10",
             "--sample-tokens", "40"]
DEMO_CONFIG = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}


def form_defaults(view: clusterview.ClusterView) -> dict:
    return {
        "script": "-m dscluster.train",
        "args": shlex.join(DEMO_ARGS),
        "config": json.dumps(DEMO_CONFIG, indent=2),
        "cluster": view.spec_path or "",
        "cluster_name": view.name,
        "max_restarts": DEFAULTS["max_restarts"],  # as `dscluster launch`
    }


def _load_config(value: object) -> tuple[dict | None, str | None]:
    """`config` is a JSON object, JSON text, a path to a JSON file, or empty (none)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if isinstance(value, dict):
        return value, None
    if not isinstance(value, str):
        raise UsageError(tr("'config' must be DeepSpeed config JSON or a path"),
                         tr('e.g. {{"train_micro_batch_size_per_gpu": 8}}, or the path of a ds_config.json'),
                         setting="config")
    text = value.strip().removeprefix("\ufeff")
    if text.startswith("{"):  # inline text is read as DeepSpeed reads a file: JSON, or hjson
        from dscluster import dsconfig  # noqa: PLC0415

        try:
            return dsconfig.parse(text, "config"), None
        except ConfigError as err:
            raise ConfigError(err.message, err.hint, setting="config") from None
    return None, text


def _int_field(body: dict, key: str, default: int | None, lo: int, hi: int) -> int | None:
    value = body.get(key, default)
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise UsageError(tr("{key!r} must be a whole number from {lo} to {hi}", key=key, lo=lo, hi=hi),
                         tr("e.g. {key}={lo}", key=key, lo=lo), setting=key)
    return value


LAUNCH_FIELDS = ("script", "args", "config", "cluster", "nprocs", "max_restarts", "name", "env", "wait", "launcher",
                 "options")


def checked_env(env: object) -> dict[str, str]:
    """`env` of a launch or restart (HTTP body or Python API): names to string values, the names under
    the CLI's own --env rules. None is no variables."""
    from dscluster.runs.preparing.program import parse_env  # noqa: PLC0415

    if env is None:
        return {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigError(tr("env must be an object (dict) of names to string values"),
                          tr('e.g. {{"OMP_NUM_THREADS": "4", "HF_TOKEN": "..."}}'), setting="env")
    return parse_env([f"{k}={v}" for k, v in env.items()])


def parse_launch(body: dict, cwd: str | None = None) -> RunRequest:
    """Check the request's shape; the content (program, cluster, config) is checked by `prepare`."""
    unknown = sorted(k for k in body if k not in LAUNCH_FIELDS)
    if unknown:
        # A misspelt field silently ignored would launch something else than what was asked for.
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(unknown[0], LAUNCH_FIELDS, n=1)
        raise UsageError(tr("unknown field {key!r} in the launch request", key=unknown[0]),
                         (tr("did you mean {m!r}? ", m=close[0]) if close else "")
                         + tr("the fields are: {fields}", fields=", ".join(LAUNCH_FIELDS)), setting=unknown[0])
    env = checked_env(body.get("env"))
    script = body.get("script")
    if script is not None and not isinstance(script, str):
        raise UsageError(tr("'script' must be a string, got {t}", t=type(script).__name__),
                         tr("give the training script path, or -m MODULE"), setting="script")
    if not script or not script.strip():
        raise UsageError(tr("'script' is missing"), tr("give the training script path, or -m MODULE"),
                         setting="script")
    script = script.strip()
    module = script == "-m" or script.startswith("-m ")
    program = script[3:].strip() if module else script
    if module and not program:
        raise UsageError(tr("'-m' needs a module name"), tr("e.g. -m dscluster.train"), setting="script")
    args = body.get("args", [])
    if isinstance(args, str):
        try:
            args = shlex.split(args)
        except ValueError as exc:
            raise UsageError(tr("cannot split 'args': {err}", err=str(exc)), tr("check the quotes"),
                             setting="args") from None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UsageError(tr("'args' must be a list of strings or one string"),
                         tr("e.g. args=['--steps', '100'] or args='--steps 100'"), setting="args")
    name = body.get("name") or None
    if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
        raise UsageError(tr("'name' may use letters, digits, '.', '_' and '-' (at most 40)"),
                         tr("e.g. name='gpt-1.3b'"), setting="name")
    cluster = body.get("cluster") or None
    if cluster is not None and not isinstance(cluster, str):
        raise UsageError(tr("'cluster' must be a path or a cluster name"),
                         tr("e.g. cluster='dscluster.toml', or leave it out for the default"), setting="cluster")
    config, config_path = _load_config(body.get("config"))
    wait = body.get("wait", False)
    if not isinstance(wait, bool):
        raise UsageError(tr("'wait' must be true or false"),
                         tr("wait=True queues the run until its GPUs are free"), setting="wait")
    launcher = body.get("launcher") or None
    if launcher is not None and not isinstance(launcher, str):
        raise UsageError(tr("'launcher' must be the name of a launcher backend"),
                         tr("e.g. launcher='pdsh', or leave it out for the cluster's own"), setting="launcher")
    return RunRequest.of(program=program, module=module, args=args, config=config, config_path=config_path,
                         cluster=cluster.strip() if cluster else None, here_by_default=True,
                         launcher=launcher, scheduler=backend_request(body.get("options")),
                         local=_int_field(body, "nprocs", None, 1, 64),
                         max_restarts=_int_field(body, "max_restarts", DEFAULTS["max_restarts"], 0, MAX_RESTARTS_LIMIT),
                         name=name, cwd=cwd, env=[f"{k}={v}" for k, v in env.items()], wait=wait)
