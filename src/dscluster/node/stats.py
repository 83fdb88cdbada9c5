"""Per-node resource samples: GPUs through NVML, else CPU and memory from /proc.

Each node agent publishes its sample to <shared>/nodes/<node>.json (atomic write) every few seconds;
the Jupyter server samples its own node directly and reads the published files for the others. No
jupyter import here, so node agents can run it without JupyterLab installed:

    python -m dscluster.node.stats --shared /nfs/dscluster --node node1 [--interval 2]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import time
from pathlib import Path

from dscluster.fsutil import atomic_write_json

STALE_AFTER_S = 15.0


def nodes_dir(shared: Path) -> Path:
    return Path(shared) / "nodes"


def _read_proc_cpu() -> tuple[int, int] | None:
    """(busy, total) jiffies from the aggregate line of /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _read_meminfo() -> dict:
    info = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                key, _, rest = line.partition(":")
                info[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return {}
    total = info.get("MemTotal", 0)
    return {"total": total, "used": total - info.get("MemAvailable", info.get("MemFree", 0))}


class GpuReader:
    """NVML reader; `available` is False where nvidia-ml-py or the driver is missing (CPU nodes)."""

    def __init__(self) -> None:
        self.available = False
        self.error: str | None = None
        try:
            import pynvml  # nvidia-ml-py, the optional `gpu` extra

            pynvml.nvmlInit()
            self._nvml = pynvml
            self.available = True
        except Exception as exc:  # ImportError, NVMLError_LibraryNotFound, NVMLError_DriverNotLoaded
            self.error = type(exc).__name__

    def read(self) -> list[dict]:
        if not self.available:
            return []
        nv = self._nvml
        gpus = []
        for i in range(nv.nvmlDeviceGetCount()):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            gpu: dict = {"index": i}
            # Each field on its own: some boards lack power or temperature readings.
            for key, fn in (
                ("name", nv.nvmlDeviceGetName),
                ("util", lambda handle: nv.nvmlDeviceGetUtilizationRates(handle).gpu),
                ("mem_used", lambda handle: nv.nvmlDeviceGetMemoryInfo(handle).used),
                ("mem_total", lambda handle: nv.nvmlDeviceGetMemoryInfo(handle).total),
                ("power_w", lambda handle: nv.nvmlDeviceGetPowerUsage(handle) / 1000.0),
                ("power_limit_w", lambda handle: nv.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0),
                ("temp_c", lambda handle: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)),
            ):
                try:
                    value = fn(h)
                    gpu[key] = value.decode() if isinstance(value, bytes) else value
                except Exception:
                    gpu[key] = None
            gpus.append(gpu)
        return gpus


class Sampler:
    """Keeps the previous /proc/stat reading so CPU utilisation is a delta, like `top`."""

    def __init__(self, gpu: bool = True) -> None:
        self._prev_cpu = _read_proc_cpu()
        self._gpu = GpuReader() if gpu else None

    def sample(self, node: str | None = None) -> dict:
        now = _read_proc_cpu()
        cpu_percent = None
        if now and self._prev_cpu and now[1] > self._prev_cpu[1]:
            cpu_percent = round(100.0 * (now[0] - self._prev_cpu[0]) / (now[1] - self._prev_cpu[1]), 1)
        self._prev_cpu = now
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = None
        gpus = self._gpu.read() if self._gpu else []
        return {
            "node": node or socket.gethostname(),
            "host": socket.gethostname(),
            "time": time.time(),
            "cpu": {"percent": cpu_percent, "count": os.cpu_count(), "load1": load},
            "memory": _read_meminfo(),
            "gpus": gpus,
            "nvml": bool(self._gpu and self._gpu.available),
        }


def publish(shared: Path, node: str, sample: dict) -> Path:
    path = nodes_dir(shared) / f"{node}.json"
    atomic_write_json(path, sample)
    return path


# Each node agent also appends its samples to <shared>/nodes/<node>.history.jsonl, so the panel can draw
# the last minutes of every GPU (also from before the panel was opened); past HISTORY_MAX_BYTES the file is
# rewritten with its newer half.
HISTORY_MAX_BYTES = 4 * 2**20
HISTORY_WINDOW_S = 900.0
HISTORY_POINTS = 300
# What the panel's charts need of a sample: the rest (CPU, memory) stays in the latest-sample file.
GPU_SERIES = ("util", "mem_used", "mem_total", "power_w", "temp_c")


def history_path(shared: Path, node: str) -> Path:
    return nodes_dir(shared) / f"{node}.history.jsonl"


