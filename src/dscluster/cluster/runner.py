"""One small interface between dscluster and the machines it drives.

Pure functions elsewhere build `argv` (a list, never a shell string) and `env`; a Runner executes
them. `LocalRunner` runs on this machine; `SSHRunner` (cluster/ssh.py) runs on a node through the
system OpenSSH client with the cluster's generated ssh_config. `run_parallel` is the one
order-preserving fan-out used for every multi-node operation.

Every call has a deadline: a node that does not answer must never hang the caller.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

from dscluster.errors import CommandError

DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class CommandResult:
    """What a command did on one node. `returncode` is None when it hit its deadline."""

    node: str
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def check(self) -> CommandResult:
        """Return self, or raise CommandError naming the node, the command and the stderr tail."""
        if self.ok:
            return self
        what = "timed out" if self.timed_out else f"exited with {self.returncode}"
        tail = self.stderr.strip().splitlines()[-5:]
        raise CommandError(
            f"{self.node}: `{' '.join(self.argv)}` {what}" + (f": {' | '.join(tail)}" if tail else ""),
            node=self.node, argv=list(self.argv), returncode=self.returncode, stderr=self.stderr,
        )


class Runner(Protocol):
    """Executes argv on one node."""

    node: str

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = DEFAULT_TIMEOUT_S, cwd: str | None = None) -> CommandResult: ...

    def copy(self, local_path: str, remote_path: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult: ...

    def popen(self, argv: Sequence[str], **popen_kwargs) -> subprocess.Popen: ...


def run_subprocess(node: str, argv: Sequence[str], *, env: dict[str, str] | None = None, input: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT_S, cwd: str | None = None,
                   display_argv: Sequence[str] | None = None) -> CommandResult:
    """Run argv with a deadline; on timeout the whole process group is killed, not just the child."""
    full_env = None if env is None else {**os.environ, **env}
    shown = tuple(display_argv if display_argv is not None else argv)
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, cwd=cwd,
                                text=True, start_new_session=True)
    except FileNotFoundError as err:
        return CommandResult(node, shown, 127, "", f"{argv[0]}: not found ({err})")
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
        return CommandResult(node, shown, proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return CommandResult(node, shown, None, out or "", err or "", timed_out=True)


@dataclass
class LocalRunner:
    """Runs commands on this machine."""

    node: str = "localhost"

    def run(self, argv, *, env=None, input=None, timeout=DEFAULT_TIMEOUT_S, cwd=None) -> CommandResult:
        return run_subprocess(self.node, argv, env=env, input=input, timeout=timeout, cwd=cwd)

    def copy(self, local_path, remote_path, *, timeout=DEFAULT_TIMEOUT_S) -> CommandResult:
        shutil.copyfile(local_path, remote_path)
        return CommandResult(self.node, ("cp", local_path, remote_path), 0)

    def popen(self, argv, **popen_kwargs) -> subprocess.Popen:
        return subprocess.Popen(list(argv), **popen_kwargs)


T = TypeVar("T")
R = TypeVar("R")


def run_parallel(fn: Callable[[T], R], items: Iterable[T], *, max_workers: int = 64) -> list[R]:
    """Apply fn to every item concurrently; results come back in the items' order.

    Threads, not processes: the work is waiting on ssh/subprocesses. An exception in one item is
    re-raised here after all items finish, so no node's work is abandoned half-way.
    """
    items = list(items)
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(max_workers, len(items))) as pool:
        futures = [pool.submit(fn, item) for item in items]
        return [f.result() for f in futures]
