"""Round 185's rules (issue 45, live): ranks racing on shared files and work done on rank 0 only. An unpickler or
np.load reading an empty file (pickle-file-empty), json.load of an empty file (json-file-empty), SQLite's busy
writer (sqlite-database-locked), shutil.rmtree's own lstat finding no directory (rmtree-dir-gone), a compressed file
or tar cut short (archive-truncated), the tokenizers library's from_file finding no file (tokenizer-file-missing);
makedirs-every-rank widened to os.mkdir's own line, ckpt-save-race to a temporary name that ends the file's name.
Second wordings (other versions' and callers' words than the live cases) and near misses, other components' text
with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("pickle-file-empty", "json-file-empty", "sqlite-database-locked", "rmtree-dir-gone", "archive-truncated",
       "tokenizer-file-missing")


def test_new_families_are_translated_and_final():
    translated_and_final((*NEW, "makedirs-every-rank", "ckpt-save-race"))


@pytest.mark.parametrize(("text", "name"), [
    # the script's own pickle.load, Python 3.8 (no caret lines)
    ('  File "prep.py", line 20, in <module>\n    feats = pickle.load(open(cache, "rb"))\n'
     "EOFError: Ran out of input\n", "pickle-file-empty"),
    # joblib.load of an empty file called by the script, its own frame under the call
    ('  File "train.py", line 9, in <module>\n    index = joblib.load("index.pkl")\n'
     '  File "/usr/lib/python3/dist-packages/joblib/numpy_pickle.py", line 658, in load\n'
     "    obj = _unpickle(fobj, filename, mmap_mode)\n"
     "EOFError: Ran out of input\n", "pickle-file-empty"),
    # numpy's np.load of an empty .npy file (numpy/lib/_npyio_impl.py)
    ('  File "/opt/venv/lib/python3.12/site-packages/numpy/lib/_npyio_impl.py", line 462, in load\n'
     '    raise EOFError("No data left in file")\nEOFError: No data left in file\n', "pickle-file-empty"),
    # json.load on Python 3.8 without carets, the error printed without its module
    ('  File "/usr/lib/python3.8/json/__init__.py", line 293, in load\n    return loads(fp.read(),\n'
     '  File "/usr/lib/python3.8/json/__init__.py", line 357, in loads\n    return _default_decoder.decode(s)\n'
     '  File "/usr/lib/python3.8/json/decoder.py", line 337, in decode\n'
     "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n"
     '  File "/usr/lib/python3.8/json/decoder.py", line 355, in raw_decode\n'
     '    raise JSONDecodeError("Expecting value", s, err.value) from None\n'
     "JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n", "json-file-empty"),
    # Python's sqlite3 as the script calls it; Django's and peewee's re-raises
    ('  File "cache.py", line 31, in put\n    self.db.execute("INSERT INTO kv VALUES (?, ?)", (k, v))\n'
     "sqlite3.OperationalError: database is locked\n", "sqlite-database-locked"),
    ("django.db.utils.OperationalError: database is locked\n", "sqlite-database-locked"),
    ("peewee.OperationalError: database is locked\n", "sqlite-database-locked"),
    # rmtree on Python 3.11 under a rank prefix-less log
    ('  File "/usr/lib/python3.11/shutil.py", line 722, in rmtree\n    onerror(os.lstat, path, sys.exc_info())\n'
     '  File "/usr/lib/python3.11/shutil.py", line 720, in rmtree\n    orig_st = os.lstat(path, dir_fd=dir_fd)\n'
     "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'cache/tmp'\n", "rmtree-dir-gone"),
    # bz2 through _compression.py, and tarfile's own words for a plain .tar cut short
    ('  File "/usr/lib/python3.10/_compression.py", line 99, in read\n'
     '    raise EOFError("Compressed file ended before the "\n'
     "EOFError: Compressed file ended before the end-of-stream marker was reached\n", "archive-truncated"),
    ('  File "/usr/lib/python3.10/tarfile.py", line 251, in copyfileobj\n'
     '    raise exception("unexpected end of data")\ntarfile.ReadError: unexpected end of data\n', "archive-truncated"),
    # the script's own Tokenizer.from_file, no rank prefix
    ('  File "serve.py", line 12, in <module>\n    tok = Tokenizer.from_file(args.tokenizer)\n'
     "Exception: No such file or directory (os error 2)\n", "tokenizer-file-missing"),
    # os.mkdir on Python 3.10 (no carets), a rank prefix
    ('[rank3]:   File "run.py", line 40, in setup\n[rank3]:     os.mkdir(run_dir)\n'
     "[rank3]: FileExistsError: [Errno 17] File exists: 'runs/exp2'\n", "makedirs-every-rank"),
    # the temporary name as a suffix of the checkpoint's name, written with a dash
    ("FileNotFoundError: [Errno 2] No such file or directory: 'out/model-tmp.pth' -> 'out/model.pth'\n",
     "ckpt-save-race"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # a DataLoader worker on Windows reading its parent's pipe (multiprocessing/spawn.py _main)
    ('  File "C:\\Python39\\lib\\multiprocessing\\spawn.py", line 126, in _main\n'
     "    self = reduction.pickle.load(from_parent)\nEOFError: Ran out of input\n", "pickle-file-empty"),
    # a truncated pickle (not an empty one)
    ('  File "a.py", line 3, in <module>\n    pickle.load(f)\n_pickle.UnpicklingError: pickle data was truncated\n',
     "pickle-file-empty"),
    # input() with no stdin
    ("EOFError: EOF when reading a line\n", "archive-truncated"),
    # an HTTP reply that is not JSON, read with json.loads (requests' response.json())
    ('  File "/usr/lib/python3/dist-packages/requests/models.py", line 971, in json\n'
     "    return complexjson.loads(self.text, **kwargs)\n"
     "requests.exceptions.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n", "json-file-empty"),
    # SQLITE_LOCKED within one connection, and a database that cannot be opened
    ("sqlite3.OperationalError: database table is locked\n", "sqlite-database-locked"),
    ("sqlite3.OperationalError: unable to open database file\n", "sqlite-database-locked"),
    # copytree's FileNotFoundError, and os.remove's
    ('  File "/usr/lib/python3.11/shutil.py", line 561, in copytree\n    with os.scandir(src) as itr:\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'assets'\n", "rmtree-dir-gone"),
    ('  File "clean.py", line 4, in <module>\n    os.remove(p)\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'x.pt'\n", "rmtree-dir-gone"),
    # tarfile given a file that is no archive at all (an HTML page saved as .tar.gz)
    ("tarfile.ReadError: file could not be opened successfully:\n- method gz: ReadError('not a gzip file')\n",
     "archive-truncated"),
    # a tokenizer file that is there but not JSON
    ('  File "a.py", line 2, in <module>\n    tok = Tokenizer.from_file("vocab.txt")\n'
     "Exception: expected value at line 1 column 1\n", "tokenizer-file-missing"),
    # safetensors' own missing-file words
    ('  File "a.py", line 5, in <module>\n    with safe_open("model.safetensors", framework="pt") as f:\n'
     "FileNotFoundError: No such file or directory: \"model.safetensors\"\n", "tokenizer-file-missing"),
    # os.mkdir deeper in a library frame, then another frame's error: not the mkdir's own line
    ('  File "a.py", line 2, in <module>\n    os.mkdir(d)\n  File "lib.py", line 9, in g\n    open(p, "x")\n'
     "FileExistsError: [Errno 17] File exists: 'lock'\n", "makedirs-every-rank"),
    # a rename whose source is not a temporary name (a template file)
    ("FileNotFoundError: [Errno 2] No such file or directory: 'templates/base.pt' -> 'ckpt/base.pt'\n",
     "ckpt-save-race"),
])
def test_near_misses(text, name):
    assert sig(text) != name
