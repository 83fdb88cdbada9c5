"""What a rank's own error says of its cause, where no signature knows it: the kind of refusal its message states.

A library that refuses its input says why in words of a few kinds, whatever the library: something is not supported
(`Dynamo is not supported on Python 3.12+`, `"LayerNormKernelImpl" not implemented for 'Half'`, a GPU `too old to be
supported`), two settings cannot go together (`You passed both a ref_model and a peft_config`, `is not compatible
with`), a value it does not accept (`Unknown model type`, `must be one of`), something it needs is not there (`Failed to find C compiler`, `please install`), a condition it requires does
not hold (`requires uniform requires_grad`, `You cannot perform fine-tuning on purely quantized models`), or a call
passed arguments the function does not take (`got an unexpected keyword argument`: code and library of different
versions). explain.py asks here after every signature and the OS errors, before the bare exception type; the answer
quotes the message, names its kind and the library that raised it, and never offers a restart: a refusal repeats.

These answers are still generic in the corpus's scoring (tests/unit/test_failure_corpus.py): they say what kind of
cause the message states, in its words, not which one. Messages of the communication and CUDA layers (an NCCL or
CUDA error, `invalid usage`) are never read here: their words describe a symptom, not the user's input.
"""

from __future__ import annotations

import re

from dscluster.logtext import printable

# Exceptions that the same code and the same input raise again: no restart gets past them.
DETERMINISTIC_TYPES = frozenset({
    "AssertionError", "AttributeError", "FileNotFoundError", "ImportError", "ModuleNotFoundError", "IndentationError",
    "IndexError", "KeyError", "NameError", "NotImplementedError", "SyntaxError", "TabError", "TypeError", "ValueError",
    "ZeroDivisionError", "JSONDecodeError", "UnboundLocalError", "RecursionError", "PermissionError",
    "IsADirectoryError", "NotADirectoryError", "UnicodeDecodeError", "UnicodeEncodeError", "OverflowError",
    "ValidationError", "DeepSpeedConfigError", "HFValidationError", "EnvironmentError", "ArgumentError",
    "ConfigError", "UsageError", "usage error"})  # ConfigError, UsageError: dscluster's own, from dscluster.checkpoint etc.
# Exceptions of what passes: a timeout, a connection the other end refused or dropped (a message of that kind too,
# errorline.transient). Any other error a rank raised comes back on a restart: in the failure corpus (issue 45) 88 of
# 96 logs whose Python error no signature knew failed again the same way, and the 8 that did not were a port in use.
TRANSIENT_TYPES = frozenset({"TimeoutError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
                             "ConnectionAbortedError", "timeout", "ReadTimeout", "ConnectTimeout", "ReadTimeoutError",
                             "ConnectTimeoutError", "ServerDisconnectedError", "ClientConnectorError",
                             "IncompleteRead", "RemoteDisconnected", "ChunkedEncodingError"})

