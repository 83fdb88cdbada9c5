"""Pure builders of the DeepSpeed runner command for one attempt of a run (plan.py), the runner flags it
takes as DeepSpeed writes them (runnerflags.py), Slurm's commands (slurm.py) and secret masking (redact.py).
Nothing here starts a process or writes a file; runs/ (the service) does, with what these build."""
