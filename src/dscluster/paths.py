"""Where dscluster keeps things on this machine.

- `home()`: per-user state (cluster identities, the CLI log). DSCLUSTER_HOME, else ~/.dscluster.
- `local_shared()`: the "shared directory" used when no cluster spec is given (the demo, local runs):
  DSCLUSTER_SHARED, else <home>/local. With a cluster spec, the spec's shared directory is used instead.
Runs live in <shared>/runs/<run-id>/, prepared data in <shared>/data/.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("DSCLUSTER_HOME") or Path.home() / ".dscluster")


def local_shared() -> Path:
    value = os.environ.get("DSCLUSTER_SHARED")
    if not value:
        return home() / "local"
    from dscluster.errors import ConfigError  # noqa: PLC0415 - paths stays importable by everything
    from dscluster.i18n import tr  # noqa: PLC0415

    path = Path(value)
    if not path.is_absolute():
        # Relative, runs would land wherever the command happens to be started (and each rank elsewhere).
        raise ConfigError(tr("DSCLUSTER_SHARED={value} is not an absolute path", value=value),
                          tr("set it to an absolute path, e.g. export DSCLUSTER_SHARED=$PWD/{value}", value=value),
                          setting="DSCLUSTER_SHARED")
    if path.exists() and not path.is_dir():
        raise ConfigError(tr("DSCLUSTER_SHARED={value} is not a directory", value=value),
                          tr("point it at a directory (a missing one is created)"), setting="DSCLUSTER_SHARED")
    return path


def runs_dir(shared: Path) -> Path:
    return Path(shared) / "runs"


def data_dir(shared: Path) -> Path:
    return Path(shared) / "data"


def log_file() -> Path:
    return home() / "logs" / "dscluster.log"