# (name, pattern, cause, fix); the first kind whose words the message holds. Each pattern is a bounded alternation of
# words, linear in the message.
KINDS: tuple[tuple[str, re.Pattern, str, str], ...] = (
    ("refused-call", re.compile(
        r"got an unexpected keyword argument|missing \d+ required (?:positional|keyword-only) arguments?|"
        r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given|"
        r"got multiple values for argument", re.IGNORECASE),
     "A call passed arguments the called function does not take: the calling code and what it calls were written "
     "for different versions (a library whose API changed), or the call has a bug. {src} said: “{msg}”",
     "Install the version of the library the code was written for (its requirements name it; pip show it on every "
     "node), or change the call; a restart meets the same error."),
    ("refused-unsupported", re.compile(
        r"\bnot (?:yet |currently )?(?:supported|implemented for)\b|\bdo(?:es)?(?:n't| not) (?:yet )?support\b"
        # CPython's own TypeErrors of an object used the wrong way ("'NoneType' object does not support the context
        # manager protocol", "'tuple' object does not support item assignment"): a bug in the code, not a version
        r"(?! the (?:asynchronous )?context manager protocol| item (?:assignment|deletion))|"
        r"\bunsupported (?!operand)|\bonly supports?\b|\bno longer supported\b|\bis only (?:available|supported)\b|"
        r"\btoo old\b|\bnot available on\b", re.IGNORECASE),
     "{src} does not support what the run asks of it: a Python or package version, a platform, a GPU, a dtype or an "
     "option outside what the installed release supports. In its words: “{msg}”",
     "Change what the message names to something it supports (another GPU, Python, package version, dtype or "
     "option), or install a release that supports it, the same on every node; a restart meets the same refusal."),
    ("refused-combination", re.compile(
        r"\bcannot be (?:used|combined) (?:together|with)\b|\bnot compatible with\b|\bincompatible with\b|"
        r"\bmutually exclusive\b|\bconflicts? with\b|\b(?:passed|set|provided|specified|gave) both\b|"
        r"\bonly one of\b|\bcan(?:not|'t) (?:both|be used at the same time)\b", re.IGNORECASE),
     "{src} refused a combination of settings that cannot go together. In its words: “{msg}”",
     "Keep only one of the settings the message names, or do what it says, then launch again; a restart meets the "
     "same refusal."),
    ("refused-value", re.compile(
        r"\bunknown (?!error\b)[\w-]+|\bunrecogni[sz]ed\b|\bnot recogni[sz]ed\b|\bis not a valid\b|"
        r"\binvalid (?:value|choice|literal|option|format|mode|type|name)\b|\bis not one of\b|\bmust be one of\b",
        re.IGNORECASE),
     "{src} refused a value it was given: a name, option, type or format it does not know or accept (of another "
     "version of it, or misspelt). In its words: “{msg}”",
     "Give it a value it accepts (the message, or the documentation of the installed version, lists them), or install "
     "the version the value was written for; a restart meets the same refusal."),
    ("refused-missing", re.compile(
        r"\b(?:failed to|could not|couldn't|cannot|can't|unable to) (?:find|locate)\b|\bplease install\b|"
        r"\b(?:is|are) not installed\b|\bmust be installed\b|\bno such (?:file|directory|module|key|option)\b",
        re.IGNORECASE),
     "{src} did not find something it needs (a program, a file, a package, a name or a setting). In its words: "
     "“{msg}”",
     "Provide what the message names (install it, create it, or point to it with the path or environment variable "
     "it asks for) on every node; a restart meets the same error."),
    ("refused-requirement", re.compile(
        r"\brequires\b|\b(?:is|are) required\b|\bcannot be (?:larger|greater|bigger|smaller|less|more|fewer) than\b|"
        r"\bmust not exceed\b|\bYou (?:cannot|can't|can not|must|need to|should)\b|\bmust (?:be|have|not)\b|"
        r"\bshould be\b|\bis not divisible\b", re.IGNORECASE),
     "{src} refused: a condition it requires of its input or setup does not hold. In its words: “{msg}”",
     "Meet the condition the message states (the script, its arguments, the config or the model set up as it "
     "asks), then launch again; a restart meets the same refusal."),
)
NAMES = frozenset(k[0] for k in KINDS)
# Words of the layers below the user's input: an NCCL, CUDA or gloo error says what failed there, not what was refused.
_LOWER_LAYER = re.compile(r"\bNCCL\b|\bCUDA error\b|cuda runtime error|\bCUBLAS_|\bcuDNN\b|\bgloo\b|invalid usage|"
                          r"device-side assert|\bErrno\b", re.IGNORECASE)


def kind_of(message: str) -> tuple[str, str, str] | None:
    """(name, cause, fix) of the refusal a message states, or None."""
    if not message.strip() or _LOWER_LAYER.search(message):
        return None
    return next(((n, c, f) for n, p, c, f in KINDS if p.search(message)), None)


def explain(err, who: str, lib: str | None):
    """The explanation of a rank's own Python error by the kind of refusal its message states, or None."""
    from dscluster.explain import Explanation  # noqa: PLC0415 - explain.py asks here; its class is the answer

    found = kind_of(err.message) if err.kind == "python" else None
    if found is None:
        return None
    name, cause, fix = found
    if not (lib and err.origin):  # the words of an excerpt without its traceback: who raised it is not known
        cause = cause.replace("{src}", "The program")
    msg = printable(err.message.strip(), one_line=True)
    msg = msg if len(msg) <= 300 else msg[:297] + "..."
    return Explanation(name, cause, fix, False, err.summary[:300], {"src": f"{lib} ({err.origin})", "msg": msg, "who": who}, err.to_dict())
