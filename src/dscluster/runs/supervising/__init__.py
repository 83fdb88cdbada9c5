"""Supervising a run: the detached supervisor, its line to every node's watchdog, how it decides that an
attempt failed and why, how it restarts, stops and reaps."""
