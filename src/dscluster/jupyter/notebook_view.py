"""Rich notebook views for the Python API: HTML tables, an SVG loss curve, and the live Run widget.

No plotting library: a polyline SVG is enough for a loss curve and renders anywhere (also in
nbconvert output). ipywidgets is imported only by `RunWatcher`.
"""

from __future__ import annotations

import html
import threading
from typing import TYPE_CHECKING

from dscluster.explain import localized
from dscluster.i18n import tr

if TYPE_CHECKING:
    from dscluster.api import Run

_STATUS_COLOR = {"succeeded": "#2e7d32", "failed": "#c62828", "stopped": "#ef6c00", "running": "#1565c0",
                 "restarting": "#6a1b9a", "pending": "#616161"}


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value))


def gib(n: float | None) -> str:
    return "–" if n is None else f"{n / 2**30:.1f} GiB"


def svg_line(points: list[tuple[float, float]], width: int = 420, height: int = 140, title: str = "") -> str:
    """A small SVG line chart; `data-points` carries the point count (tests read it)."""
    if not points:
        return (f'<svg width="{width}" height="{height}" data-points="0"><text x="10" y="20" fill="#888">'
                f'{esc(title)}: {esc(tr("no data yet"))}</text></svg>')
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1
    left, pad = 48, 16

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (width - left - 8)

    def py(y: float) -> float:
        return 8 + (1 - (y - y0) / (y1 - y0)) * (height - pad - 16)

    pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
    return (
        f'<svg width="{width}" height="{height}" data-points="{len(points)}" style="font:10px sans-serif">'
        f'<rect x="{left}" y="8" width="{width - left - 8}" height="{height - pad - 16}" fill="none" stroke="#ccc"/>'
        f'<text x="{left - 4}" y="16" text-anchor="end" fill="#666">{y1:.3g}</text>'
        f'<text x="{left - 4}" y="{height - pad - 8}" text-anchor="end" fill="#666">{y0:.3g}</text>'
        f'<text x="{left}" y="{height - 4}" fill="#666">{esc(title)} · step {x0:g}–{x1:g}</text>'
        f'<polyline points="{pts}" fill="none" stroke="#1565c0" stroke-width="1.5"/></svg>'
    )


def status_badge(status: str) -> str:
    color = _STATUS_COLOR.get(status, "#616161")
    return (f'<span style="background:{color};color:#fff;border-radius:8px;padding:1px 8px">'
            f'{esc(tr(status))}</span>')


def cluster_html(info: dict) -> str:
    rows = []
    for node in info["nodes"]:
        sample = node.get("sample") or {}
        gpus = sample.get("gpus") or []
        if not sample:
            res = esc(tr("no sample yet: the node agent is not publishing"))
        elif gpus:
            res = "<br>".join(
                f"GPU{g['index']} {esc(g.get('name'))}: {esc(g.get('util'))}% · {gib(g.get('mem_used'))}/"
                f"{gib(g.get('mem_total'))} · {esc(g.get('power_w'))} W · {esc(g.get('temp_c'))} °C" for g in gpus)
        else:
            cpu, mem = sample.get("cpu") or {}, sample.get("memory") or {}
            res = (f"CPU {esc(cpu.get('percent'))}% of {esc(cpu.get('count'))} · "
                   f"RAM {gib(mem.get('used'))}/{gib(mem.get('total'))}")
        stale = " ⚠ " + esc(tr("stale")) if sample.get("stale") else ""
        rows.append(f"<tr><td><b>{esc(node['name'])}</b></td><td>{esc(node['address'])}</td>"
                    f"<td>{esc(node.get('slots') or '')}</td><td>{res}{stale}</td></tr>")
    head = (f"<b>{esc(tr('Cluster'))} {esc(info['name'])}</b> · {len(info['nodes'])} {esc(tr('nodes'))} · "
            f"{esc(tr('shared'))} <code>{esc(info['shared_dir'])}</code>")
    return (f'<div class="dscluster-cluster">{head}<table><tr><th>{esc(tr("node"))}</th><th>{esc(tr("address"))}'
            f'</th><th>{esc(tr("slots"))}</th><th>{esc(tr("resources"))}</th></tr>{"".join(rows)}</table></div>')


