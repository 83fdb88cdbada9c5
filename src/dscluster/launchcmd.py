"""The command line a launcher printed, read for causes that sit in it rather than in any error.

DeepSpeed's runner logs `cmd = ... -m deepspeed.launcher.launch --world_info=... SCRIPT ARGS` and its launch.py
`process N spawned with command: ['python', '-u', SCRIPT, '--local_rank=N', ARGS]` on every node. Three causes
are read there (`read(text, error_text)`):
- a `\\r` in an argument: the launch script was saved with Windows line ends (CRLF), so its last argument ends
  in a carriage return (`ds_config.json\\r` is not found; bash says `$'\\r': command not found`);
- `--local_rank=N` before the script's own positional argument: launch.py puts it right after the script, so
  a script reading sys.argv[1] (or Hugging Face's `sys.argv[1].endswith(".json")`) reads `--local_rank=N`;
- a DeepSpeed config file that is not JSON (--deepspeed_config x.yaml): DeepSpeed reads it as JSON.
Each is said only where the failure fits it (explain.explain_logs; precedence in explain.py's docstring).
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

from dscluster.logtext import LINE_LIMIT

_SPAWNED = "spawned with command: ["
_RUNNER = re.compile(r"\bcmd = (?P<cmd>.*)")
# bash's word for a CR ending a command word, and env's (raw CR) for an interpreter named with one.
_SHELL_CR = re.compile("\\$'\\\\r': command not found|/usr/bin/env: '[^'\\n]{1,80}\\r'")
_CONFIG_OPTS = ("--deepspeed_config", "--deepspeed")
_CONFIG_ERRORS = re.compile(r"JSONDecodeError|Expecting (?:value|property name)|hjson|Extra data|"
                            r"DeepSpeedConfigError|Expected a string path to an existing deepspeed config")


@dataclass(frozen=True)
class Finding:
    signature: str
    cause: str  # a catalog template with {placeholders}
    fix: str
    evidence: str
    params: dict


def finding(name: str, cause: str, fix: str, evidence: str, **params: str) -> Finding:
    return Finding(name, cause, fix, evidence[:300], params)


def _crlf(evidence: str, arg: str) -> Finding:
    return finding("crlf-script", "The launch command has a carriage return (\\r) in an argument ({arg}): the script "
                   "that runs it was saved with Windows line ends (CRLF).", "Convert the launch script to Unix line "
                   "ends (dos2unix run.sh, or sed -i 's/\\r$//' run.sh), then launch again: a restart fails the same "
                   "way.", evidence, arg=arg)


def commands(text: str) -> list[tuple[str, list[str], bool]]:
    """(the line, the script's arguments with the script first, whether the line itself holds a raw CR inside it)
    of every command line a launcher printed. Lines are cut at newlines only (a CR inside one is what is
    looked for) and to LINE_LIMIT."""
    found = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        line = line[:LINE_LIMIT]
        at = line.find(_SPAWNED)
        if at >= 0:
            try:
                argv = ast.literal_eval(line[at + len(_SPAWNED) - 1:line.rfind("]") + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            args = [a for a in argv if isinstance(a, str)]
            k = next((j for j, a in enumerate(args[1:], 1) if not a.startswith("-")), None)
            if k is not None:
                found.append((line, args[k:], False))
            continue
        m = _RUNNER.search(line)
        if m and "deepspeed.launcher.launch" in line:
            after = lines[i + 1] if i + 1 < len(lines) else ""
            raw_cr = "\r" in line.rstrip("\r") or (line.endswith("\r") and not after.endswith("\r"))
            try:
                argv = shlex.split(m.group("cmd").split("deepspeed.launcher.launch", 1)[1].replace("\r", "\\r"))
            except ValueError:
                continue
            k = next((j for j, a in enumerate(argv) if not a.startswith("-")), None)
            if k is not None:
                found.append((line, argv[k:], raw_cr))
    return found


def _config_arg(args: list[str]) -> str | None:
    for j, a in enumerate(args):
        for opt in _CONFIG_OPTS:
            if a == opt and j + 1 < len(args):
                return args[j + 1]
            if a.startswith(opt + "="):
                return a.split("=", 1)[1]
    return None


def read(text: str, error_text: str) -> Finding | None:
    """The cause the printed command line shows, where the failure (`error_text`: the first failing rank's
    own error, or the log's error lines) fits it."""
    shell = _SHELL_CR.search(text)
    for line, args, raw_cr in commands(text):
        crs = [a for a in args if "\r" in a] or ([a for a in args if "\\r" in a] if raw_cr else [])
        if crs or raw_cr or shell:
            arg = (crs[0] if crs else args[-1]).replace("\r", "\\r")
            return _crlf(line.strip(), arg)
        if len(args) > 2 and args[1].startswith("--local_rank") and not args[2].startswith("-") and (
                "local_rank" in error_text or re.search(r"usage|required|No such file", error_text)):
            return finding("local-rank-positional", "DeepSpeed's launcher put {flag} before the script's own "
                           "argument {arg}: the script reads its first argument and gets {flag} instead.",
                           "Read the argument by name (argparse accepts --local_rank anywhere; for Hugging Face: "
                           "--config {arg} or parse_json_file on the path you find), or launch with --no_local_rank "
                           "(the rank is in the LOCAL_RANK environment variable).", line.strip(),
                           flag=args[1], arg=args[2])
        config = _config_arg(args[1:])
        if config and not config.lower().endswith((".json", ".hjson")) and _CONFIG_ERRORS.search(error_text):
            return finding("ds-config-not-json", "The DeepSpeed config {path} is not a JSON file; DeepSpeed reads "
                           "its config as JSON.", "Write the config as JSON (ds_config.json), or load the YAML "
                           "yourself and pass the dict (deepspeed.initialize(config=...)).", line.strip(), path=config)
    if shell:
        said = shell.group(0).replace("\r", "\\r")
        return _crlf(said, said)
    return None
