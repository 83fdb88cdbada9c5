"""metrics.jsonl (what the CLI, the API and the JupyterLab panel read), TensorBoard, and MFU.

Only rank 0 writes. Each line is appended with a single write, so readers tailing the file never
see half a record. MFU = achieved model FLOP/s per GPU / the GPU's dense bf16 peak.
"""

from __future__ import annotations

import time
from pathlib import Path

from dscluster.fsutil import append_jsonl

# Dense (no sparsity) bf16 peak FLOP/s by GPU name substring; first match wins, so specific names
# come before general ones (perf_anchors.md §0/§2).
GPU_PEAK_BF16: tuple[tuple[str, float], ...] = (
    ("H200 NVL", 835e12), ("H100 NVL", 835e12), ("H100 PCIe", 756e12),
    ("GH200", 989e12), ("H200", 989e12), ("H100", 989e12), ("H800", 989e12), ("H20", 148e12),
    ("B200", 2250e12), ("B100", 1750e12),
    ("A100", 312e12), ("A800", 312e12), ("A10G", 70e12), ("A10", 125e12), ("A30", 165e12),
    ("L40S", 362e12), ("L40", 181e12), ("L4", 121e12), ("A6000", 155e12),
    ("RTX 4090", 165e12), ("RTX 3090", 71e12), ("V100", 125e12), ("T4", 65e12),
)


def peak_flops(device_name: str) -> float | None:
    for key, peak in GPU_PEAK_BF16:
        if key.lower() in device_name.lower():
            return peak
    return None


class MetricsWriter:
    def __init__(self, run_dir: Path, enabled: bool, tensorboard: bool = True):
        self.enabled = enabled
        self.path = Path(run_dir) / "metrics.jsonl"
        self.start = time.time()
        self._tb = None
        if enabled:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if tensorboard:
                try:
                    from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415 - optional

                    self._tb = SummaryWriter(log_dir=str(Path(run_dir) / "tensorboard"))
                except Exception:  # noqa: BLE001 - tensorboard missing or broken: metrics.jsonl is enough
                    self._tb = None

    def write(self, record: dict) -> None:
        if not self.enabled:
            return
        now = time.time()
        record = {**record, "time": round(now, 3), "elapsed_s": round(now - self.start, 3)}
        append_jsonl(self.path, record)
        if self._tb is not None and "step" in record:
            for key, value in record.items():
                if key not in ("step", "time") and isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._tb.add_scalar(f"train/{key}" if key != "val_loss" else "val/loss", value, record["step"])
            self._tb.flush()

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
