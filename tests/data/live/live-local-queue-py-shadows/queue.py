"""A small job queue for the evaluation sweep: checkpoints to evaluate, one per line in a text file."""
from pathlib import Path


class JobQueue:
    def __init__(self, path):
        self.path = Path(path)

    def push(self, item):
        with self.path.open("a") as f:
            f.write(f"{item}\n")

    def pop_all(self):
        items = self.path.read_text().split() if self.path.exists() else []
        self.path.write_text("")
        return items
