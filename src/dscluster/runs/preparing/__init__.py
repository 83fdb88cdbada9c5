"""Preparing a launch (a `records.request.RunRequest`): where it runs, the user's program as it starts,
the checks before anything starts anywhere, and the record they produce."""
