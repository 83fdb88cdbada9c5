"""The pure parts of JupyterLab on the master: command, config, overrides, validation."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.node import lab
from dscluster.node.labconfig import NOTIFICATION_PLUGIN


def test_command_carries_paths_only_never_the_token(tmp_path):
    argv, env = lab.lab_command(tmp_path / "cfg.json", tmp_path / "token", python="/venv/bin/python")
    assert argv == ["/venv/bin/python", "-m", "jupyterlab", f"--config={tmp_path / 'cfg.json'}"]
    assert env["JUPYTER_TOKEN_FILE"] == str(tmp_path / "token")
    assert "JUPYTER_TOKEN" not in env
    assert not any("token=" in a for a in argv)


def test_zh_tw_sets_server_language_and_ui_locale(tmp_path):
    _, env = lab.lab_command("c", "t", lang="zh_TW")
    assert env["LANGUAGE"].startswith("zh_TW")
    overrides = lab.settings_overrides("zh_TW", base_settings_dir=tmp_path)
    assert overrides[lab.TRANSLATION_PLUGIN]["locale"] == "zh_TW"
    assert lab.TRANSLATION_PLUGIN not in lab.settings_overrides("en", base_settings_dir=tmp_path)


def test_overrides_keep_the_packaged_defaults(tmp_path):
    (tmp_path / "overrides.d").mkdir()
    (tmp_path / "overrides.d" / "a.json").write_text(json.dumps({"@x/y:plugin": {"a": 1}}))
    (tmp_path / "overrides.json").write_text(json.dumps({"@x/y:plugin": {"b": 2}}))
    (tmp_path / "overrides.d" / "broken.json").write_text("{not json")
    merged = lab.settings_overrides("zh_TW", base_settings_dir=tmp_path)
    assert merged["@x/y:plugin"] == {"a": 1, "b": 2}
    assert merged[lab.TRANSLATION_PLUGIN] == {"locale": "zh_TW"}


def test_the_lab_never_asks_about_jupyter_news(tmp_path):
    """The lab dscluster starts (and the hub's labs) answer JupyterLab's news question as "never" in the
    default overrides: no prompt on every login; a packaged override still wins."""
    quiet = lab.settings_overrides("en", base_settings_dir=tmp_path)[NOTIFICATION_PLUGIN]
    assert quiet == {"fetchNews": "false", "checkForUpdates": False}
    (tmp_path / "overrides.json").write_text(json.dumps({NOTIFICATION_PLUGIN: {"fetchNews": "true"}}))
    assert lab.settings_overrides("en", base_settings_dir=tmp_path)[NOTIFICATION_PLUGIN]["fetchNews"] == "true"


def test_config_is_secure_by_default(tmp_path):
    cfg = lab.jupyter_config("127.0.0.1", 8888, tmp_path, tmp_path / "settings")["ServerApp"]
    assert cfg["ip"] == "127.0.0.1" and cfg["port"] == 8888 and cfg["port_retries"] == 0
    assert cfg["allow_origin"] == "" and cfg["disable_check_xsrf"] is False
    assert cfg["allow_unauthenticated_access"] is False and cfg["allow_root"] is False
    assert cfg["allow_remote_access"] is False and cfg["open_browser"] is False
    assert "token" not in json.dumps(cfg).lower()
    # An explicit outside address has to pass Jupyter's host check; auth stays on regardless.
    assert lab.jupyter_config("10.0.0.5", 8888, tmp_path, tmp_path)["ServerApp"]["allow_remote_access"] is True


@pytest.mark.parametrize("ip,port,setting", [("localhost-ish", 8888, "ip"), ("0.0.0.0.0", 8888, "ip"),
                                              ("127.0.0.1", 0, "port"), ("127.0.0.1", 70000, "port")])
def test_bad_address_names_the_setting(ip, port, setting):
    with pytest.raises(ConfigError) as err:
        lab.validate_address(ip, port)
    assert err.value.setting == setting and err.value.hint


def test_tunnel_line():
    assert lab.tunnel_line(8888, "gpu1") == "ssh -N -L 8888:127.0.0.1:8888 gpu1"
    assert lab.tunnel_line(9999, "gpu1", "alice", 2222) == "ssh -N -p 2222 -L 9999:127.0.0.1:9999 alice@gpu1"


def test_tokens_are_random_and_long():
    tokens = {lab.new_token() for _ in range(50)}
    assert len(tokens) == 50 and min(len(t) for t in tokens) >= 40


def test_taken_port_is_refused_before_anything_starts(tmp_path, dscluster_home, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(lab.LabError) as err:
            lab.start_lab(tmp_path, "127.0.0.1", port)
    assert str(port) in err.value.message and "--port" in err.value.hint
    assert not (lab.lab_dir() / "token").exists()


def test_root_is_refused(tmp_path, dscluster_home, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(PermissionNeeded):
        lab.start_lab(tmp_path)


def test_missing_root_dir_is_a_config_error(tmp_path, dscluster_home, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ConfigError) as err:
        lab.start_lab(tmp_path / "nope")
    assert "nope" in err.value.message



def test_zh_tw_is_chosen_once_and_a_users_own_choice_is_kept(tmp_path):
    env = {"HOME": str(tmp_path)}
    setting = lab.user_locale_setting(env)
    assert setting == tmp_path / ".jupyter/lab/user-settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings"
    assert lab.ensure_user_locale("en", env) is False and not setting.exists()
    assert lab.ensure_user_locale("zh_TW", env) is True
    assert json.loads(setting.read_text()) == {"locale": "zh_TW"}
    setting.write_text('{"locale": "en"}')  # the user switched back in the Language menu
    assert lab.ensure_user_locale("zh_TW", env) is False
    assert json.loads(setting.read_text()) == {"locale": "en"}
    custom = {"HOME": str(tmp_path), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "s")}
    assert lab.user_locale_setting(custom).is_relative_to(tmp_path / "s")


def test_panel_config_is_merged_but_cannot_loosen_security(tmp_path):
    extra = {"ServerApp": {"jpserver_extensions": {"dscluster.jupyter": True}, "ip": "0.0.0.0",
                           "disable_check_xsrf": True},
             "LabApp": {"extra_labextensions_path": ["/x"]}}
    cfg = lab.jupyter_config("127.0.0.1", 8888, tmp_path, tmp_path / "s", extra)
    assert cfg["ServerApp"]["jpserver_extensions"] == {"dscluster.jupyter": True}
    assert cfg["LabApp"]["extra_labextensions_path"] == ["/x"]
    assert cfg["ServerApp"]["ip"] == "127.0.0.1" and cfg["ServerApp"]["disable_check_xsrf"] is False
    assert cfg["LabApp"]["news_url"] is None  # no phoning home from a cluster master
    assert extra["ServerApp"]["ip"] == "0.0.0.0"  # the caller's dict is not modified
    real = lab.panel_config()
    assert real["ServerApp"]["jpserver_extensions"] == {"dscluster.jupyter": True}


def test_missing_jupyterlab_is_named_before_anything_starts(tmp_path, dscluster_home, monkeypatch):
    # An interpreter without jupyterlab (here: one whose import check fails) gets the pip line,
    # not "did not start" and a log tail; nothing (token, config) is written.
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    no_lab = tmp_path / "python"
    no_lab.write_text("#!/bin/sh\nexit 1\n")
    no_lab.chmod(0o755)
    assert not lab.jupyterlab_installed(str(no_lab))
    assert not lab.jupyterlab_installed(str(tmp_path / "missing-python"))
    with pytest.raises(lab.LabError) as err:
        lab.start_lab(tmp_path, python=str(no_lab))
    assert str(no_lab) in err.value.message and "-m pip install 'dscluster[jupyter]'" in err.value.hint
    assert not (lab.lab_dir() / "token").exists()
    pytest.importorskip("jupyterlab")
    assert lab.jupyterlab_installed() and lab.jupyterlab_installed(sys.executable)
