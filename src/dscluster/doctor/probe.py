"""Doctor's side of the probe: build the one remote command per node, run it, parse it.

`probe_argv` is pure: `sh -c BOOT sh PYTHON PARAMS` where BOOT runs PYTHON (the interpreter the
launcher will use, the same absolute path on every node) or, if that path is missing on the node,
any `python3`, so the node still reports its facts and the python check can say what is wrong.
The probe source goes on stdin, so nothing long or secret is on the command line.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dscluster.cluster.runner import CommandResult, Runner

MARKER = "DSCLUSTER-PROBE "
def boot_script(python_flags: str = "") -> str:
    """`sh -c` text: run "$1" (the expected interpreter) or any python3, reading the program on stdin."""
    return ('P="$1"; shift; [ -x "$P" ] || P=$(command -v python3) || '
            '{ echo "dscluster-doctor: no python3 on this node" >&2; exit 97; }; exec "$P" %s - "$@"' % python_flags)


# The probe runs with -S (no site start-up: ~25 ms less CPU per node); it rebuilds the path itself.
BOOT = boot_script("-S")


@dataclass(frozen=True)
class ProbeParams:
    node: str
    is_master: bool
    expected_python: str
    nodes: tuple[dict, ...]  # {"name", "address", "ssh_port"} for every node, master first
    peers: tuple[str, ...]  # every node name except the master's
    master_address: str
    master_port: int
    shared_dir: str
    token: str
    wait_s: float
    launcher: str
    tools: tuple[str, ...] = ()  # programs the launcher backend's check reads (Backend.node_tools)

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "nodes": list(self.nodes), "peers": list(self.peers),
                           "tools": list(self.tools)})


@dataclass(frozen=True)
class ProbeOutcome:
    """A node's facts (None when the probe did not run) plus when doctor sent/received it."""

    node: str
    facts: dict[str, Any] | None
    result: CommandResult
    sent: float
    received: float


def probe_source() -> str:
    """The probe program: the facts half, then the rendezvous half with main()."""
    folder = resources.files("dscluster.doctor")
    return "\n\n".join((folder / name).read_text(encoding="utf-8") for name in ("probe_facts.py", "probe_script.py"))


def probe_argv(python: str, params: ProbeParams) -> list[str]:
    return ["sh", "-c", BOOT, "sh", python, params.to_json()]


def parse_probe_output(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                return json.loads(line[len(MARKER):])
            except json.JSONDecodeError:
                return None
    return None


def run_probe(runner: Runner, python: str, params: ProbeParams, *, timeout: float) -> ProbeOutcome:
    sent = time.time()
    result = runner.run(probe_argv(python, params), input=probe_source(), timeout=timeout)
    received = time.time()
    facts = parse_probe_output(result.stdout) if result.returncode == 0 else None
    return ProbeOutcome(params.node, facts, result, sent, received)


# --- why a node could not be probed -------------------------------------------------------------

@dataclass(frozen=True)
class SshFailure:
    kind: str  # refused | timeout | unreachable | hostkey-changed | hostkey-unknown | auth | dns | probe | other
    detail: str


_PATTERNS: tuple[tuple[str, str], ...] = (
    ("hostkey-changed", r"REMOTE HOST IDENTIFICATION HAS CHANGED"),
    ("hostkey-unknown", r"Host key verification failed|No [A-Za-z0-9-]+ host key is known"),
    ("auth", r"Permission denied \(|Too many authentication failures"),
    ("dns", r"Could not resolve hostname"),
    ("refused", r"Connection refused"),
    ("timeout", r"Connection timed out|Operation timed out|timed out during banner exchange"),
    ("unreachable", r"No route to host|Network is unreachable|Host is unreachable"),
    ("closed", r"Connection closed by|Connection reset by|kex_exchange_identification"),
)


def classify_failure(result: CommandResult) -> SshFailure:
    """Turn a failed probe's CommandResult into why it failed (ssh prints its reason on stderr)."""
    text = result.stderr or ""
    last = _last_meaningful_line(text)
    for kind, pattern in _PATTERNS:
        if re.search(pattern, text):
            return SshFailure(kind, last)
    if result.timed_out:
        return SshFailure("timeout", last or "no answer before the deadline")
    if result.returncode == 255:
        return SshFailure("other", last or "ssh exited with 255")
    return SshFailure("probe", last or f"the probe exited with {result.returncode}")


def _last_meaningful_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not set(ln.strip()) <= {"@"}]
    return lines[-1][:240] if lines else ""
