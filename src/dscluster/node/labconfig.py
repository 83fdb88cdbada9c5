"""JupyterLab's configuration as dscluster starts it (node/lab.py starts and stops the server): the server
settings with the security ones applied last, the DeepSpeed panel's extension, the UI language (the
default and, once, the user's own choice), and the command line that holds only paths. Pure builders,
but for `ensure_user_locale`, which writes the user's setting once."""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from pathlib import Path

from dscluster.fsutil import atomic_write_json

TRANSLATION_PLUGIN = "@jupyterlab/translation-extension:plugin"
# JupyterLab asks on every new login whether to fetch Jupyter's news (fetchNews "none"); a cluster master
# is often offline, and the question is not the team's to answer each time: never fetch, never ask.
NOTIFICATION_PLUGIN = "@jupyterlab/apputils-extension:notification"
QUIET_NOTIFICATIONS = {"fetchNews": "false", "checkForUpdates": False}


def is_loopback(ip: str) -> bool:
    return ipaddress.ip_address(ip).is_loopback


def jupyter_config(ip: str, port: int, root_dir: str | os.PathLike, settings_dir: str | os.PathLike,
                   extra: dict | None = None) -> dict:
    """The server settings, as Jupyter's JSON config. Pure; holds no secret.

    `extra` (the DeepSpeed panel's `dscluster.jupyter.lab_config()`) is merged per section; it may
    add extensions, never loosen the security settings here, which are applied last.
    """
    secure = {
        "ServerApp": {
            "ip": ip,
            "port": int(port),
            "port_retries": 0,  # a taken port must fail loudly, not move the server elsewhere
            # Not opening a browser does not stop jpserver-<pid>-open.html (the token in a redirect) from
            # being written: the server extension turns that off (dscluster.jupyter).
            "open_browser": False,
            "root_dir": str(root_dir),
            "allow_root": False,
            "allow_origin": "",
            "disable_check_xsrf": False,
            "allow_unauthenticated_access": False,
            # Loopback keeps Jupyter's DNS-rebinding guard; an explicit outside address needs it off.
            "allow_remote_access": not is_loopback(ip),
        },
        # Defaults only (overrides.json): the user's own UI choices in user-settings still win.
        # Cluster masters often have no internet: no update check, no news feed fetched.
        "LabApp": {"app_settings_dir": str(settings_dir), "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                   "news_url": None},
    }
    merged: dict = {section: dict(values) for section, values in (extra or {}).items()}
    for section, values in secure.items():
        merged.setdefault(section, {}).update(values)
    return merged


def panel_config() -> dict:
    """The DeepSpeed panel's server extension + lab extension (needed by editable installs)."""
    try:
        from dscluster.jupyter import lab_config
    except ImportError:  # the panel is optional: JupyterLab still starts without it
        return {}
    return lab_config()


def settings_overrides(lang: str, base_settings_dir: Path | None = None) -> dict:
    """JupyterLab default-setting overrides: no news prompt or update check (unless the packaged ones say
    otherwise), the packaged ones, plus the UI language."""
    merged: dict = {NOTIFICATION_PLUGIN: dict(QUIET_NOTIFICATIONS)}
    base = base_settings_dir if base_settings_dir is not None else _packaged_settings_dir()
    for candidate in [*sorted((base / "overrides.d").glob("*.json")), base / "overrides.json"]:
        try:
            for plugin, values in json.loads(candidate.read_text(encoding="utf-8")).items():
                merged.setdefault(plugin, {}).update(values)
        except (OSError, ValueError, AttributeError):
            continue  # a missing or broken packaged file must not stop the lab
    if lang == "zh_TW":
        merged.setdefault(TRANSLATION_PLUGIN, {})["locale"] = "zh_TW"
    return merged


def user_locale_setting(env: dict[str, str] | None = None) -> Path:
    """The user's own JupyterLab setting file for the UI language (what the Language menu writes)."""
    env = os.environ if env is None else env
    config_dir = Path(env.get("JUPYTER_CONFIG_DIR") or Path(env.get("HOME") or Path.home()) / ".jupyter")
    settings_dir = Path(env.get("JUPYTERLAB_SETTINGS_DIR") or config_dir / "lab" / "user-settings")
    return settings_dir / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings"


def ensure_user_locale(lang: str, env: dict[str, str] | None = None) -> bool:
    """Choose zh-TW for the user, once, unless they already chose a language themselves.

    The schema default in overrides.json is not enough: the server translates menus and settings
    with the *user's* setting (else the process locale), so without this the menu bar stays English.
    """
    if lang != "zh_TW":
        return False
    path = user_locale_setting(env)
    if path.exists():
        return False  # a choice made in the Language menu (or earlier) is kept
    try:
        atomic_write_json(path, {"locale": "zh_TW"}, mode=0o644)
    except OSError:
        return False  # a read-only home: the UI still follows overrides.json, only menus stay English
    return True


def _packaged_settings_dir() -> Path:
    # JupyterLab's own default for app_settings_dir (jupyterlab.commands.get_app_dir()/settings).
    return Path(os.environ.get("JUPYTERLAB_DIR") or Path(sys.prefix) / "share" / "jupyter" / "lab") / "settings"


def lab_command(config_path: str | os.PathLike, token_file: str | os.PathLike, *, lang: str = "en",
                python: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Pure builder: (argv, env additions) that start JupyterLab with our config.

    argv holds only paths. The token travels as a file path in JUPYTER_TOKEN_FILE.
    """
    argv = [python or sys.executable, "-m", "jupyterlab", f"--config={config_path}"]
    env = {"JUPYTER_TOKEN_FILE": str(token_file), "PYTHONUNBUFFERED": "1"}
    if lang == "zh_TW":
        # Jupyter's own server messages follow LANGUAGE; the UI follows overrides.json.
        env["LANGUAGE"] = "zh_TW:zh"
    return argv, env
