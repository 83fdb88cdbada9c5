"""JupyterLab integration: the `/dscluster/api/` server extension, the prebuilt DeepSpeed panel
(labextension/), its zh-TW strings (locale/), and the TensorBoard launcher entry (serverproxy.py).

Kept import-light: JupyterLab imports this module just to find the locale folder. Node samples
(GPU/CPU) are published by the node agents through dscluster.node.stats, which needs no Jupyter.
"""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "dscluster.jupyter"}]


def _jupyter_labextension_paths() -> list[dict]:
    # Used only by `jupyter labextension develop`; pip installs the built copy via data-files.
    return [{"src": "labextensions/dscluster", "dest": "dscluster"}]


def labextensions_dir() -> str:
    """The folder holding the prebuilt panel (`dscluster/`), for LabApp.extra_labextensions_path."""
    import os

    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "labextensions")


def lab_config() -> dict:
    """Jupyter config that loads the server extension and the panel from this package itself.

    A wheel install already does both (data-files); an editable install (`pip install -e`) installs
    no data-files, so whoever starts JupyterLab (`dscluster lab`, the node agent) merges this in.
    """
    return {
        "ServerApp": {"jpserver_extensions": {"dscluster.jupyter": True}},
        "LabApp": {"extra_labextensions_path": [labextensions_dir()]},
    }


def _load_jupyter_server_extension(server_app) -> None:
    from dscluster.jupyter.handlers import setup_handlers

    # jpserver-<pid>-open.html is a redirect page that embeds the token, written world-readable (0644).
    # ServerApp.no_browser_open_file is not a configurable trait (config files cannot set it), but it is
    # read only later, when the server starts: set here, the file is never written.
    server_app.no_browser_open_file = True
    setup_handlers(server_app.web_app)
    server_app.log.info("dscluster: DeepSpeed panel API at %sdscluster/api/", server_app.base_url)


# Jupyter Server < 2 name, still looked up by some tools.
load_jupyter_server_extension = _load_jupyter_server_extension
