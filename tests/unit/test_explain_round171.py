"""Live round 171's rules (issue 45), from broken users' scripts around the training step (their configuration
files, what they write and how): PyYAML's scanner/parser errors read as config-yaml-syntax, CPython json's decoder
errors as config-json-syntax, os.makedirs / Path.mkdir's FileExistsError without exist_ok as makedirs-every-rank,
json's encoder refusing a tensor or numpy value as json-dump-tensor, pickle refusing what torch.save is given as
torch-save-unpicklable, a write into a directory never created (torch's zip writer, logging.FileHandler, open for
writing) as output-dir-missing, object.__format__'s refusal for a tensor as tensor-format-spec and io's `not
writable` as file-opened-read-only (sigoutputs.py); second wordings (other versions' and callers' words than the live
cases) and near misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("config-yaml-syntax", "config-json-syntax", "makedirs-every-rank", "json-dump-tensor", "torch-save-unpicklable",
       "output-dir-missing", "tensor-format-spec", "file-opened-read-only")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "name"), [
    # PyYAML's scanner on a `key: value: more` line (scanner.py fetch_value)
    ("Traceback (most recent call last):\n"
     '  File "/usr/lib/python3/dist-packages/yaml/scanner.py", line 577, in fetch_value\n'
     "yaml.scanner.ScannerError: mapping values are not allowed here\n"
     '  in "conf/train.yaml", line 7, column 14\n', "config-yaml-syntax"),
    # ruamel.yaml's parser (the same classes under ruamel.yaml), as Hydra-free OmegaConf users meet it
    ("ruamel.yaml.parser.ParserError: while parsing a block collection\n"
     '  in "<unicode string>", line 3, column 3\n'
     "expected <block end>, but found '?'\n", "config-yaml-syntax"),
    # PyYAML's composer on an alias never defined
    ("yaml.composer.ComposerError: found undefined alias 'defaults'\n"
     '  in "exp.yaml", line 12, column 10\n', "config-yaml-syntax"),
    # a JSON Lines file read whole with json.load (decoder.py decode's "Extra data")
    ('  File "/usr/lib/python3.10/json/decoder.py", line 340, in decode\n'
     '    raise JSONDecodeError("Extra data", s, end)\n'
     "json.decoder.JSONDecodeError: Extra data: line 2 column 1 (char 112)\n", "config-json-syntax"),
    # the bare class name (a `from json import JSONDecodeError` logger), a trailing comma in a list
    ("JSONDecodeError: Expecting value: line 5 column 3 (char 61)\n", "config-json-syntax"),
    # pathlib's mkdir (3.10) without exist_ok, every rank making the checkpoint directory
    ('[rank2]:   File "/workspace/train.py", line 40, in main\n'
     "[rank2]:     Path(args.ckpt).mkdir(parents=True)\n"
     '[rank2]:   File "/usr/lib/python3.10/pathlib.py", line 1175, in mkdir\n'
     "[rank2]:     self._accessor.mkdir(self, mode)\n"
     "[rank2]: FileExistsError: [Errno 17] File exists: 'ckpt/run1'\n", "makedirs-every-rank"),
    # Python 3.6's quoted type name, and numpy's array
    ("TypeError: Object of type 'Tensor' is not JSON serializable\n", "json-dump-tensor"),
    ("TypeError: Object of type ndarray is not JSON serializable\n", "json-dump-tensor"),
    # Python 3.5 and before: the value's repr
    ("TypeError: tensor(0.6931, grad_fn=<NllLossBackward>) is not JSON serializable\n", "json-dump-tensor"),
    # a class defined inside a function, torch 1.13's serialization frame
    ('  File "/opt/conda/lib/python3.9/site-packages/torch/serialization.py", line 589, in _save\n'
     "    pickler.dump(obj)\n"
     "AttributeError: Can't pickle local object 'build.<locals>.Head'\n", "torch-save-unpicklable"),
    # logging.FileHandler (3.10) into a logs/ directory never made
    ('  File "/usr/lib/python3.10/logging/__init__.py", line 1176, in _open\n'
     "    return open_func(self.baseFilename, self.mode,\n"
     "FileNotFoundError: [Errno 2] No such file or directory: '/work/logs/train.log'\n", "output-dir-missing"),
    # the script's own open for writing
    ('  File "/workspace/eval.py", line 61, in <module>\n'
     '    with open(os.path.join(args.output_dir, "results.json"), "w") as f:\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'out/results.json'\n", "output-dir-missing"),
    # open for writing with more arguments after the mode
    ('  File "/workspace/export.py", line 33, in save_vocab\n'
     '    with open(f"{out_dir}/vocab.txt", "w", encoding="utf-8") as f:\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'export/tok/vocab.txt'\n", "output-dir-missing"),
    ("TypeError: unsupported format string passed to numpy.ndarray.__format__\n", "tensor-format-spec"),
    ("TypeError: unsupported format string passed to Parameter.__format__\n", "tensor-format-spec"),
    ("UnsupportedOperation: not writable\n", "file-opened-read-only"),
    ("IOError: File not open for writing\n", "file-opened-read-only"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # safe_load of a file yaml.dump wrote with Python objects: a loader's refusal, not a syntax error
    ("yaml.constructor.ConstructorError: could not determine a constructor for the tag "
     "'tag:yaml.org,2002:python/tuple'\n", "config-yaml-syntax"),
    # an empty file or an HTML page where JSON was expected: not a syntax slip in a config
    ("json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n", "config-json-syntax"),
    # a web service's answer (requests' own class)
    ("requests.exceptions.JSONDecodeError: Expecting ',' delimiter: line 1 column 120 (char 119)\n",
     "config-json-syntax"),
    # shutil.copytree onto an existing destination: its own os.makedirs(dst), no exist_ok for the script to pass
    ('  File "/workspace/export.py", line 12, in <module>\n'
     "    shutil.copytree(src, dst)\n"
     '  File "/usr/lib/python3.10/shutil.py", line 559, in copytree\n'
     "    return _copytree(entries=entries, src=src, dst=dst, symlinks=symlinks,\n"
     '  File "/usr/lib/python3.10/shutil.py", line 457, in _copytree\n'
     "    os.makedirs(dst, exist_ok=dirs_exist_ok)\n"
     '  File "/usr/lib/python3.10/os.py", line 225, in makedirs\n'
     "    mkdir(name, mode)\n"
     "FileExistsError: [Errno 17] File exists: 'export/model'\n", "makedirs-every-rank"),
    # other types json cannot write: not a tensor or numpy value
    ("TypeError: Object of type set is not JSON serializable\n", "json-dump-tensor"),
    ("TypeError: Object of type PosixPath is not JSON serializable\n", "json-dump-tensor"),
    # torch.load unpickling a class the loading script lacks
    ("AttributeError: Can't get attribute 'Net' on <module '__main__' from 'infer.py'>\n", "torch-save-unpicklable"),
    # copy.deepcopy of a module holding a lock
    ('  File "/usr/lib/python3.10/copy.py", line 161, in deepcopy\n'
     "    rv = reductor(4)\n"
     "TypeError: cannot pickle '_thread.lock' object\n", "torch-save-unpicklable"),
    # a data file read that is missing: not a write
    ('  File "/workspace/train.py", line 20, in <module>\n'
     '    with open(args.train_file, "r") as f:\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.jsonl'\n", "output-dir-missing"),
    # None formatted: a value never set, not a tensor
    ("TypeError: unsupported format string passed to NoneType.__format__\n", "tensor-format-spec"),
    # the other way round (opened for writing, then read), and a stream without a descriptor
    ("io.UnsupportedOperation: not readable\n", "file-opened-read-only"),
    ("io.UnsupportedOperation: fileno\n", "file-opened-read-only"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_the_more_specific_readings_of_the_same_exceptions_come_first():
    # exist_ok=True still failing (a shared file system): ckpt-dir-exists-race, not this round's makedirs
    assert sig('  File "/w/train.py", line 9, in save\n'
               "    os.makedirs(path, exist_ok=True)\n"
               '  File "/usr/lib/python3.10/os.py", line 225, in makedirs\n'
               "    mkdir(name, mode)\n"
               "FileExistsError: [Errno 17] File exists: '/nfs/ckpt/step100'\n") == "ckpt-dir-exists-race"
    # a DataLoader worker under spawn: dataloader-unpicklable, not torch.save's
    assert sig("Got pickle error when attempting to start a worker Process. This might be caused by trying to "
               "pickle a lambda or local function.\n"
               "AttributeError: Can't pickle local object 'main.<locals>.collate'\n") != "torch-save-unpicklable"
