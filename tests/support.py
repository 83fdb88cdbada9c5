"""Helpers every test directory shares (tests/ is on sys.path: its conftest.py lives there).

One copy of each: import them (`from support import free_port`), never paste them into a test file."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's pick; bind it soon, another process may take it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
