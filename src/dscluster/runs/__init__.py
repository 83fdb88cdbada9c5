"""Runs: the one service between the views (CLI, Python API, JupyterLab) and the machines.

service.py starts, restarts and stops runs (every view goes through it); prepare.py checks a launch and
builds its record (record.py: the typed RunRecord/LaunchSpec); start.py spawns the detached supervisor
(supervisor.py), which reaches the nodes through nodes.py; store.py finds, lists and reads run
directories on shared storage.
"""
