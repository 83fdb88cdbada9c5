"""Failure signatures: text found in a run's logs -> what went wrong and how to fix it.

`explain(text)` returns the most specific known signature (the table is ordered: root causes
before the symptoms they trigger on other ranks, e.g. a CUDA OOM before "NCCL remote process
exited"). The supervisor stores the result in run.json; `dscluster status` shows it.
`retry` says whether restarting can help: a missing module fails the same way every time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dscluster import fsutil
from dscluster.i18n import gettext, tr


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    retry: bool = True


def _sig(name: str, regex: str, cause: str, fix: str, retry: bool = True) -> Signature:
    return Signature(name, re.compile(regex, re.IGNORECASE | re.MULTILINE), cause, fix, retry)


# The program's own verdict on its input, as dscluster's entry points print a DsclusterError:
# "error: MESSAGE" then "  fix: HINT" (with "[rank N] " or pdsh's "node: " in front; the words may be
# the zh-TW ones). Case-sensitive on purpose: "ERROR:" lines of libraries are not this. Slurm's own
# parts write "srun: error: NODE: task N: ..." and "slurmstepd-NODE: error: *** STEP ... CANCELLED" about the
# ranks: symptoms, not the program's words.
_PROGRAM_ERROR = re.compile(r"^(?!(?:srun|salloc|sbatch|slurmstepd)[\w.-]*: )(?:[\w.@-]+: )?(?:\[rank \d+\] )?(?:error|錯誤): (?P<msg>\S.*)$"
                            r"(?:\n(?:[\w.@-]+: )?(?:\[rank \d+\] )?\s+(?:fix|解法): (?P<fix>.+)$)?", re.MULTILINE)
# Exit codes of a DsclusterError that the same input reproduces: usage, config/data, permission.
DETERMINISTIC_EXIT_CODES = frozenset({2, 3, 6})

# Ordered: first match wins. Root causes come before the symptoms they cause on other ranks.
SIGNATURES: tuple[Signature, ...] = (
    Signature("program-error", _PROGRAM_ERROR,
              "The program rejected its input (its own error message is above).",
              "Fix the setting the message names, then launch again: a restart would fail the same way.",
              retry=False),
    _sig("input-error-exit", r"exits with return code = (?:2|3|6)\b|exited with exit code (?:2|3|6)\b",
         "A rank exited with a config/data (3), usage (2) or permission (6) error code: the same input fails "
         "the same way again.",
         "Read the first failing rank's log (`dscluster logs RUN --rank R`), fix the input, launch again.",
         retry=False),
    _sig("ssh-publickey", r"Permission denied \(publickey",
         "A node refused the cluster's SSH key.",
         "Install the cluster key on every node (`dscluster node start` does it), then run `dscluster doctor`.",
         retry=False),
    _sig("ssh-host-key", r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED",
         "A node's SSH host key is not in the cluster's pinned known_hosts (new or reinstalled node).",
         "Re-publish the node's host key (`dscluster node start` on it), then `dscluster doctor`; "
         "never turn StrictHostKeyChecking off.", retry=False),
    _sig("cuda-arch-list", r"TORCH_CUDA_ARCH_LIST|invalid literal for int\(\) with base 10: '\d+a'",
         "TORCH_CUDA_ARCH_LIST contains an arch with a suffix (e.g. '9.0a') that this DeepSpeed op builder "
         "cannot parse.", "Set TORCH_CUDA_ARCH_LIST without the suffix (e.g. --env TORCH_CUDA_ARCH_LIST=9.0) "
         "or unset it.", retry=False),
    _sig("module-not-found", r"ModuleNotFoundError: No module named '?([\w.]+)'?",
         "A rank could not import a Python module: it is not installed on that node's python, or the "
         "code directory is not on shared storage.",
         "Install it in the node image / venv on every node (same path everywhere), or launch from a "
         "directory on shared storage.", retry=False),
    _sig("script-not-found", r"can't open file '([^']+)'|No such file or directory: '([^']+\.py)'",
         "A node could not find the training script at the same path.",
         "Put the script on shared storage so every node sees the same path.", retry=False),
    _sig("version-mismatch",
         r"version mismatch|installed version .* does not match|torch version .* != |"
         r"deepspeed version .* does not match|undefined symbol: .*(torch|c10)",
         "Nodes run different torch / DeepSpeed / CUDA versions (or an op was built for another version).",
         "Use the same node image everywhere; `dscluster doctor` compares versions across nodes.",
         retry=False),
    _sig("cuda-oom", r"CUDA out of memory|torch\.OutOfMemoryError|OutOfMemoryError: CUDA",
         "A GPU ran out of memory.",
         "Lower train_micro_batch_size_per_gpu (raise gradient_accumulation_steps to keep the global batch), "
         "use a higher ZeRO stage, enable activation checkpointing, or a shorter sequence.", retry=False),
    _sig("dev-shm-full", r"No space left on device.*(/dev/shm|shm)|/dev/shm.*No space left|Bus error|"
         r"unable to write to file </torch_|DataLoader worker .* is killed by signal: Bus error",
         "/dev/shm is too small or full (NCCL and DataLoader workers use shared memory).",
         "Start the node container with a larger --shm-size (e.g. 16g) or --ipc=host, and remove stale "
         "/dev/shm/deepspeed_* files.", retry=False),
    _sig("stale-extension-lock", r"torch_extensions.*lock|Waiting for lock on .*torch_extensions|"
         r"stale lock file",
         "A DeepSpeed JIT op build was killed mid-compile and left a lock file; every later job waits on it.",
         "Remove the `lock` file under ~/.cache/torch_extensions/<py>/<op>/ (or TORCH_EXTENSIONS_DIR) and "
         "launch again.", retry=False),
    _sig("aborted", r"exits with return code = -6\b|terminate called (?:after throwing|without an active exception)|"
         r"\bAborted \(core dumped\)|\bSIGABRT\b",
         "A rank aborted (SIGABRT) in native code: an uncaught C++ exception or a failed assertion in torch, "
         "NCCL/gloo or an extension. \"terminate called without an active exception\" as a rank exits means "
         "it ended with a communication thread still running.",
         "Read that rank's last lines (`dscluster logs RUN --rank R`). If it aborted while exiting after "
         "training finished, call torch.distributed.destroy_process_group() before the script ends."),
    _sig("segfault", r"exits with return code = -11\b|Segmentation fault|\bSIGSEGV\b",
         "A rank crashed in native code (segmentation fault): often mismatched builds of torch, DeepSpeed "
         "ops or CUDA libraries on that node, or a bug in an extension.",
         "Compare versions across nodes (`dscluster doctor`), rebuild the DeepSpeed ops on that node "
         "(clear ~/.cache/torch_extensions), and read its log: `dscluster logs RUN --rank R`."),
    _sig("address-in-use", r"Address already in use|EADDRINUSE|errno: 98",
         "The rendezvous port (--master_port) on the first node was already taken, often by a leftover "
         "process of an earlier run.", "dscluster picks a fresh port per attempt; if it persists, find the "
         "process holding the port on the first node (`ss -ltnp`) and stop that run."),
    _sig("tcpstore-timeout", r"TCPStore|DistStoreError|Timed out after \d+ seconds waiting for clients|"
         r"timed out .* (rendezvous|store)|Socket Timeout",
         "Ranks could not reach rank 0's rendezvous store: wrong --master_addr, a firewall between nodes, "
         "or a rank that never started.",
         "Check that the first hostfile host is reachable from every node on the master port "
         "(`dscluster doctor`), and set network_interface in the cluster spec."),
    _sig("ssh-255", r"ssh exited with exit code 255|Connection to \S+ closed by remote host|"
         r"ssh: connect to host .*(refused|timed out|No route)|Could not resolve hostname",
         "The SSH connection to a node failed or dropped (node down, sshd not running, network).",
         "Check the node with `dscluster doctor`; `dscluster node start` restarts its sshd."),
    _sig("nccl-remote-exit", r"NCCL.*remote process exited|remote process exited or there was a network error|"
         r"ncclRemoteError|NCCL error.*unhandled system error",
         "Another rank died (or its network failed) during a collective; the real error is on that rank.",
         "Look at the first failing rank's log: `dscluster logs RUN --rank R`."),
    _sig("gloo-peer-closed", r"Connection closed by peer|Connection reset by peer|Broken pipe|"
         r"\[gloo\].*(Read error|Connection refused)",
         "A peer rank went away during a collective (it crashed or was killed); this rank failed with it.",
         "Look at the first failing rank's log: `dscluster logs RUN --rank R`."),
    # Word boundaries: DeepSpeed's launch.py logs every teardown from its "sigkill_handler", which is not a kill.
    _sig("killed", r"exits with return code = -9\b|\bKilled\b|\bsignal 9\b|\bSIGKILL\b",
         "A rank was killed (SIGKILL): often the kernel's OOM killer (host RAM), or an operator.",
         "Check host memory (`dmesg | grep -i oom` on the node); lower the batch size or the number of "
         "DataLoader workers."),
    _sig("python-error", r"^Traceback \(most recent call last\):",
         "A rank raised a Python exception.",
         "Read the traceback: `dscluster logs RUN` (the first rank that failed is listed in `status`)."),
)


@dataclass(frozen=True)
class Explanation:
    signature: str
    cause: str
    fix: str
    retry: bool
    evidence: str
    params: dict = field(default_factory=dict)  # values for {placeholders} in cause and fix

    def to_dict(self) -> dict:
        """For run.json: English with the values filled in, like every record. An explanation built from
        a template also keeps the templates and values, so readers show it in their language (`localized`)."""
        d = asdict(self)
        params = d.pop("params")
        if params:
            d.update(cause=self.cause.format(**params), fix=self.fix.format(**params),
                     templates={"cause": self.cause, "fix": self.fix}, params=params)
        return d


def localized(recorded: dict) -> tuple[str, str]:
    """(cause, fix) of a recorded explanation in the reader's language."""
    templates = recorded.get("templates") or {}
    params = {k: str(v) for k, v in (recorded.get("params") or {}).items()}
    if templates and params:
        return tr(templates.get("cause") or "", **params), tr(templates.get("fix") or "", **params)
    # Text recorded filled in (no templates) is looked up as it is, never formatted again.
    return gettext(recorded.get("cause") or ""), gettext(recorded.get("fix") or "")


