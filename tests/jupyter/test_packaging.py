"""What `pip install` ships for JupyterLab: the data-files globs match the committed build, the
server-config enables the extension, and the built panel is the one the TypeScript source describes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def test_data_files_globs_match_committed_files():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    data_files = project["tool"]["setuptools"]["data-files"]
    assert "etc/jupyter/jupyter_server_config.d" in data_files
    assert "share/jupyter/labextensions/dscluster" in data_files
    for patterns in data_files.values():
        for pattern in patterns:
            assert list(REPO.glob(pattern)), pattern
    assert any(p.name.startswith("remoteEntry.") for p in REPO.glob(
        data_files["share/jupyter/labextensions/dscluster/static"][0]))


def test_server_config_enables_the_extension():
    cfg = json.loads((REPO / "jupyter-config/jupyter_server_config.d/dscluster.json").read_text())
    assert cfg["ServerApp"]["jpserver_extensions"] == {"dscluster.jupyter": True}


def test_built_panel_matches_the_source_package():
    src = json.loads((REPO / "labextension/package.json").read_text())
    built = json.loads((REPO / "src/dscluster/jupyter/labextensions/dscluster/package.json").read_text())
    assert built["name"] == src["name"] == "dscluster" and built["version"] == src["version"]
    assert built["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")


def test_lab_config_points_at_the_built_panel():
    from dscluster.jupyter import lab_config

    cfg = lab_config()
    assert cfg["ServerApp"]["jpserver_extensions"] == {"dscluster.jupyter": True}
    assert (Path(cfg["LabApp"]["extra_labextensions_path"][0]) / "dscluster" / "package.json").is_file()


def test_entry_points_for_locale_and_tensorboard():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    eps = project["project"]["entry-points"]
    assert eps["jupyterlab.locale"]["dscluster"] == "dscluster.jupyter"
    assert eps["jupyter_serverproxy_servers"]["tensorboard"] == "dscluster.jupyter.serverproxy:setup_tensorboard"
