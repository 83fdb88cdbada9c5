"""A run's record and what it leaves on shared storage: what a launch asks for (`RunRequest`), run.json
(`RunRecord`, which keeps the request's supervision), the run store, who owns
a run, the verified record someone acts on, its metrics and TensorBoard events, what a Trainer's log says."""
