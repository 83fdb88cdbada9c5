"""Security policy for node images: the recipe's habits, caught in a Dockerfile before it is built.

`check_dockerfile(text)` parses a Dockerfile (continuations, comments, stages) and returns every
violation with its line and the fix: secrets in ENV/ARG, a final USER that is root (or none), sudo,
root or password SSH logins, host-key checking turned off, `CUDA_VISIBLE_DEVICES=all`, an image-wide
`NCCL_DEBUG=INFO`, a password set at build time, JupyterLab opened to all or given a token on its
command line. Used by the test suite on docker/Dockerfile, and usable on images derived from it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Instruction:
    line: int  # 1-based line where the instruction starts
    keyword: str  # upper-case: FROM, RUN, ENV, ...
    args: str  # continuation lines joined, comment lines inside them dropped


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"line {self.line}: [{self.rule}] {self.message} (fix: {self.fix})"


# Names that hold credentials (hadolint DL3064 and Docker's SecretsUsedInArgOrEnv use the same idea).
_SECRET_NAME = re.compile(r"pass(word|wd)?|pwd|token|secret|private|api_?key|client_?key|credential|access_?key"
                          r"|auth|cookie", re.I)
_ROOT_USERS = {"root", "0"}


def parse(text: str) -> list[Instruction]:
    """Split a Dockerfile into instructions. Handles `\\` continuations and comment lines inside them."""
    out: list[Instruction] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i].strip()
        start = i + 1
        i += 1
        if not raw or raw.startswith("#"):
            continue
        parts = [raw]
        while parts[-1].endswith("\\") and i < len(lines):
            parts[-1] = parts[-1][:-1]
            nxt = lines[i].strip()
            i += 1
            if nxt.startswith("#"):
                parts.append("\\")  # a comment inside a continuation is dropped; the continuation goes on
                continue
            parts.append(nxt)
        joined = " ".join(p.strip() for p in parts if p.strip()).strip()
        keyword, _, args = joined.partition(" ")
        out.append(Instruction(start, keyword.upper(), args.strip()))
    return out


def _key_values(instr: Instruction) -> list[tuple[str, str]]:
    """ENV/ARG pairs: `K=V K2="V 2"`, the legacy `ENV K V`, and `ARG K` without a default."""
    try:
        tokens = shlex.split(instr.args, posix=True)
    except ValueError:
        tokens = instr.args.split()
    if instr.keyword == "ENV" and tokens and "=" not in tokens[0]:
        return [(tokens[0], " ".join(tokens[1:]))]
    pairs = []
    for tok in tokens:
        key, _, value = tok.partition("=")
        pairs.append((key, value))
    return pairs


def _stages(instrs: list[Instruction]) -> list[list[Instruction]]:
    stages: list[list[Instruction]] = []
    for ins in instrs:
        if ins.keyword == "FROM" or not stages:
            stages.append([])
        stages[-1].append(ins)
    return stages


def _check_env_arg(ins: Instruction) -> list[Violation]:
    found = []
    for key, value in _key_values(ins):
        if _SECRET_NAME.search(key):
            found.append(Violation(ins.line, "secret-in-env", f"{ins.keyword} {key} looks like a credential; it "
                                   "stays in every layer and in `docker inspect`",
                                   "remove it; mount secrets at run time (a 0600 file) or use "
                                   "`RUN --mount=type=secret` at build time"))
        if key == "CUDA_VISIBLE_DEVICES" and value.strip().lower() == "all":
            found.append(Violation(ins.line, "cuda-visible-devices-all", "CUDA_VISIBLE_DEVICES=all hides every GPU "
                                   "(it takes indices; DeepSpeed sets it per rank)",
                                   "remove it; choose GPUs with `docker run --gpus` / NVIDIA_VISIBLE_DEVICES"))
        if key == "NCCL_DEBUG" and value.strip().upper() in {"INFO", "TRACE"}:
            found.append(Violation(ins.line, "nccl-debug", f"NCCL_DEBUG={value} floods every rank of every run",
                                   "remove it; turn it on per run when diagnosing"))
    return found


_TEXT_RULES: tuple[tuple[str, re.Pattern, str, str], ...] = (
    ("sudo", re.compile(r"(?<![\w.-])sudo(ers)?(?![\w-])|NOPASSWD", re.I),
     "sudo in the image gives the node user root", "remove sudo; do root work at build time"),
    ("root-login", re.compile(r"PermitRootLogin[\s=]+[\"']?(yes|without-password|prohibit-password)", re.I),
     "sshd allows root logins", "PermitRootLogin no, and log in as the non-root node user"),
    ("password-login", re.compile(r"PasswordAuthentication[\s=]+[\"']?yes", re.I),
     "sshd accepts passwords", "PasswordAuthentication no (keys only)"),
    ("host-key-checking-off", re.compile(r"StrictHostKeyChecking[\s=]+[\"']?no\b|UserKnownHostsFile[\s=]+/dev/null",
                                         re.I),
     "ssh host-key checking is turned off", "pin host keys in a per-cluster known_hosts with "
     "StrictHostKeyChecking yes, never in a global ssh_config"),
    ("build-time-password", re.compile(r"\bchpasswd\b|\bpasswd\s+(?!-l\b)[\w-]*\s*<|--password\b", re.I),
     "a password is set at build time", "no passwords: key-only SSH, token files for JupyterLab"),
    ("jupyter-token-on-command-line", re.compile(r"(ServerApp|NotebookApp|IdentityProvider)\.(token|password)\s*=",
                                                 re.I),
     "a JupyterLab token or password is baked into the image", "let dscluster generate one per start (a 0600 file)"),
    ("jupyter-open-to-all", re.compile(r"(ServerApp|NotebookApp)\.ip\s*=\s*[\"']?(0\.0\.0\.0|\*)|--ip[=\s][\"']?"
                                       r"(0\.0\.0\.0|\*)", re.I),
     "JupyterLab listens on every interface", "bind 127.0.0.1 and reach it with ssh -L"),
    ("cuda-visible-devices-all", re.compile(r"CUDA_VISIBLE_DEVICES\s*=\s*[\"']?all\b", re.I),
     "CUDA_VISIBLE_DEVICES=all hides every GPU", "remove it; use `docker run --gpus`"),
)


def _expand(value: str, stage: list[Instruction]) -> str:
    """Substitute ${NAME}/$NAME with the stage's ARG/ENV defaults (what a plain `docker build` uses)."""
    defaults: dict[str, str] = {}
    for ins in stage:
        if ins.keyword in ("ARG", "ENV"):
            defaults.update((k, v) for k, v in _key_values(ins) if v or k not in defaults)
    return re.sub(r"\$\{?(\w+)\}?", lambda m: defaults.get(m.group(1), m.group(0)), value)


