"""dscluster: multi-node DeepSpeed training made real.

The notebook API (`dscluster.Cluster`, `dscluster.launch`) is imported lazily so that
`import dscluster` stays cheap inside every training rank.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "log"]


def log(step: int | None = None, **values) -> bool:
    """`dscluster.log(step=step, loss=loss)`: a user's script's metrics, charted like the reference
    trainer's (panel, `Run.metrics()`, `status`, TensorBoard). Rank 0 inside a dscluster run only; a
    no-op anywhere else. See dscluster.runs.records.metrics.log."""
    from dscluster.runs.records.metrics import log as _log

    return _log(step, **values)

_NOTEBOOK_API = ("Cluster", "Run", "launch", "list_runs")


def __getattr__(name: str):
    # Lazy: the notebook API pulls in the run store and launcher, which training ranks never need.
    if name in _NOTEBOOK_API:
        from dscluster import api

        return getattr(api, name)
    raise AttributeError(f"module 'dscluster' has no attribute {name!r}")
