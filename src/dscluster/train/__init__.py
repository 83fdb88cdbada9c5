"""The reference trainer: a GPT trained with DeepSpeed, run by the launcher inside every rank.

Imports nothing above itself (cli, runs, launch); the modules here are loaded lazily so that
the checkpoint protocol's rules (`dscluster.train.commits`, `dscluster.train.resumes`) can be used by
the CLI and the supervisor without importing torch.
"""