def check_dockerfile(text: str) -> list[Violation]:
    """Every policy violation in a Dockerfile, in line order. An empty list means it passes."""
    instrs = parse(text)
    found: list[Violation] = []
    for ins in instrs:
        if ins.keyword in ("ENV", "ARG"):
            found += _check_env_arg(ins)
        if ins.keyword in ("RUN", "CMD", "ENTRYPOINT", "ENV", "ARG", "COPY", "ADD", "HEALTHCHECK", "LABEL"):
            body = ins.args if ins.keyword != "LABEL" else ""
            for rule, pattern, message, fix in _TEXT_RULES:
                if pattern.search(body) and not any(v.line == ins.line and v.rule == rule for v in found):
                    found.append(Violation(ins.line, rule, message, fix))
    stages = _stages(instrs)
    final = stages[-1] if stages else []
    users = [ins for ins in final if ins.keyword == "USER"]
    if not users:
        line = final[0].line if final else 1
        found.append(Violation(line, "root-user", "the final stage never sets USER, so it runs as root",
                               "add `USER <non-root user>` (fixed UID) before ENTRYPOINT"))
    else:
        last = users[-1]
        name = _expand(last.args, final).split(":")[0].strip().strip("\"'")
        if name in _ROOT_USERS:
            found.append(Violation(last.line, "root-user", f"the final USER is {last.args}",
                                   "end with `USER <non-root user>` (fixed UID)"))
    return sorted(found, key=lambda v: (v.line, v.rule))
