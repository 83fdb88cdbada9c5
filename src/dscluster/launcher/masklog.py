"""Secret values never reach a log: a streaming mask, and the rank wrapper that applies it.

The values of `--env` secrets (launcher/redact.py decides which names are secrets) are kept out of
run.json, argv and the dry run by construction. The user's program can still print one (a debug print
of os.environ, a library echoing its config): then the value would stand in every rank's log, in
`dscluster logs` and in the panel. As CI systems do, every secret value is replaced by `***` on its way
into any file dscluster writes:

- each rank's output: when a run has secrets, the ranks run `python -m dscluster.launcher.masklog
  [--local_rank=N] KIND PROGRAM ARGS...` (DeepSpeed's launch.py puts --local_rank first), which starts the
  program (`python -u PROGRAM --local_rank=N ARGS...`) with its stdout and stderr through a pipe, masks
  them, and writes to its own (DeepSpeed's per-rank log); signals go on to the program, and it ends with
  the program's exit code or signal;
- the launcher log: the supervisor copies the runner's output through the same mask (supervisor.py).

The mask is a streaming filter: a value split across two writes (or two reads of the pipe) is still
masked, because the last bytes of a read that could be the start of a secret are held back until the
next read shows whether they are (at most the length of the longest secret less one). Values shorter
than MIN_SECRET characters are not masked (masking "1" would mask every digit). Stdlib only: it runs on
every node.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping

SECRET_NAMES_VAR = "DSCLUSTER_SECRET_NAMES"  # the names only (comma-separated); the values are in the env
MASK = b"***"
MIN_SECRET = 4
MODULE = "dscluster.launcher.masklog"


class SecretMask:
    """feed(bytes) -> the bytes that are safe to write now; flush() -> the rest at the end."""

    def __init__(self, secrets: Iterable[str | bytes]):
        values = {s.encode() if isinstance(s, str) else bytes(s) for s in secrets}
        self.secrets = sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True)
        self.hold = max((len(v) for v in self.secrets), default=1) - 1
        self.pattern = re.compile(b"|".join(re.escape(v) for v in self.secrets)) if self.secrets else None
        self.carry = b""

    def __bool__(self) -> bool:
        return self.pattern is not None

    def _partial_at(self, data: bytes, start: int) -> bool:
        tail = data[start:]
        return any(len(v) > len(tail) and v.startswith(tail) for v in self.secrets)

    def feed(self, chunk: bytes) -> bytes:
        if self.pattern is None:
            return chunk
        data = self.carry + chunk
        spans = [m.span() for m in self.pattern.finditer(data)]
        cut = len(data)
        for j in range(max(0, len(data) - self.hold), len(data)):
            if not any(a < j < b for a, b in spans) and self._partial_at(data, j):
                cut = j
                break
        out, pos = [], 0
        for a, b in spans:
            if b > cut:
                break
            out += [data[pos:a], MASK]
            pos = b
        out.append(data[pos:cut])
        self.carry = data[cut:]
        return b"".join(out)

    def flush(self) -> bytes:
        rest, self.carry = self.carry, b""
        if self.pattern is None:
            return rest
        return self.pattern.sub(MASK, rest)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """A whole text with every secret value masked (for text that is complete, not streamed)."""
    mask = SecretMask(secrets)
    return (mask.feed(text.encode()) + mask.flush()).decode("utf-8", "replace") if mask else text


def copy_masked(src_fd: int, write, secrets: Iterable[str], chunk: int = 65536) -> None:
    """Read src_fd until EOF, writing what it carries with every secret masked (`write(bytes)`)."""
    mask = SecretMask(secrets)
    while True:
        try:
            data = os.read(src_fd, chunk)
        except InterruptedError:
            continue
        if not data:
            break
        out = mask.feed(data)
        if out:
            write(out)
    rest = mask.flush()
    if rest:
        write(rest)


def secrets_from_env(env: Mapping[str, str]) -> list[str]:
    """The values of the secrets named in SECRET_NAMES_VAR, as this process's environment has them."""
    names = [n for n in env.get(SECRET_NAMES_VAR, "").split(",") if n]
    return [env[n] for n in names if env.get(n)]


def wrapped_target(is_module: bool, program: str, args: Iterable[str]) -> tuple[str, list[str]]:
    """(module, args) that run `program` through this wrapper (launch/plan.py passes them as the target)."""
    return MODULE, ["module" if is_module else "script", program, *args]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except InterruptedError:
            continue
        except OSError:
            return  # the log went away (a full disk, a closed pipe): never stop the program over it


def _pdeathsig() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    local_rank = [argv.pop(0)] if argv and argv[0].startswith("--local_rank") else []
    if len(argv) < 2 or argv[0] not in ("module", "script"):
        print("usage: python -m dscluster.launcher.masklog [--local_rank=N] module|script PROGRAM [ARGS...]",
              file=sys.stderr)
        return 2
    kind, program, rest = argv[0], argv[1], argv[2:]
    cmd = [sys.executable, "-u", *(["-m"] if kind == "module" else []), program, *local_rank, *rest]
    secrets = secrets_from_env(os.environ)
    read_fd, write_fd = os.pipe()
    child = subprocess.Popen(cmd, stdout=write_fd, stderr=write_fd, preexec_fn=_pdeathsig)
    os.close(write_fd)

    def forward(signum, _frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    out = sys.stdout.fileno()
    copy_masked(read_fd, lambda data: _write_all(out, data), secrets)
    code = child.wait()
    if code < 0:  # die by the same signal, so DeepSpeed's launch.py and the supervisor see what the rank saw
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL, SIGSTOP: no handler to reset
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
