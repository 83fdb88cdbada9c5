"""A node's figures for Prometheus: the same sample the panel shows (node/stats.py), as metric families.

Per GPU (NVML): utilisation, memory used and total, power and its limit, temperature, labelled
`node`, `gpu` (the index) and `model`; per node: CPU utilisation and count, load, memory. Served by the
node agent's stats process at http://<node>:9410/metrics (`dscluster node start --metrics-port`).
"""

from __future__ import annotations

from collections.abc import Mapping

from dscluster.prom import Family, gauge

GPU_METRICS = (  # sample key, metric, help, scale to base units
    ("util", "dscluster_gpu_utilization_ratio", "GPU utilisation (NVML), 0..1", 0.01),
    ("mem_used", "dscluster_gpu_memory_used_bytes", "GPU memory in use (NVML)", 1.0),
    ("mem_total", "dscluster_gpu_memory_total_bytes", "GPU memory in total (NVML)", 1.0),
    ("power_w", "dscluster_gpu_power_watts", "GPU power draw (NVML)", 1.0),
    ("power_limit_w", "dscluster_gpu_power_limit_watts", "GPU enforced power limit (NVML)", 1.0),
    ("temp_c", "dscluster_gpu_temperature_celsius", "GPU temperature (NVML)", 1.0),
)


def _num(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def node_families(sample: Mapping | None, node: str) -> list[Family]:
    """The families of one sample (None: no sample yet: only `dscluster_node_up 0`)."""
    me = {"node": node}
    fams = [gauge("dscluster_node_up", "1 when the node agent has a fresh sample of this node", [(me, 1 if sample else 0)])]
    if not sample:
        return fams
    cpu, mem = sample.get("cpu") or {}, sample.get("memory") or {}
    pct = _num(cpu.get("percent"))
    fams += [
        gauge("dscluster_node_sample_timestamp_seconds", "when the sample was taken (Unix time)",
              [(me, _num(sample.get("time")))]),
        gauge("dscluster_node_cpu_utilization_ratio", "CPU busy share since the previous sample, 0..1",
              [(me, pct / 100.0 if pct is not None else None)]),
        gauge("dscluster_node_cpus", "CPUs online", [(me, _num(cpu.get("count")))]),
        gauge("dscluster_node_load1", "1-minute load average", [(me, _num(cpu.get("load1")))]),
        gauge("dscluster_node_memory_used_bytes", "memory in use (MemTotal - MemAvailable)", [(me, _num(mem.get("used")))]),
        gauge("dscluster_node_memory_total_bytes", "memory in total", [(me, _num(mem.get("total")))]),
        gauge("dscluster_node_gpus", "GPUs NVML sees on this node", [(me, len(sample.get("gpus") or []))]),
    ]
    gpus = [g for g in sample.get("gpus") or [] if isinstance(g, Mapping)]
    for key, name, help_, scale in GPU_METRICS:
        rows = []
        for g in gpus:
            value = _num(g.get(key))
            labels = {"node": node, "gpu": str(g.get("index", 0)), "model": str(g.get("name") or "")}
            rows.append((labels, value * scale if value is not None else None))
        if rows:
            fams.append(gauge(name, help_, rows))
    return fams
