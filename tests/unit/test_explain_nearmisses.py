"""Near misses of the broad rules (session 25 of issue 45, src/dscluster/sigwords.py): the same words a rule reads,
printed by another component or raised in the script's own code, must not get that rule's cause; the words of the
component whose check names the cause still do. Rounds 19-28 measured 9 misleading answers of 84 unseen logs, every
one of this kind (`No module named 'mpi4py'` read as a launch without a launcher, a dotted module of an installed
package as not installed, and the others RESULTS.md lists)."""

import pytest
from explain_rounds import sig

from dscluster import explain

_TB = "Traceback (most recent call last):\n"


@pytest.mark.parametrize("text,not_expected", [
    # mpi4py imported by the script itself (an MPI job's own code): not installed, no launch without a launcher
    (_TB + '  File "/home/u/hpc/train_hvd.py", line 5, in <module>\n    from mpi4py import MPI\n'
     "ModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    ("[rank0]: " + _TB + '[rank0]:   File "/work/sim/run.py", line 12, in <module>\n[rank0]:     import mpi4py.rc\n'
     "[rank0]:     ^^^^^^^^^^^^^\n[rank0]: ModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    # a dotted module: its package imported (an unlisted framework's other version, the code's own package)
    (_TB + '  File "/work/cogvlm/finetune.py", line 9, in <module>\n    from sat.model.official import ChatGLMModel\n'
     "ModuleNotFoundError: No module named 'sat.model.official'\n", "module-not-found"),
    ("ModuleNotFoundError: No module named 'trainer.utils'; 'trainer' is not a package\n", "module-not-found"),
    # a name missing from the script's own module (Python's circular import: circular-import, round 183's test)
    (_TB + '  File "/home/u/proj/train.py", line 4, in <module>\n    from models import build_model\n'
     "ImportError: cannot import name 'build_model' from 'models' (/home/u/proj/models/__init__.py)\n", "import-name"),
    # a running script that opens a .py file (it was itself found), and the interpreter refused the script (EACCES)
    (_TB + '  File "/work/train.py", line 30, in <module>\n    shutil.copy("configs/model_cfg.py", out_dir)\n'
     '  File "/usr/lib/python3.10/shutil.py", line 256, in copyfile\n    with open(src, \'rb\') as fsrc:\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'configs/model_cfg.py'\n", "script-not-found"),
    ("python3: can't open file '/shared/train.py': [Errno 13] Permission denied\n", "script-not-found"),
    # the script's own server on a taken port (Python's socket error, uvicorn's), not the rendezvous
    (_TB + '  File "/work/serve_and_train.py", line 51, in <module>\n    httpd = HTTPServer(("", 8000), Handler)\n'
     '  File "/usr/lib/python3.10/socketserver.py", line 466, in server_bind\n'
     "    self.socket.bind(self.server_address)\nOSError: [Errno 98] Address already in use\n", "address-in-use"),
    ("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n",
     "address-in-use"),
    # torch's own cuDNN check (torch 0.4's words): torch against the cuDNN it loads, not the nodes' torch/DeepSpeed
    (_TB + '  File "/opt/conda/lib/python3.6/site-packages/torch/backends/cudnn/__init__.py", line 79, in _check\n'
     "    raise RuntimeError(\nRuntimeError: cuDNN version mismatch: PyTorch was compiled against 7005 but linked "
     "against 7102\n", "version-mismatch"),
    # a package newer than this Python (its own file does not compile), code compiled from a string
    (_TB + '  File "train.py", line 3, in <module>\n    import deepspeed\n'
     '  File "/opt/conda/lib/python3.7/site-packages/deepspeed/runtime/engine.py", line 1034\n'
     "    if (mode := self.mode) is None:\n            ^\nSyntaxError: invalid syntax\n", "syntax-error"),
    (_TB + '  File "/work/train.py", line 20, in <module>\n    cfg = eval(args.config)\n  File "<string>", line 1\n'
     "    {'lr': 1e-4,\n    ^\nSyntaxError: '{' was never closed\n", "syntax-error"),
    # torch's own library loaded against another MKL (MKL 2024.1, pytorch/pytorch#123097), an MPI binding against
    # another MPI: no extension built against another torch
    ("ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: "
     "iJIT_NotifyEvent\n", "undefined-symbol"),
    ("ImportError: /opt/venv/lib/python3.10/site-packages/mpi4py/MPI.cpython-310-x86_64-linux-gnu.so: undefined "
     "symbol: ompi_mpi_logical8\n", "undefined-symbol"),
    # ENOSPC of inotify's watch limit (watchdog's words), not a disk
    (_TB + '  File "/opt/venv/lib/python3.10/site-packages/watchdog/observers/inotify_c.py", line 428, in _add_watch\n'
     "    Inotify._raise_error()\nOSError: [Errno 28] inotify watch limit reached\n", "disk-full"),
    # a client of a server on the node itself (a local API that is down), not an address announced to the peers
    (_TB + '  File "/work/eval.py", line 40, in <module>\n    r = client.generate(p)\n'
     "openai.APIConnectionError: Failed to connect to 127.0.0.1:8000\n", "loopback-address"),
    # the script's own dict with a key named RANK, not os.environ
    (_TB + '  File "/work/train.py", line 12, in <module>\n    rank = cfg["RANK"]\nKeyError: \'RANK\'\n', "not-launched"),
])
def test_a_near_miss_gets_no_specific_wrong_cause(text, not_expected):
    found = sig(text)
    assert found != not_expected
    # the rank's own words or the OS's (generic), except the script's own import of mpi4py: not installed
    assert found in explain.GENERIC or (not_expected == "not-launched" and found == "module-not-found"), found


@pytest.mark.parametrize("text,expected", [
    # the script's own import of mpi4py: it is not installed
    (_TB + '  File "/home/u/hpc/train_hvd.py", line 5, in <module>\n    from mpi4py import MPI\n'
     "ModuleNotFoundError: No module named 'mpi4py'\n", "module-not-found"),
    # a module of a package that is not one (a script named like it), and eval'd text: the rank's own words
    ("ModuleNotFoundError: No module named 'trainer.utils'; 'trainer' is not a package\n", "python-error"),
    (_TB + '  File "/work/train.py", line 20, in <module>\n    cfg = eval(args.config)\n  File "<string>", line 1\n'
     "    {'lr': 1e-4,\n    ^\nSyntaxError: '{' was never closed\n", "python-error"),
])
def test_a_near_miss_keeps_what_it_is(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed's MPI discovery: its frame (comm.py), its INFO line before a cut traceback, the bare line
    ('  File "/opt/conda/lib/python3.9/site-packages/deepspeed/comm/comm.py", line 677, in mpi_discovery\n'
     "    from mpi4py import MPI\nModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    ("[2024-05-02 10:00:00,000] [INFO] [comm.py:637:init_distributed] Not using the DeepSpeed or dist launchers, "
     "attempting to detect MPI environment...\n[rank0]: ModuleNotFoundError: No module named 'mpi4py'\n",
     "not-launched"),
    ("ModuleNotFoundError: No module named 'mpi4py'\n", "not-launched"),
    # a top-level module missing; a listed package's submodule; a module under site-packages without the name
    ("ModuleNotFoundError: No module named 'flash_attn'\n", "module-not-found"),
    ("ModuleNotFoundError: No module named 'colossalai.legacy'\n", "import-name"),
    ("ImportError: cannot import name 'TP_REPLICATED_PARAMETER_PATTERNS' from 'deepspeed.checkpoint' "
     "(/usr/local/lib/python3.10/dist-packages/deepspeed/checkpoint/__init__.py)\n", "import-name"),
    ("ImportError: cannot import name 'cached_download' from 'somehub' "
     "(/opt/venv/lib/python3.11/site-packages/somehub/__init__.py)\n", "import-name"),
    # the interpreter's words for a missing script; a launcher executing it (subprocess's frame)
    ("python3: can't open file '/w/train.py': [Errno 2] No such file or directory\n", "script-not-found"),
    (_TB + '  File "/usr/lib/python3.10/subprocess.py", line 1847, in _execute_child\n'
     "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'train.py'\n", "script-not-found"),
    # torch's c10d on the rendezvous port
    ("RuntimeError: Address already in use\n", "address-in-use"),
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
     "server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n", "address-in-use"),
    # DeepSpeed's op builder's words, both versions it checks
    ("RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version "
     "than what is being used at runtime.\n", "version-mismatch"),
    ("RuntimeError: CUDA version mismatch! DeepSpeed ops were compiled and installed with a different version than "
     "what is being used at runtime.\n", "version-mismatch"),
    # the script's own syntax error, with its file and alone
    ('  File "/shared/exp/train.py", line 57\n    for step, batch in enumerate(loader)\n'
     "                                       ^\nSyntaxError: expected ':'\n", "syntax-error"),
    ("SyntaxError: invalid syntax\n", "syntax-error"),
    # an extension built against another torch
    ("ImportError: /usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN3c104cuda9SetDeviceEi\n", "undefined-symbol"),
    # gloo's and NCCL's words for a loopback address of a peer
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:32455: Connection "
     "refused\n", "loopback-address"),
    ("node2:1234:1290 [0] misc/socket.cc:484 NCCL WARN Net : Connect to 127.0.1.1<46129> failed : Connection refused\n",
     "loopback-address"),
    # os.environ without a launcher's variable: os.py's frame, IPython's form of it, the bare line
    (_TB + '  File "/work/train.py", line 12, in <module>\n    local_rank = int(os.environ["LOCAL_RANK"])\n'
     '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n    raise KeyError(key) from None\n'
     "KeyError: 'LOCAL_RANK'\n", "not-launched"),
    ("File ~\\anaconda3\\envs\\pt\\lib\\os.py:680, in _Environ.__getitem__(self, key)\n"
     "--> 680     raise KeyError(key) from None\n    681 return self.decodevalue(value)\n\nKeyError: 'WORLD_SIZE'\n",
     "not-launched"),
    ("[rank0]: KeyError: 'LOCAL_RANK'\n", "not-launched"),
    # a full disk
    ("OSError: [Errno 28] No space left on device: '/ckpt/step-9/model.pt'\n", "disk-full"),
])
def test_the_components_own_words_still_name_the_cause(text, expected):
    assert sig(text) == expected


def test_a_near_miss_is_answered_in_the_rank_s_own_words():
    found = explain.explain(_TB + '  File "/work/cogvlm/finetune.py", line 9, in <module>\n'
                            "    from sat.model.official import ChatGLMModel\n"
                            "ModuleNotFoundError: No module named 'sat.model.official'\n")
    assert found.signature == "python-error" and "finetune.py" in found.evidence + str(found.params)
