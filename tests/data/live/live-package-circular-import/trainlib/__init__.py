"""The project's training library: the model and the helpers every script uses."""
from .model import TinyMLP  # noqa: I001
from .utils import seed_all, count_params

__all__ = ["TinyMLP", "seed_all", "count_params"]
