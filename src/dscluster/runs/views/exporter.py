"""A run's figures for Prometheus, served by its supervisor while it runs.

Per run (labels `run`, `cluster`, `name`): the newest step, loss and tokens/s (metrics.jsonl), the
world size and attempt, counters of restarts, stalls, shrinks and checkpoint commits, the newest
committed step, and `dscluster_run_info{status=...} 1`.

Where: DSCLUSTER_METRICS_ADDRESS (default 127.0.0.1: Prometheus on the controller; give the
controller's cluster-facing address for a Prometheus elsewhere) and DSCLUSTER_METRICS_PORT (default 0:
a free port); DSCLUSTER_METRICS_PORT=off turns it off. The endpoint is listed for Prometheus's file_sd in
<shared>/prometheus/runs/<run-id>.json while the run lives, so one scrape config finds every run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dscluster import prom
from dscluster.runs.records import metrics, store

LINGER_MAX_S = 30.0  # after the run ends: wait for one more scrape, so the last figures are kept


class RunExporter:
    def __init__(self, book) -> None:
        self.book = book  # runs.supervising.runbook.RunBook: the record, the run directory, `save`
        self.commits = 0
        self.server: prom.MetricsServer | None = None
        self.target: Path | None = None
        self.scrapes: list[float] = []

    # ---- what a scrape sees ---------------------------------------------------------------------
    def collect(self) -> list[prom.Family]:
        self.scrapes = [*self.scrapes[-3:], time.monotonic()]
        rec, run_dir = self.book.record, self.book.run_dir
        me = {"run": rec.id, "cluster": str(rec.cluster or ""), "name": str(rec.name or "")}
        last = metrics.latest(run_dir) or {}
        events = store.read_events(run_dir)
        stalls = sum(1 for e in events if e.get("event") == "stalled")

        def num(key: str) -> float | None:
            v = last.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        return [
            prom.gauge("dscluster_run_info", "1 for each run this supervisor serves, with its status",
                       [({**me, "status": rec.status}, 1)]),
            prom.gauge("dscluster_run_step", "the newest training step the run logged", [(me, num("step"))]),
            prom.gauge("dscluster_run_loss", "the newest training loss", [(me, num("loss"))]),
            prom.gauge("dscluster_run_tokens_per_second", "training throughput at the newest step",
                       [(me, num("tokens_per_s"))]),
            prom.gauge("dscluster_run_world_size", "ranks of the current attempt", [(me, rec.world_size)]),
            prom.gauge("dscluster_run_attempt", "the current attempt (1 = first)", [(me, len(rec.attempts) or None)]),
            prom.gauge("dscluster_run_last_checkpoint_step", "the newest committed checkpoint step",
                       [(me, rec.last_checkpoint_step)]),
            prom.counter("dscluster_run_restarts_total", "restarts after a failure",
                         [(me, max(0, len(rec.attempts) - 1))]),
            prom.counter("dscluster_run_stalls_total", "attempts ended by the stall timeout", [(me, stalls)]),
            prom.counter("dscluster_run_shrinks_total", "times the run went on with fewer nodes",
                         [(me, len(rec.shrinks))]),
            prom.counter("dscluster_run_checkpoint_commits_total", "checkpoint commits this supervisor saw",
                         [(me, self.commits)]),
        ]

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        port = os.environ.get("DSCLUSTER_METRICS_PORT", "0").strip().lower()
        if port in ("off", "none", "no", "-1"):
            return
        address = os.environ.get("DSCLUSTER_METRICS_ADDRESS", "127.0.0.1").strip() or "127.0.0.1"
        try:
            self.server = prom.MetricsServer(self.collect, address, int(port or 0))
        except (OSError, ValueError) as err:  # a taken port never costs the run
            print(f"metrics endpoint not started on {address}:{port}: {err}", file=sys.stderr, flush=True)
            return
        shared = self.book.run_dir.parent.parent  # <shared>/runs/<id>
        self.target = prom.runs_targets_dir(shared) / f"{self.book.record.id}.json"
        shown = f"[{address}]" if ":" in address else address
        try:
            prom.write_target(self.target, f"{shown}:{self.server.port}",
                              {"run": self.book.record.id, "cluster": str(self.book.record.cluster or "")})
        except OSError as err:
            print(f"metrics target not listed in {self.target}: {err}", file=sys.stderr, flush=True)
            self.target = None
        self.book.save(metrics_url=f"http://{shown}:{self.server.port}/metrics")

    def commit_seen(self) -> None:
        self.commits += 1

    def stop(self) -> None:
        """After the run's end: one more scrape if Prometheus has been scraping (bounded), then close."""
        if self.server is None:
            return
        if len(self.scrapes) >= 2:
            interval = min(LINGER_MAX_S, max(1.0, self.scrapes[-1] - self.scrapes[-2]))
            ended, deadline = time.monotonic(), time.monotonic() + 2 * interval
            while time.monotonic() < deadline and self.scrapes[-1] < ended:
                time.sleep(0.2)
        if self.target is not None:
            prom.remove_target(self.target)
        self.server.close()
        self.server = None
