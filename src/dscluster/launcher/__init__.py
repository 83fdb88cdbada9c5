"""Pure builders of the DeepSpeed runner command for one attempt of a run (plan.py), the runner flags it
takes as DeepSpeed writes them (runnerflags.py), the launcher backends (backends/: each one's own part, a
scheduler's commands included) and secret masking (redact.py).
Nothing here starts a process or writes a file; runs/ (the service) does, with what these build."""
