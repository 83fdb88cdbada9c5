"""Failure signatures of what surrounds a training step (live round 171 of issue 45): the script's own configuration
files, the files and directories it writes, and what it formats or serialises there. Each pattern is the wording of
the component that prints it, never one log's:
- PyYAML's (and ruamel.yaml's) scanner, parser and composer errors (yaml/scanner.py `found character %r that cannot
  start any token`, yaml/parser.py `expected <block end>, but found ...`, all raised as yaml.scanner.ScannerError,
  yaml.parser.ParserError, yaml.composer.ComposerError);
- CPython's json decoder (json/decoder.py, _json.c scanner: `Expecting property name enclosed in double quotes`,
  `Expecting ',' delimiter`, `Extra data`, ...: json.decoder.JSONDecodeError) and encoder (json/encoder.py default:
  `Object of type Tensor is not JSON serializable`; `Object of type 'Tensor' ...` before Python 3.7);
- CPython's os.makedirs (`<frozen os>` from 3.11, os.py before) and pathlib's mkdir raising FileExistsError; round
  185: os.mkdir's own call line (a builtin: the caller's line is the last frame) too;
- pickle refusing what torch.save is given (torch/serialization.py _save's pickler.dump: CPython's save_global words,
  sigwords._PICKLE_REFUSED);
- a write into a directory that does not exist: PyTorch's zip writer (caffe2/serialize/inline_container.cc:
  `Parent directory X does not exist.`), logging.FileHandler._open, and an open(..., 'w'/'a'/'x') of the frame that
  raised FileNotFoundError;
- object.__format__ given a format spec (Objects/typeobject.c: `unsupported format string passed to T.__format__`),
  reached for a tensor of one or more dimensions (torch/_tensor.py Tensor.__format__ formats only a 0-dim tensor as a
  number) or a numpy array;
- io's `not writable` (Modules/_io: io.UnsupportedOperation) for a file opened for reading, and Python 2's words.
sigmessages.py places this table last but one: every more specific reading of the same exceptions comes first
(ckpt-dir-exists-race, logger-on-every-rank, spawn-unpicklable, the ds_config's and HF's own)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import _PICKLE_REFUSED

# A few lines of one traceback between a frame and the exception it raised: its source line, a caret line (3.11+), a
# rank prefix before each.
_FEW = r"(?:[^\n]*\n){0,4}?[^\n]*?"
_CALL_BY_COPYTREE = re.compile(r"[/\\]shutil\.py\", line \d+, in _?copytree\n(?:[^\n]*\n){0,2}?[^\n]*\Z")


def _called_by_copytree(m: re.Match, texts: Iterable[str]) -> bool:
    """shutil.copytree's own os.makedirs(dst) (dirs_exist_ok left False): the destination exists, and no exist_ok is
    the script's to pass. The frame right before the makedirs frame, read from a bounded stretch before it."""
    return bool(_CALL_BY_COPYTREE.search(m.string, max(0, m.start() - 600), m.start()))


