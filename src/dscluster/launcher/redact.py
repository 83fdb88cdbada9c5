"""Keep secrets out of run records, logs of commands and process command lines.

An environment variable whose NAME looks like a secret (token, password, key, credential...) is
never written to run.json, never shown by `--dry-run`, and never passed on a command line: launch
sends such values to the nodes through a 0600 file that the remote shell sources (see launch/plan.py).
"""

from __future__ import annotations

import re

_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|KEY|CREDENTIAL|AUTH|COOKIE|PRIVATE|SESSION|SIGNATURE|CERT)",
    re.IGNORECASE,
)
# Names that contain a secret-looking word but are well-known, harmless settings.
_HARMLESS = frozenset({"KEY_VALUE_STORE", "PYTHONHASHSEED", "TOKENIZERS_PARALLELISM", "HF_HUB_DISABLE_TOKEN_WARNING"})

REDACTED = "***"


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _HARMLESS:
        return False
    # "tokenizer", "max_tokens", "keep" are settings, not secrets.
    upper = re.sub(r"TOKENI[SZ]ER|TOKENS\b|_TOKENS_|KEEP", "", upper)
    return bool(_SECRET_NAME.search(upper))


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """A copy of env with every secret-named value replaced by ***."""
    return {k: (REDACTED if is_secret_name(k) else v) for k, v in env.items()}


def split_secrets(env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(plain, secret) halves of env."""
    plain = {k: v for k, v in env.items() if not is_secret_name(k)}
    secret = {k: v for k, v in env.items() if is_secret_name(k)}
    return plain, secret


_INLINE_SECRET = re.compile(r"(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)[A-Z0-9_]*)=(\S+)")


def redact_text(text: str) -> str:
    """Mask NAME=value pairs with secret-looking names inside free text (argv shown to users, logs)."""
    return _INLINE_SECRET.sub(lambda m: f"{m.group(1)}={REDACTED}", text)


def redact_argv(argv: list[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if arg.startswith("--") and is_secret_name(arg.lstrip("-").split("=", 1)[0]) and not arg.startswith("--deepspeed"):
            if "=" in arg:
                out.append(arg.split("=", 1)[0] + "=" + REDACTED)
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(redact_text(arg))
    return out
