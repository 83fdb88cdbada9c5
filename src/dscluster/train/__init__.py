"""The reference trainer: a GPT trained with DeepSpeed, run by the launcher inside every rank.

Imports nothing above itself (cli, runs, launch); the modules here are loaded lazily so that
`dscluster.train.checkpoint` can be used by the CLI without importing torch.
"""
