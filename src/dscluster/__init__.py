"""dscluster: multi-node DeepSpeed training made real.

The notebook API (`dscluster.Cluster`, `dscluster.launch`) is imported lazily so that
`import dscluster` stays cheap inside every training rank.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
