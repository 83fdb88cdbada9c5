"""Preparing a launch: what it asks for (`RunRequest`), where it runs, the user's program as it starts,
the checks before anything starts anywhere, and the record they produce."""
