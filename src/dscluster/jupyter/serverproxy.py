"""TensorBoard on the runs directory, behind jupyter-server-proxy (a JupyterLab launcher tile).

jupyter-server-proxy starts it on first use on a free port bound to localhost and proxies it under
/tensorboard/ with Jupyter's own authentication in front; nothing listens on a public interface.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ICON = Path(__file__).resolve().parent / "icons" / "tensorboard.svg"


def logdir() -> str:
    from dscluster import paths
    from dscluster.jupyter import clusterview

    return str(paths.runs_dir(clusterview.resolve(None).shared_dir))


def tensorboard_command() -> list[str]:
    """{port} and {base_url} are filled in by jupyter-server-proxy when it starts the process.

    The trainer writes event files to <run>/tensorboard/, so the runs dir shows every run by name."""
    exe = shutil.which("tensorboard") or str(Path(sys.executable).with_name("tensorboard"))
    return [exe, "--logdir", logdir(), "--port", "{port}", "--host", "127.0.0.1",
            "--path_prefix", "{base_url}tensorboard", "--reload_interval", "15"]


def setup_tensorboard() -> dict:
    """Entry point `jupyter_serverproxy_servers: tensorboard`."""
    return {
        "command": tensorboard_command(),
        "timeout": 60,
        "absolute_url": True,
        "new_browser_tab": False,
        "launcher_entry": {"enabled": True, "title": "TensorBoard (runs)", "icon_path": str(ICON),
                           "category": "Other"},
    }
