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
    return Path(os.environ.get("DSCLUSTER_SHARED") or home() / "local")


def runs_dir(shared: Path) -> Path:
    return Path(shared) / "runs"


def data_dir(shared: Path) -> Path:
    return Path(shared) / "data"


def log_file() -> Path:
    return home() / "logs" / "dscluster.log"