OUTPUT_SIGNATURES: tuple[Signature, ...] = (
    _sig("config-yaml-syntax",
         r"\b(?:ruamel\.)?yaml\.(?:scanner\.ScannerError|parser\.ParserError|composer\.ComposerError)\b",
         "A YAML file the script reads is not valid YAML: PyYAML's scanner or parser stopped at the line and column "
         "its message names (in \"FILE\", line N, column M). The usual causes: a tab used for indentation (YAML "
         "allows spaces only), a key whose lines do not line up, `key:value` without the space, or a value holding "
         "`: `, `#`, or starting with `*`, `&`, `@`, `%` or a backquote, not quoted.",
         "Correct the file where the message points (indent with spaces only; quote such values) and check it with "
         "python -c \"import sys, yaml; yaml.safe_load(open(sys.argv[1]))\" FILE. Every rank reads the same file, "
         "so a restart fails the same way.", retry=False),
    _sig("config-json-syntax",
         r"(?<![\w.])(?:json\.decoder\.)?JSONDecodeError: (?:Expecting (?:property name enclosed in double quotes|"
         r"'[,:]' delimiter)|Invalid control character at|Invalid \\\\?escape|Unterminated string starting at|"
         r"Extra data|Expecting value: line (?!1 column 1 \(char 0\)))",
         "A JSON file (or string) the script parses with json.load/json.loads is not valid JSON: Python's decoder "
         "names what it expected and where (line, column). The usual causes: a trailing comma after the last entry, "
         "a missing comma, single quotes, a comment, Python's True/None; `Extra data` is a second value after the "
         "first, as in a JSON Lines (.jsonl) file read whole with json.load.",
         "Correct the file where the message points (python -m json.tool FILE shows the first error): no trailing "
         "commas or comments, double quotes only, true/false/null. Read a .jsonl file one line at a time (json.loads "
         "per line). A restart reads the same file.", retry=False),
    # Round 185 (live): json.load (json/__init__.py load: `return loads(fp.read(), ...`) of a file whose text is empty
    # or holds no JSON value where it starts: the decoder's "Expecting value: line 1 column 1 (char 0)" (json/decoder.py
    # raw_decode), which config-json-syntax leaves out. Only under json.load's own frame: json.loads of a reply (an
    # HTTP client's response.json()) is not a file.
    _sig("json-file-empty",
         r"[/\\]json[/\\]__init__\.py\", line \d+, in load\n(?:[^\n]*\n){0,16}?[^\n]*?"
         r"(?<![\w.])(?:json\.decoder\.)?JSONDecodeError: Expecting value: line 1 column 1 \(char 0\)",
         "json.load read a file that is empty (or holds no JSON where it begins): most often a file that exists but "
         "is not written yet, one that another process is still writing (rank 0 writing a vocabulary, a config or a "
         "split list that the other ranks read as soon as the file exists, before rank 0 has written it) or whose "
         "write was interrupted; sometimes a file of another format under a .json name.",
         "Have one rank write the file and the others read it only after it is complete: rank 0 writes it (to a "
         "temporary name, then os.replace onto the real one), then every rank meets at a barrier "
         "(torch.distributed.barrier()) before reading; waiting for the file to exist is not enough, open() creates "
         "it before anything is written. Delete an empty file left behind. A restart meets the same race or file.",
         retry=False),
    _sig("makedirs-every-rank",
         r"(?:[/\\]os\.py|<frozen os>)\", line \d+, in makedirs\n" + _FEW + r"FileExistsError: \[Errno 17\]|"
         r"[/\\]pathlib(?:[/\\]_local)?\.py\", line \d+, in mkdir\n" + _FEW + r"FileExistsError: \[Errno 17\]|"
         r"\bos\.mkdir\((?:(?!os\.mkdir\()[^\n])*\n(?:(?![^\n]*\bFile \")[^\n]*\n){0,2}?[^\n]*?"
         r"FileExistsError: \[Errno 17\]",
         "os.makedirs, os.mkdir or Path.mkdir without exist_ok=True found the directory already there. In a "
         "distributed run every rank runs the same line and creates the same directory (outputs, checkpoints, logs, "
         "a cache), so every rank but the first to get there fails (a check `if not os.path.exists(path)` before it "
         "does not prevent this: every rank can pass the check before any creates it); or an earlier run left the "
         "directory behind.",
         "Pass exist_ok=True (os.makedirs(path, exist_ok=True) in place of os.mkdir or an exists check, "
         "Path(path).mkdir(parents=True, exist_ok=True)), or "
         "create it on rank 0 only and barrier before the other ranks write into it. Where the directory must be new "
         "(not to overwrite a run), name it once per run (a timestamp or run id decided on rank 0 and broadcast). A "
         "restart finds the directory there again.", retry=False, aside_if=_called_by_copytree),
    _sig("json-dump-tensor",
         r"Object of type '?(?:Tensor|Parameter|ndarray|float(?:16|32|64)|u?int(?:8|16|32|64)|bool_|bfloat16|Size|"
         r"dtype|device)'? is not JSON serializable|\b(?:tensor|array)\([^\n]{0,200}\) is not JSON serializable",
         "json.dump/json.dumps met a torch tensor or a numpy value it cannot write (only Python's str, int, float, "
         "bool, None, list and dict): a metric kept as a tensor (loss or loss.detach() rather than loss.item()), a "
         "numpy float32/int64 from a metric library, or a dtype/device in a config written out.",
         "Convert before writing: .item() for a one-element tensor, .tolist() for a tensor or array, float()/int() "
         "for a numpy scalar, str() for a dtype or device; or pass json.dump(..., default=...) a converter. The same "
         "values fail again on a restart.", retry=False),
    _sig("torch-save-unpicklable",
         r"[/\\]torch[/\\]serialization\.py\", line \d+, in _save\n" + _FEW + r"(?:" + _PICKLE_REFUSED + ")",
         "torch.save pickles the object it is given, and that object holds something pickle cannot save: a lambda or "
         "a function or class defined inside another function (<locals>), or an open file, lock or generator. Saving "
         "a whole module (torch.save(model)) pickles every attribute of it, an activation kept as a lambda included.",
         "Save the state_dict instead (torch.save(model.state_dict(), path), rebuilding the model from its code "
         "when loading), or make the object picklable: define functions and classes at module level, use modules "
         "(nn.GELU()) or functools.partial of a top-level function instead of lambdas. The message names the object. "
         "A restart fails the same way.", retry=False),
    _sig("output-dir-missing",
         r"\bParent directory [^\n]{1,400}? does not exist\.|"
         r"[/\\]logging[/\\]__init__\.py\", line \d+, in _open\n" + _FEW + r"FileNotFoundError: \[Errno 2\]|"
         + then(r"\bopen\(", r", *(?:mode *= *)?['\"][wax][bt+]{0,2}['\"] *(?:\)|, *\w+ *=)", gap="[^\n]")
         + r"[^\n]{0,80}\n(?:[^\n]*\n){0,2}?[^\n]*?FileNotFoundError: \[Errno 2\]",
         "The script writes a file into a directory that does not exist on this node: nothing created it (an output, "
         "checkpoint or log directory that exists where the script was written, a path made by another node or an "
         "earlier step that did not run here). torch.save, logging.FileHandler and open(path, 'w') create the file, "
         "never its directory.",
         "Create the directory before writing: os.makedirs(os.path.dirname(path), exist_ok=True) on every node that "
         "writes there (or on rank 0, then a barrier, where the nodes share it), or point the output path at a "
         "directory that exists. A restart meets the same missing directory.", retry=False),
    _sig("tensor-format-spec",
         r"unsupported format string passed to (?:Tensor|Parameter|(?:numpy\.)?ndarray)\.__format__",
         "An f-string or str.format gave a format spec (:.4f, :>8) to a tensor or array that is not a single number: "
         "only a 0-dim tensor formats like a number (Tensor.__format__); a tensor of shape [1], a batch of values, "
         "an nn.Parameter or a numpy array does not.",
         "Format a Python number: value.item() for a one-element tensor (running_loss.item(), loss.mean().item()), or "
         "format each element (value.tolist()). A restart fails at the same print.", retry=False),
    _sig("file-opened-read-only",
         r"\bUnsupportedOperation: not writable\b|\bIOError: File not open for writing\b",
         "The script wrote to a file it had opened for reading only: open(path) without a mode opens it read-only "
         "('r'), so the first write (csv.writer's writerow, json.dump, f.write) fails.",
         "Open it with the mode of the writing: open(path, 'a', newline='') to append rows (csv), 'w' to replace "
         "it, 'r+' to read and write. A restart fails at the same write.", retry=False),
)
