"""A second, independent look at a node whose heartbeats paused: does its sshd still answer?

The watchdog's heartbeats (runs/supervising/channel.py) come over one long-lived ssh session; when they pause, the node
may be gone (partition, frozen, powered off) or only slow (a busy machine). A fresh TCP connection to the
node's ssh port that gets sshd's banner ("SSH-2.0-...") within PROBE_TIMEOUT says the node's kernel and
sshd run: the pause is not the node's loss. No banner (the link is cut: no connection; the node is frozen:
the kernel accepts the connection but sshd never writes) is the second signal that agrees with the silence.
A banner costs no authentication, no process on the controller and one short-lived sshd child on the node,
so probing 32 nodes at once is cheap.
"""

from __future__ import annotations

import socket
import threading
import time

PROBE_TIMEOUT = 2.0  # a loaded node's sshd still writes its banner well within this


def sshd_answers(address: str, port: int, timeout: float = PROBE_TIMEOUT) -> bool:
    """True when a TCP connection to address:port gets an SSH banner line within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            data = b""
            while b"\n" not in data and len(data) < 256:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                sock.settimeout(left)
                chunk = sock.recv(256)
                if not chunk:
                    return False
                data += chunk
            return data.startswith(b"SSH-")
    except OSError:
        return False


class Probe:
    """One node's probe, run in the background at most once per heartbeat pause (identified by the time of
    the heartbeat before it). `address` None: nothing to probe (a local run), never a failure."""

    def __init__(self, address: tuple[str, int] | None):
        self.address = address
        self._for: float | None = None  # the last heartbeat before the pause probed
        self._failed_for: float | None = None

    def start(self, last_hb: float) -> None:
        if self.address is None or self._for == last_hb:
            return
        self._for = last_hb
        threading.Thread(target=self._run, args=(last_hb,), name=f"probe-{self.address[0]}", daemon=True).start()

    def _run(self, last_hb: float) -> None:
        if not sshd_answers(*self.address):
            self._failed_for = last_hb

    def failed_since(self, last_hb: float | None) -> bool:
        """Whether the probe of the current pause (since heartbeat `last_hb`) found no sshd."""
        return last_hb is not None and self._failed_for == last_hb


def all_answer(addresses: list[tuple[str, int]], timeout: float = PROBE_TIMEOUT) -> list[int]:
    """The indices of the addresses whose sshd does NOT answer, probed in parallel."""
    results: dict[int, bool] = {}

    def one(i: int) -> None:
        results[i] = sshd_answers(*addresses[i], timeout=timeout)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(addresses))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 1.0)
    return [i for i in range(len(addresses)) if not results.get(i, False)]
