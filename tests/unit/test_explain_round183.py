"""Round 183's rules (issue 45, live round 183: Python's import system in a training project), from CPython's own words
(Python/ceval.c import_from, Objects/moduleobject.c module_getattro) and transformers' for an optional dependency: a
user's file named like the module it means to import (module-shadowed), the project's own circular import
(circular-import), a name looked up in a directory without __init__.py (import-unknown-location), a feature whose
optional dependency is not installed (optional-dependency-missing), an f-string of Python 3.12 run by an older Python
(fstring-newer-python); second wordings (other versions' and callers' words than the live cases they were written from)
and near misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("module-shadowed", "circular-import", "import-unknown-location", "optional-dependency-missing",
       "fstring-newer-python")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # CPython 3.13's hint for a standard library name (What's New in 3.13's example)
    ('Traceback (most recent call last):\n  File "/home/me/random.py", line 1, in <module>\n    import random\n'
     '  File "/home/me/random.py", line 3, in <module>\n    print(random.randint(5))\n          ^^^^^^^^^^^^^^\n'
     "AttributeError: module 'random' has no attribute 'randint' (consider renaming '/home/me/random.py' since it has "
     "the same name as the standard library module named 'random' and prevents importing that standard library "
     "module)\n"),
    # 3.13's for a third-party name, and import_from's form of it
    ("AttributeError: module 'numpy' has no attribute 'array' (consider renaming '/home/me/numpy.py' if it has the "
     "same name as a library you intended to import)\n"),
    ("ImportError: cannot import name 'choice' from 'random' (consider renaming '/random.py' since it has the same "
     "name as the standard library module named 'random' and prevents importing that standard library module)\n"),
    # 3.13's beta wording
    ("AttributeError: module 'functools' has no attribute 'cache' (consider renaming '/home/u/live/functools.py' since "
     "it has the same name as the standard library module named 'functools' and the import system gives it "
     "precedence)\n"),
    # a script named torch.py importing itself (Python 3.8: no carets)
    ('Traceback (most recent call last):\n  File "/home/u/proj/torch.py", line 1, in <module>\n    import torch\n'
     '  File "/home/u/proj/torch.py", line 3, in <module>\n    x = torch.randn(3)\n'
     "AttributeError: partially initialized module 'torch' has no attribute 'randn' (most likely due to a circular "
     "import)\n"),
    # a user's queue.py found by multiprocessing's own import of the standard library's
    ('  File "/usr/lib/python3.10/multiprocessing/queues.py", line 20, in <module>\n    from queue import Empty, Full\n'
     "ImportError: cannot import name 'Empty' from 'queue' (/home/u/proj/queue.py)\n"),
    # a datasets.py of the user's own dataset classes, and a datasets/ package of them
    ("ImportError: cannot import name 'load_dataset' from 'datasets' (/home/u/proj/datasets.py)\n"),
    ("[rank0]: ImportError: cannot import name 'load_dataset' from 'datasets' (/home/u/proj/datasets/__init__.py)\n"),
    # a deepspeed directory (a clone of the repository) in the working directory
    ('  File "train.py", line 40, in main\n    model_engine, optimizer, _, _ = deepspeed.initialize(args=args,\n'
     "AttributeError: module 'deepspeed' has no attribute 'initialize'\n"),
])
def test_module_shadowed(text):
    assert sig(text) == "module-shadowed"


@pytest.mark.parametrize("text", [
    # two opencv wheels installed together: cv2's own package half imported (not a user's file)
    ('  File "/usr/local/lib/python3.10/dist-packages/cv2/typing/__init__.py", line 168, in <module>\n'
     "    LayerId = cv2.dnn.DictValue\n"
     "AttributeError: partially initialized module 'cv2' has no attribute 'dnn' (most likely due to a circular "
     "import)\n"),
    # a name torch has only in newer releases: another version (import-name)
    ("AttributeError: module 'torch' has no attribute 'float8_e4m3fn'\n"),
    # an installed datasets without the name: another version
    ("ImportError: cannot import name 'load_dataset' from 'datasets' "
     "(/opt/conda/lib/python3.10/site-packages/datasets/__init__.py)\n"),
    # transformers' lazy module's own AttributeError (no quotes): a class of a newer release
    ("AttributeError: module transformers has no attribute AutoModelForImageTextToText\n"),
    # the user's own module lacking a name (their own bug, not a library's name)
    ("ImportError: cannot import name 'TinyMLP' from 'models' (/home/u/proj/models/__init__.py)\n"),
])
def test_near_misses_are_not_module_shadowed(text):
    assert sig(text) != "module-shadowed"


@pytest.mark.parametrize("text", [
    # module_getattro's form, a class body of the user's package using its package half imported (Python 3.8)
    ('  File "/home/u/proj/models/__init__.py", line 1, in <module>\n    from .layers import Block\n'
     '  File "/home/u/proj/models/layers.py", line 4, in <module>\n    class Block(models.Base):\n'
     "AttributeError: partially initialized module 'models' has no attribute 'Base' (most likely due to a circular "
     "import)\n"),
    # import_from's form from a rank, the module a submodule of the project's package
    ("[rank1]: ImportError: cannot import name 'build_optimizer' from partially initialized module 'src.train.optim' "
     "(most likely due to a circular import) (/workspace/proj/src/train/optim.py)\n"),
])
def test_circular_import(text):
    assert sig(text) == "circular-import"


def test_a_circular_import_in_the_users_module_is_no_other_version():
    # test_explain_nearmisses.py's near miss of import-name until this round (the user's own trainer.py): read now as
    # the circular import Python names, still never as a package in another version
    text = ("ImportError: cannot import name 'Trainer' from partially initialized module 'trainer' (most likely due "
            "to a circular import) (/home/u/proj/trainer.py)\n")
    assert sig(text) == "circular-import"


@pytest.mark.parametrize("text", [
    ('  File "/usr/local/lib/python3.10/dist-packages/cv2/typing/__init__.py", line 168, in <module>\n'
     "    LayerId = cv2.dnn.DictValue\n"
     "AttributeError: partially initialized module 'cv2' has no attribute 'dnn' (most likely due to a circular "
     "import)\n"),
    # a library's own modules in a cycle (versions of two packages mixed), under site-packages
    ("ImportError: cannot import name 'GenerationMixin' from partially initialized module 'transformers.generation' "
     "(most likely due to a circular import) "
     "(/opt/conda/lib/python3.10/site-packages/transformers/generation/__init__.py)\n"),
])
def test_near_misses_are_not_circular_import(text):
    assert sig(text) != "circular-import"


@pytest.mark.parametrize("text", [
    # a transformers/ directory (a clone) in the working directory
    ("ImportError: cannot import name 'AutoModelForCausalLM' from 'transformers' (unknown location)\n"),
    # a package of the user's without __init__.py, from a rank
    ("[rank0]: ImportError: cannot import name 'Data' from 'utils.data' (unknown location)\n"),
])
def test_import_unknown_location(text):
    assert sig(text) == "import-unknown-location"


@pytest.mark.parametrize("text", [
    # builtin modules have no file either: a name of a newer Python (itertools.batched is 3.12's)
    ("ImportError: cannot import name 'batched' from 'itertools' (unknown location)\n"),
    ("ImportError: cannot import name 'monitoring' from 'sys' (unknown location)\n"),
    # a compiled module has a file
    ("ImportError: cannot import name '_set_torch_function_mode' from 'torch._C' "
     "(/opt/conda/lib/python3.10/site-packages/torch/_C.cpython-310-x86_64-linux-gnu.so)\n"),
])
def test_near_misses_are_not_import_unknown_location(text):
    assert sig(text) != "import-unknown-location"


@pytest.mark.parametrize("text", [
    # transformers' backends check (utils/import_utils.py requires_backends)
    ("ImportError: \nLlamaTokenizer requires the SentencePiece library but it was not found in your environment. "
     "Checkout the instructions on the\ninstallation page of its repo: "
     "https://github.com/google/sentencepiece#installation and follow the ones\n"
     "that match your environment. Please note that you may need to restart your runtime after installation.\n"),
    # a tokenizer's and another optimizer's own checks
    ("ImportError: You need to install sacremoses to use XLMTokenizer. See https://pypi.org/project/sacremoses/ for "
     "installation.\n"),
    ("ImportError: You need to install `galore_torch` in order to use GaLore optimizers install it with `pip install "
     "git+https://github.com/jiaweizzhao/GaLore`\n"),
])
def test_optional_dependency_missing(text):
    assert sig(text) == "optional-dependency-missing"


@pytest.mark.parametrize("text", [
    # a tokenizer's own argument check (no install)
    ("ValueError: You need to specify either `text` or `text_target`.\n"),
    # a library installed in a version too old: a version, not a missing extra
    ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run `pip install "
     "transformers[torch]` or `pip install 'accelerate>=0.26.0'`\n"),
])
def test_near_misses_are_not_optional_dependency_missing(text):
    assert sig(text) != "optional-dependency-missing"


@pytest.mark.parametrize("text", [
    # Python 3.10's words for a call inside the braces (the project's utils/fmt.py, run by the ranks)
    ('  File "/home/u/proj/utils/fmt.py", line 3\n    print(f"{fmt("a")}")\n                  ^\n'
     "SyntaxError: f-string: unmatched '('\n"),
    # a rank's prefixed lines, 3.11's carets
    ('[rank0]:   File "/work/proj/report.py", line 5\n[rank0]:     return f"loss {m["loss"]:.4f}"\n'
     "[rank0]:                       ^^^^\n[rank0]: SyntaxError: f-string: unmatched '['\n"),
])
def test_fstring_newer_python(text):
    assert sig(text) == "fstring-newer-python"


@pytest.mark.parametrize("text", [
    # a bracket never closed (f"{x[0"): the same words, no quote reused after it
    ('  File "/home/u/proj/train.py", line 9\n    print(f"{x[0")\n              ^\n'
     "SyntaxError: f-string: unmatched '['\n"),
    # another f-string error of the same parser
    ('  File "/home/u/proj/train.py", line 9\n    print(f"{x!z}")\n          ^\n'
     "SyntaxError: f-string: invalid conversion character: expected 's', 'r', or 'a'\n"),
])
def test_near_misses_are_not_fstring_newer_python(text):
    assert sig(text) != "fstring-newer-python"