def explain(text: str) -> Explanation | None:
    """The most specific known signature in `text`, with the matching line as evidence."""
    for sig in SIGNATURES:
        match = sig.pattern.search(text)
        if match and sig.name == "program-error":
            # The program's own words are the explanation: the message and its fix line.
            msg, fix = match.group("msg").strip(), (match.group("fix") or "").strip()
            return Explanation(sig.name, msg[:300], fix[:300] or sig.fix, False, match.group(0).strip()[:300])
        if match:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            line = text[start:end if end >= 0 else len(text)].strip()
            return Explanation(sig.name, sig.cause, sig.fix, sig.retry, line[:300])
    return None


def explain_files(paths: Iterable[Path], tail_bytes: int = 64_000,
                  upto: dict[Path, int] | None = None, since: dict[Path, int] | None = None) -> Explanation | None:
    """Explain the tails of several log files: the most specific signature found in any of them wins
    (ties: the earlier file). `upto` caps a file at a byte offset, e.g. where it stood when the failure
    was detected, so the teardown's own noise (SIGTERM/SIGKILL messages) is never taken for the cause;
    `since` starts a file at one, e.g. where it stood when this attempt began, so an earlier attempt's
    ending is never taken for this one's."""
    best: tuple[int, Explanation] | None = None
    order = {s.name: i for i, s in enumerate(SIGNATURES)}
    for path in paths:
        try:
            # Rank logs are the node user's files: opened by fsutil's no-symlink rule (evidence lands in run.json).
            with os.fdopen(fsutil.open_file(path), "rb") as f:
                f.seek(0, 2)
                end = f.tell() if upto is None or path not in upto else min(f.tell(), upto[path])
                start = max(0, end - tail_bytes, (since or {}).get(path, 0))
                f.seek(start)
                text = f.read(max(0, end - start)).decode("utf-8", "replace")
        except OSError:
            continue
        found = explain(text)
        if found and (best is None or order[found.signature] < best[0]):
            best = (order[found.signature], found)
    return best[1] if best else None


GENERIC = frozenset({"gloo-peer-closed", "killed", "python-error", "ssh-255"})  # symptoms more than causes


def custom(signature: str, cause: str, fix: str, evidence: str = "", retry: bool = True, **params) -> Explanation:
    """An explanation the supervisor derives itself (node lost, stall), not from log text. `cause` and `fix`
    are catalog templates; `params` fill their {placeholders} when shown (so they translate)."""
    return Explanation(signature, cause, fix, retry, evidence, dict(params))
