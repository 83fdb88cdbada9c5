"""A run's record and what it leaves on shared storage: run.json (`RunRecord`), the run store, who owns
a run, the verified record someone acts on, its metrics and TensorBoard events, what a Trainer's log says."""
