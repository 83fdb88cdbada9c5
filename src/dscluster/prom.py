"""Prometheus's text exposition format (version 0.0.4), written by hand, and a small /metrics server.

No dependency: the node agent and the supervisor run where only the standard library is sure to be.
The conventions are the Prometheus client library's: base units in the name (`_bytes`, `_seconds`,
`_watts`, `_celsius`, `_ratio` for 0..1), counters end in `_total`, every family has `# HELP` and
`# TYPE` lines, label values escape backslash, double quote and newline, and HELP text escapes
backslash and newline; NaN and infinities are written `NaN`, `+Inf`, `-Inf`.

    server = MetricsServer(lambda: [gauge("x_bytes", "help", [({"node": "n0"}, 1.0)])], "127.0.0.1", 0)
    server.port   # the bound port (0 asks the kernel for a free one)
    server.close()

Ports (documented in the README): node agents listen on 9410, a run's supervisor on a free port (or
DSCLUSTER_METRICS_PORT) and lists itself for Prometheus's file_sd in <shared>/prometheus/runs/.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
NODE_PORT = 9410  # the node agent's /metrics (0: off)
_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


@dataclass
class Family:
    name: str
    help: str
    type: str  # "gauge" | "counter"
    samples: list[tuple[Mapping[str, str], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"not a metric name: {self.name!r}")
        if self.type not in ("gauge", "counter"):
            raise ValueError(f"unsupported metric type: {self.type!r}")
        if self.type == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"a counter's name ends in _total: {self.name!r}")


def gauge(name: str, help_: str, samples: Iterable[tuple[Mapping[str, str], float | None]]) -> Family:
    return Family(name, help_, "gauge", [(lb, v) for lb, v in samples if v is not None])


def counter(name: str, help_: str, samples: Iterable[tuple[Mapping[str, str], float | None]]) -> Family:
    return Family(name, help_, "counter", [(lb, v) for lb, v in samples if v is not None])


def escape_label(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def escape_help(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    v = float(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if not v.is_integer() or abs(v) >= 1e15 else f"{v:.1f}"


def render(families: Sequence[Family]) -> str:
    out = []
    for fam in families:
        out.append(f"# HELP {fam.name} {escape_help(fam.help)}")
        out.append(f"# TYPE {fam.name} {fam.type}")
        for labels, value in fam.samples:
            for key in labels:
                if not _LABEL.match(key) or key.startswith("__"):
                    raise ValueError(f"not a label name: {key!r}")
            lbl = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
            out.append(f"{fam.name}{{{lbl}}} {format_value(value)}" if lbl else f"{fam.name} {format_value(value)}")
    return "\n".join(out) + "\n"


class _Handler(BaseHTTPRequestHandler):
    collect: Callable[[], Sequence[Family]]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            try:
                body, code, ctype = render(self.server.collect()).encode(), 200, CONTENT_TYPE  # type: ignore[attr-defined]
            except Exception as err:  # noqa: BLE001 - a scrape error is an HTTP 500, never a dead exporter
                body, code, ctype = f"collect failed: {type(err).__name__}\n".encode(), 500, "text/plain"
        elif path == "/":
            body, code, ctype = b'<html><body><a href="/metrics">/metrics</a></body></html>\n', 200, "text/html"
        else:
            body, code, ctype = b"not found\n", 404, "text/plain"
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:  # scrapes every few seconds: not worth a log line each
        pass


class MetricsServer:
    """GET /metrics on (address, port) in a daemon thread; `collect` builds the families at each scrape."""

    def __init__(self, collect: Callable[[], Sequence[Family]], address: str = "127.0.0.1", port: int = 0):
        self._server = ThreadingHTTPServer((address, int(port)), _Handler)
        self._server.daemon_threads = True
        self._server.collect = collect  # type: ignore[attr-defined]
        self.address = address
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def runs_targets_dir(shared: str | os.PathLike) -> Path:
    """Where each run's supervisor lists its /metrics endpoint for Prometheus's file_sd."""
    return Path(shared) / "prometheus" / "runs"


def write_target(path: Path, target: str, labels: Mapping[str, str]) -> None:
    """One file_sd entry (JSON) written atomically, readable by the Prometheus server's user. The shared
    directory is the node user's: its folders are reached by fsutil's no-symlink rule (made as needed)."""
    from dscluster.fsutil import atomic_write_text

    atomic_write_text(path, json.dumps([{"targets": [target], "labels": dict(labels)}], indent=1) + "\n", 0o644)


def remove_target(path: Path) -> None:
    """Remove a file_sd entry, within its directory reached by fsutil's no-symlink rule."""
    from dscluster.fsutil import open_dir

    try:
        dfd = open_dir(path.parent)
    except OSError:
        return
    try:
        os.unlink(path.name, dir_fd=dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