def run_html(run: Run) -> str:
    s = run.summary()
    loss = [(r["step"], r["loss"]) for r in run.metric_records()
            if isinstance(r.get("loss"), (int, float)) and "event" not in r]
    step = f"{s['step']}/{s['total_steps'] or '?'}" if s.get("step") is not None else "–"
    last_loss = f"{s['loss']:.4f}" if isinstance(s.get("loss"), (int, float)) else "–"
    expl = s.get("explanation") or None
    cause, fix = localized(expl) if isinstance(expl, dict) else ("", "")
    why = (f"<div><b>{esc(tr('What happened'))}:</b> {esc(cause)}<br><b>{esc(tr('Fix'))}:</b> "
           f"{esc(fix)}</div>") if isinstance(expl, dict) else ""
    return (f'<div class="dscluster-run"><b>{esc(run.id)}</b> {status_badge(s["status"])} · '
            f'{esc(tr("step"))} {esc(step)} · {esc(tr("loss"))} {esc(last_loss)} · '
            f'{esc(tr("attempts"))} {esc(s.get("attempts"))}{why}<br>{svg_line(loss, title=tr("loss"))}</div>')


class DoctorReport:
    """doctor's Report with a notebook view; `.ok` is True when no check failed."""

    def __init__(self, report) -> None:
        self.report = report

    @property
    def ok(self) -> bool:
        return all(r.ok or r.skipped or r.severity != "error" for r in self.report.results)

    @property
    def results(self):
        return self.report.results

    def __repr__(self) -> str:
        from dscluster.doctor.render import render

        return render(self.report)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{'✓' if r.ok else ('–' if r.skipped else '✗')}</td><td>{esc(r.node)}</td>"
            f"<td>{esc(r.check)}</td><td>{esc(r.finding)}</td><td>{esc(r.fix)}</td></tr>"
            for r in self.report.results)
        return (f"<b>doctor {esc(self.report.cluster)}</b> · {self.report.elapsed_s:.1f} s"
                f"<table><tr><th></th><th>{esc(tr('node'))}</th><th>{esc(tr('check'))}</th>"
                f"<th>{esc(tr('finding'))}</th><th>{esc(tr('fix'))}</th></tr>{rows}</table>")


class RunWatcher:
    """ipywidgets view of a run, refreshed by a daemon thread until the run finishes (then once more)."""

    def __init__(self, run: Run, interval: float = 1.0, log_lines: int = 12) -> None:
        import ipywidgets as w

        self.run = run
        self.interval = interval
        self.log_lines = log_lines
        self.status = w.HTML()
        self.progress = w.IntProgress(min=0, max=1, value=0, description=tr("step"))
        self.chart = w.HTML()
        self.log = w.HTML()
        self.widget = w.VBox([self.status, self.progress, self.chart, self.log])
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.updates = 0

    def refresh(self) -> None:
        s = self.run.summary()
        total = s.get("total_steps") or max(s.get("step") or 0, 1)
        self.progress.max = max(int(total), 1)
        self.progress.value = min(int(s.get("step") or 0), self.progress.max)
        last_loss = f"{s['loss']:.4f}" if isinstance(s.get("loss"), (int, float)) else "–"
        self.status.value = (f"<b>{esc(self.run.id)}</b> {status_badge(s['status'])} · {esc(tr('loss'))} "
                             f"{esc(last_loss)} · {esc(tr('attempts'))} {esc(s.get('attempts'))}")
        loss = [(r["step"], r["loss"]) for r in self.run.metric_records()
                if isinstance(r.get("loss"), (int, float)) and "event" not in r]
        self.chart.value = svg_line(loss, title=tr("loss"))
        self.log.value = (f"<pre style='max-height:14em;overflow:auto;font-size:11px'>"
                          f"{esc(self.run.logs(rank=0, tail=self.log_lines))}</pre>")
        self.updates += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - a half-written file must not kill the view; retry next tick
                pass
            if self.run.done:
                self.refresh()
                return
            self._stop.wait(self.interval)

    def start(self):
        self.refresh()
        self._thread = threading.Thread(target=self._loop, name=f"watch-{self.run.id}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread:
            self._thread.join(timeout)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)
