"""Formats the metrics line each rank prints (written on the user's laptop, Python 3.12)."""


def format_metrics(step, metrics):
    return f"step {step:5d} | loss {metrics["loss"]:.4f} | lr {metrics["lr"]:.2e}"