def append_history(path: Path, sample: dict, max_bytes: int = HISTORY_MAX_BYTES) -> None:
    line = json.dumps(sample, separators=(",", ":")) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        size = f.tell()
    if size > max_bytes:
        with open(path, encoding="utf-8") as f:
            f.seek(size // 2)
            f.readline()  # the rest of a line cut in half
            tail = f.read()
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(tail, encoding="utf-8")
        os.replace(tmp, path)


def read_history(path: Path, now: float | None = None, window_s: float = HISTORY_WINDOW_S,
                 max_points: int = HISTORY_POINTS, tail_bytes: int = 2 * 2**20) -> list[dict]:
    """The samples of the last `window_s` seconds from a history file (its tail only), thinned evenly to
    at most `max_points`. Unreadable lines (a write in progress) are skipped."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - tail_bytes))
            raw = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    if size > tail_bytes:
        raw = raw[1:]
    cutoff = (now or time.time()) - window_s
    samples = []
    for line in raw:
        try:
            sample = json.loads(line)
        except ValueError:
            continue
        if isinstance(sample, dict) and float(sample.get("time") or 0) >= cutoff:
            samples.append(sample)
    return thin(samples, max_points)


def thin(samples: list[dict], max_points: int) -> list[dict]:
    if len(samples) <= max_points:
        return samples
    step = len(samples) / max_points
    return [samples[int(i * step)] for i in range(max_points - 1)] + [samples[-1]]


def gpu_series(samples: list[dict]) -> dict:
    """Samples as the panel's charts take them: one time axis, and per GPU index one list per reading
    (None where a sample lacks it), so each GPU of each node is one small time series."""
    times = [s.get("time") for s in samples]
    gpus: dict[int, dict] = {}
    for i, sample in enumerate(samples):
        for g in sample.get("gpus") or []:
            idx = int(g.get("index", 0))
            series = gpus.setdefault(idx, {"index": idx, "name": g.get("name"),
                                           **{k: [None] * len(samples) for k in GPU_SERIES}})
            for k in GPU_SERIES:
                series[k][i] = g.get(k)
    return {"time": times, "gpus": [gpus[i] for i in sorted(gpus)]}


def read_published(shared: Path, node: str, now: float | None = None) -> dict | None:
    """The node's last published sample with `stale` set, or None if it never published one."""
    try:
        with open(nodes_dir(shared) / f"{node}.json", encoding="utf-8") as f:
            sample = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(sample, dict):
        return None
    age = (now or time.time()) - float(sample.get("time") or 0)
    sample["age_s"] = round(age, 1)
    sample["stale"] = age > STALE_AFTER_S
    return sample


def serve_metrics(node: str, latest: dict, address: str, port: int):
    """The node's /metrics (node/exporter.py) on address:port, reading `latest["sample"]` at each scrape;
    None (and a line on stderr) when the port cannot be bound: the panel's samples go on regardless."""
    import sys

    from dscluster.node.exporter import node_families
    from dscluster.prom import MetricsServer

    try:
        return MetricsServer(lambda: node_families(latest.get("sample"), node), address, port)
    except OSError as err:
        print(f"dscluster node: no /metrics on {address}:{port}: {err}", file=sys.stderr, flush=True)
        return None


def publish_forever(shared: Path, node: str, interval: float = 2.0, count: int | None = None,
                    record: Path | None = None, metrics_address: str = "0.0.0.0", metrics_port: int = 0) -> None:
    """Publish a sample every `interval` seconds; with `record`, also append each one to that file as a
    JSON line (a node's own history: what the panel's GPU charts draw, and their test fixture). With
    `metrics_port`, also serve the newest sample to Prometheus at metrics_address:metrics_port/metrics."""
    sampler = Sampler()
    latest: dict = {}
    server = serve_metrics(node, latest, metrics_address, metrics_port) if metrics_port else None
    n = 0
    while count is None or n < count:
        time.sleep(interval)
        sample = sampler.sample(node)
        latest["sample"] = sample
        publish(shared, node, sample)
        if sample["gpus"]:
            append_history(history_path(shared, node), sample)
        if record is not None:
            with open(record, "a", encoding="utf-8") as f:
                f.write(json.dumps(sample, separators=(",", ":")) + "\n")
        n += 1
    if server is not None:
        server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dscluster.node.stats",
                                     description="Publish this node's GPU/CPU samples for the DeepSpeed panel.")
    parser.add_argument("--shared", required=True, type=Path, help="the cluster's shared directory")
    parser.add_argument("--node", default=socket.gethostname(), help="node name as in the cluster spec")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--count", type=int, default=None, help="stop after N samples (tests)")
    parser.add_argument("--record", type=Path, default=None, help="also append every sample to this JSON-lines file")
    parser.add_argument("--metrics-port", type=int, default=0, help="serve Prometheus /metrics on this port (0: off)")
    parser.add_argument("--metrics-address", default="0.0.0.0", help="the address /metrics listens on")
    args = parser.parse_args(argv)
    try:
        publish_forever(args.shared, args.node, args.interval, args.count, args.record, args.metrics_address,
                        args.metrics_port)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
