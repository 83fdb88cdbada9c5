"""Failure signatures of Python's own multiprocessing and import system in a training script (issue 45, live round 175):
a start method set twice, a process pool whose worker died, a function or object the pool cannot pickle. Written from
CPython's multiprocessing and concurrent.futures sources; each is deterministic, none lets a restart help.
sigmessages.py places this table right after siglibs.py's, in the order these had there. Round 183 (live) added
Python's import system's own words: a file or directory of the user's named like the module it means to import (a
local logging.py, queue.py, deepspeed.py), the project's own circular import, and a name looked up in a directory
without __init__.py (a namespace package: "unknown location"), written from CPython's Python/ceval.c import_from and
Objects/moduleobject.c module_getattro; a feature's optional dependency not installed (transformers' own checks) and
an f-string of Python 3.12 run by an older Python."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# A traceback frame's file of the user's own: not an installed package's, not the standard library's, not code compiled
# from a string (sigwords' _OWN_FILE's rule).
_OWN = r"(?![^\"\n]{0,400}?(?:[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d|<))"
# A path in CPython's `cannot import name 'N' from 'M' (PATH)` that is the user's own, read up to its closing bracket.
_OWN_PATH = r"(?![^)\n]{0,400}?(?:[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d))"
# Lines between a frame's `File "..."` line and the exception: the source line and 3.11's carets, never another frame.
_NO_FRAME = r"(?:(?![^\n]*File \")[^\n]*\n){1,3}?(?![^\n]*File \")[^\n]*?"
# Module names users' own files take that are the standard library's or a training stack's library (a logging.py of
# logging helpers, queue.py of a job queue, deepspeed.py of config builders): found in the script's directory first.
_SHADOWED = (r"(?:logging|queue|copy|random|types|typing|string|json|csv|io|re|signal|select|socket|email|inspect|"
             r"token|tokenize|profile|calendar|abc|enum|dataclasses|functools|numbers|operator|pickle|platform|ssl|"
             r"struct|threading|traceback|uuid|warnings|weakref|secrets|statistics|glob|shutil|tempfile|datetime|"
             r"decimal|fractions|heapq|bisect|hashlib|base64|argparse|contextlib|collections|multiprocessing|"
             r"concurrent|subprocess|math|array|code|test|trace|selectors|asyncio|torch|deepspeed|transformers|"
             r"datasets|accelerate|tokenizers|numpy|pandas|wandb|yaml|tqdm|safetensors|peft|trl|evaluate|triton|"
             r"scipy|sklearn|einops|timm|torchvision|huggingface_hub)")
# Names a library has had in every release (DeepSpeed's initialize since 0.1, torch's nn and tensor, transformers'
# Auto classes and Trainer): missing from the module Python imported, that module is not the library.
_CORE_NAMES = (r"module 'deepspeed' has no attribute '(?:initialize|add_config_arguments|init_distributed)'|"
               r"module 'torch' has no attribute '(?:nn|tensor|Tensor|zeros|ones|randn|optim|no_grad|float32|device|"
               r"save|load|manual_seed)'|module 'transformers' "
               r"has no attribute '(?:AutoModel|AutoModelForCausalLM|AutoTokenizer|AutoConfig|Trainer|"
               r"TrainingArguments|PreTrainedModel)'|module 'datasets' has no attribute '(?:load_dataset|Dataset|"
               r"load_from_disk)'|module 'accelerate' has no attribute 'Accelerator'")
# Python's builtin and frozen modules, which have no __file__ (CPython's import_from says `(unknown location)` for
# any module without one): a name missing from them is another Python's (itertools.batched is 3.12's).
_NO_FILE = (r"(?:sys|builtins|itertools|time|errno|gc|posix|nt|pwd|marshal|atexit|faulthandler|os|io|abc|codecs|"
            r"stat|site|posixpath|ntpath|genericpath|zipimport|math|cmath|array|winreg|msvcrt|_\w*)")

PROCESS_SIGNATURES: tuple[Signature, ...] = (
    # Round 183 (live): a file of the user's, named like a module it (or a library it imports) imports, found first
    # on sys.path (the script's own directory). CPython 3.13+ says so itself (Objects/moduleobject.c
    # module_getattro, Python/ceval.c import_from: "(consider renaming 'PATH' since it has the same name as the
    # standard library module named 'M' and prevents importing that standard library module)", "... if it has the
    # same name as a library you intended to import", 3.13's betas "the import system gives it precedence", "the
    # third-party module you intended to import"). Before it: the file importing itself, whose frame stands right
    # above `partially initialized module 'M'` (module_getattro's and import_from's "(most likely due to a circular
    # import)"); a library's import of a standard or library name answered from a user's file of that name
    # (import_from's `cannot import name 'N' from 'M' (PATH)`, PATH the user's M.py or M/__init__.py); a library's
    # core name missing (`module 'deepspeed' has no attribute 'initialize'`), read before import-name, whose words
    # for another version these are too.
    _sig("module-shadowed", r"\(consider renaming '[^'\n]{1,400}' (?:since|if) it has the same name as (?:the standard "
         r"library module|a library you intended to import|the third-party module)|File \"" + _OWN +
         r"[^\"\n]{0,400}[/\\](?P<self>[A-Za-z_]\w*)\.py\", line \d+, in <module>\n" + _NO_FRAME +
         r"(?:partially initialized module '(?P=self)' has no attribute|cannot import name '\w+' from partially "
         r"initialized module '(?P=self)')|"
         r"cannot import name '\w+' from '(?P<lib>" + _SHADOWED + r")' \(" + _OWN_PATH + r"[^)\n]{0,400}[/\\](?P=lib)"
         r"(?:\.py|[/\\]__init__\.py)\)|(?<!partially initialized )(?:" + _CORE_NAMES + ")",
         "A file or directory of the user's has the name of a module the script or a library imports (a logging.py, "
         "queue.py or copy.py of the standard library's names, a deepspeed.py, torch.py or datasets.py of a "
         "library's): Python finds it first on sys.path (the script's own directory comes first, then PYTHONPATH) "
         "and imports it in place of the real module, which then lacks what the code asks for; a file that imports "
         "the module it is named after imports itself.",
         "Rename the file (or directory) to a name no library uses (log_utils.py, job_queue.py, ds_helpers.py) and "
         "change its imports, and delete its __pycache__/ and any leftover .pyc; `python -c \"import M; "
         "print(M.__file__)\"` from the script's directory shows which file is found. A restart fails the same way.",
         retry=False),
    # Round 183 (live): the project's own modules importing each other: CPython's import_from (Python/ceval.c) "cannot
    # import name 'N' from partially initialized module 'M' (most likely due to a circular import) (PATH)" for the
    # user's own M, and module_getattro's "partially initialized module 'M' has no attribute 'N' (most likely due to a
    # circular import)" raised on a line of the user's own file. Not an installed package's (cv2's
    # '_registerMatType' of two opencv wheels), nor a file importing itself (module-shadowed's, before).
    _sig("circular-import", r"cannot import name '\w+' from partially initialized module '[\w.]+' \(most likely due to "
         r"a circular import\) \(" + _OWN_PATH + r"[^)\n]{1,400}\)|File \"" + _OWN +
         r"[^\"\n]{1,400}\", line \d+, in [^\n]*\n" + _NO_FRAME + r"partially initialized module '[\w.]+' has no "
         r"attribute '\w+' \(most likely due to a circular import\)",
         "The project's own modules import each other in a cycle: a module asks for a name of a module (often its "
         "package's __init__.py) that is still being imported and has not defined it yet (the __init__ imports the "
         "module before the one defining the name).",
         "Break the cycle: import the name from the module that defines it (from pkg.utils import seed_all, not from "
         "pkg), move the import into the function that uses it, or reorder the package's __init__.py so that what "
         "others need is imported first. A restart fails the same way.", retry=False),
    # Round 183 (live): CPython's import_from (Python/ceval.c) `cannot import name 'N' from 'M' (unknown location)`: M
    # has no __file__, a namespace package (a directory without __init__.py) where a name was looked up. Not Python's
    # builtin or frozen modules, which have no file either (`from itertools import batched` on 3.11).
    _sig("import-unknown-location", r"cannot import name '\w+' from '(?!" + _NO_FILE + r"')[\w.]+' \(unknown "
         r"location\)",
         "The module the name is imported from is a directory without __init__.py, which Python imports as an empty "
         "namespace package: the project's package lacks its __init__.py (never committed, not copied to the node), "
         "or a directory named like an installed package (a clone of its repository, a data or output folder, an "
         "empty directory an uninstall left in site-packages) is found before the package.",
         "Add the package's __init__.py (with the imports the code expects) and check that it reaches the node, or "
         "import from the module file itself (from models.tiny_mlp import TinyMLP); where the name is a library's, "
         "rename the directory in the script's directory or remove the leftover one (python -c \"import M; "
         "print(M.__path__)\" lists where it is found). A restart fails the same way.", retry=False),
    # Round 183 (live): transformers' own checks of an optional dependency (an extra) a feature needs:
    # trainer_optimizer.py's (5.x; trainer.py's in 4.x) "You need to install `bitsandbytes` in order to use bitsandbytes
    # optimizers", "`galore_torch` in order to use GaLore optimizers", the tokenizers' "You need to install sacremoses
    # to use XLMTokenizer", and utils/import_utils.py requires_backends' "{0} requires the SentencePiece library but it
    # was not found in your environment". Not a version too old (`requires accelerate>=0.26.0`: package-too-old's).
    _sig("optional-dependency-missing", r"You need to install `?[\w.\[\]>=<-]+`? (?:in order )?to use |requires the "
         r"[^\n]{1,40}? library but it was not found in your environment",
         "The code uses a feature of a library that needs an optional dependency (one of its extras) which is not "
         "installed in the python the ranks run: the message names it (bitsandbytes for an 8-bit or paged "
         "optimizer, sentencepiece or sacremoses for a tokenizer, galore_torch for GaLore).",
         "Install the package the message names in that environment, the same on every node (pip install "
         "bitsandbytes, or the library's extra: pip install \"transformers[sentencepiece]\"), or choose a feature "
         "that does not need it (optim=\"adamw_torch\" in place of an 8-bit one). A restart fails the same way.",
         retry=False),
    # Round 183 (live): an f-string that reuses its own quote inside a replacement field (f"{m["loss"]}"), valid only
    # from Python 3.12 (PEP 701). An older CPython's tokenizer ends the string at the inner quote and its f-string
    # parser (Parser/string_parser.c fstring_find_expr) reports the bracket left open, "f-string: unmatched '['" (3.9
    # to 3.11, '(' for a call; 3.6 to 3.8 say only "invalid syntax"); read only where the source line Python shows
    # above it holds an f-string and a bracket followed by a quote (a missing `]}` alone, f"{x[0", is not it).
    _sig("fstring-newer-python", r"^(?=[^\n]*?\bf[\"'])(?=[^\n]*?[\[(][\"'])[^\n]*\n(?:[^\n]*?[\^~]+[ \t]*\n)?"
         r"[^\n]*?SyntaxError: f-string: unmatched '[\[(]'",
         "An f-string reuses its own quote inside its braces (f\"{d[\"key\"]}\"), which only Python 3.12 and newer "
         "accept (PEP 701): the code was written with a newer Python than the one that runs it, whose tokenizer "
         "ends the string at the inner quote.",
         "Use the other quote inside the braces (f\"{d['key']}\"), or run the job with Python 3.12 or newer, the same "
         "on every node (python --version in the environment the ranks use). A restart fails the same way.",
         retry=False),
    # Round 175 (live): CPython's multiprocessing/context.py, set_start_method called again without force=True.
    _sig("mp-start-method-twice", r"RuntimeError: context has already been set",
         "multiprocessing.set_start_method (or torch.multiprocessing's) was called when the start method was already "
         "set: the script sets it twice (at module level and in main(), in a function run for each worker or "
         "epoch), or an imported module or library set it first.",
         "Call set_start_method once, under if __name__ == '__main__': before any process starts; elsewhere use "
         "multiprocessing.get_context('spawn') for the Pool or Process that needs it, or pass force=True. A restart "
         "fails the same way.", retry=False),
    # Round 175 (live): CPython's concurrent/futures/process.py (_ExecutorManagerThread.terminate_broken, 3.9+; older
    # _queue_management_worker): a worker of a ProcessPoolExecutor ended without returning its result, and every
    # pending future raises BrokenProcessPool "A process in the process pool was terminated abruptly while the future
    # was running or pending."; a later submit gets "A child process terminated abruptly, the process pool is not
    # usable anymore". Not the initializer's failure, a result failing to un-pickle, nor loky's TerminatedWorkerError.
    _sig("process-pool-broken", r"BrokenProcessPool: (?:A process in the process pool was terminated abruptly|"
         r"A child process terminated abruptly)",
         "A worker process of a concurrent.futures ProcessPoolExecutor (a data preparation or tokenizing step) died "
         "without returning its result: the kernel killed it (out of memory: see dmesg), a native library crashed "
         "in it (a segfault), the worker's code ended the process (os._exit, a library calling exit), or a spawned "
         "worker failed while importing the script. The worker's own error, if any, is in the lines before.",
         "Find why the worker died: its own traceback in the log, dmesg for the OOM killer, the exit code; give the "
         "pool fewer workers (max_workers) or less data per task when memory runs out, raise an exception instead "
         "of exiting in worker code, and keep module-level work under if __name__ == '__main__':. A restart fails "
         "the same way when the data or code is the cause.", retry=False),
    # Round 175 (live): multiprocessing.Pool (map, apply_async, imap) and a Queue's put pickle each task's function and
    # arguments in multiprocessing/reduction.py, ForkingPickler.dumps (called from connection.py's send), whatever the
    # start method (fork too): pickle refuses a lambda or nested function (_pickle.c save_global: AttributeError "Can't
    # pickle local object 'f.<locals>.g'"; PicklingError "Can't pickle <function <lambda> ...>: attribute lookup
    # <lambda> on __main__ failed"; TypeError "cannot pickle 'T' object").
    # Only right after the dumps frame; spawn-unpicklable (sigtraining.py, earlier) keeps spawn's Process (its dump).
    _sig("pool-unpicklable", r"multiprocessing[/\\]reduction\.py\", line \d+, in dumps\n(?:[^\n]*\n){1,3}?[^\n]*?"
         r"(?P<ev>(?:AttributeError: Can't pickle local object|(?:_pickle\.)?PicklingError: Can't pickle|"
         r"TypeError: cannot pickle) [^\n]*)",
         "A multiprocessing Pool (map, imap, apply_async) or Queue pickles the function and arguments it sends to "
         "its worker processes, whatever the start method, and one of them cannot be pickled: a lambda, a function "
         "or class defined inside another function (<locals>), a lock, an open file or connection.",
         "Define the function at module level (functools.partial of a module-level function for extra arguments) "
         "instead of a lambda or a nested function, and create unpicklable objects (locks, files, connections) in "
         "the worker (the Pool's initializer). A restart fails the same way.", retry=False),
    # Round 186 (live): a tensor put on a torch.multiprocessing Queue (or Pipe) is shared through its producer: with
    # the default file_descriptor strategy torch/multiprocessing/reductions.py's rebuild_storage_fd asks the producer
    # for the descriptor (`fd = df.detach()`, CPython's multiprocessing/resource_sharer.py connecting to the
    # producer's listener), and a producer that has exited refuses it: ConnectionRefusedError [Errno 111], or
    # FileNotFoundError [Errno 2] for its socket file gone, ConnectionResetError while it exits. Only under that frame.
    _sig("mp-queue-producer-exited", r"reductions\.py\"?, line \d+, in rebuild_storage_fd\n(?:(?!Traceback \(most "
         r"recent call last\))[^\n]*\n){0,16}?[^\n]*?(?P<ev>(?:ConnectionRefusedError|FileNotFoundError|"
         r"ConnectionResetError)\b[^\n]*)",
         "A tensor received from a torch.multiprocessing Queue (or Pipe) could not be rebuilt: torch shares a queued "
         "tensor's memory through the process that put it there, which must still be alive when the tensor is "
         "received, and that process had already exited (it returned, or was joined, before its tensors were "
         "taken off the queue). CUDA tensors sent between processes need the same.",
         "Keep the producer alive until the consumer has received everything (get every item before join(), or "
         "have the producer wait on an Event or a 'done' message), or send plain data (tensor.tolist(), numpy "
         "arrays) instead of tensors; torch.multiprocessing.set_sharing_strategy('file_system') lifts the "
         "descriptor exchange but not the need to receive the tensors first. A restart fails the same way.",
         retry=False),
)
