"""Round 168's rules (issue 45), from scripts that assume how they are started and get it wrong under a launcher
(dscluster launch, DeepSpeed's launcher: --local_rank=N and RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_SIZE, MASTER_*):
torchrun's own variables read where torchrun did not start the process (torchrun-var-unset), a relative import in a
script run as a file (relative-import-no-package), torch.multiprocessing.spawn under a launcher, its child's store port
taken (spawn-under-launcher; rankerror reads a ProcessRaisedException as its child's error), click/fire/absl refusing
--local_rank (local-rank-arg), torch's FileStore waiting for ranks that use another file (file-store-not-shared), and a
TCPStore client's wait ("wait timeout after Nms, keys: ...") read as a symptom so rank 0's "N/M clients joined" names a
world size larger than the ranks launched (store-ranks-missing). Second wordings and near misses."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("torchrun-var-unset", "relative-import-no-package", "spawn-under-launcher", "file-store-not-shared")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)
    for s in explain.SIGNATURES:
        if (s.name == "local-rank-arg" and "click" in s.cause) or s.name == "store-ranks-missing":
            assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH and not s.retry


def _tb(code: str, last: str, frame: str = '  File "<frozen os>", line 679, in __getitem__\n') -> str:
    return ('Traceback (most recent call last):\n  File "/w/train.py", line 12, in <module>\n'
            f"    {code}\n{frame}{last}\n")


@pytest.mark.parametrize("text", [
    _tb('rank = int(os.environ["GROUP_RANK"])', "KeyError: 'GROUP_RANK'"),
    _tb('run_id = os.environ["TORCHELASTIC_RUN_ID"]', "KeyError: 'TORCHELASTIC_RUN_ID'",
        '  File "/usr/lib/python3.8/os.py", line 675, in __getitem__\n    raise KeyError(key) from None\n'),
])
def test_torchrun_variable_unset(text):
    assert sig(text) == "torchrun-var-unset"


@pytest.mark.parametrize("text", [
    _tb('local_rank = int(os.environ["LOCAL_RANK"])', "KeyError: 'LOCAL_RANK'"),  # not-launched's
    _tb('root = os.environ["DATA_ROOT"]', "KeyError: 'DATA_ROOT'"),  # env-var-unset's
    # the script's own dict, no os frame
    _tb('n = cfg["LOCAL_WORLD_SIZE"]', "KeyError: 'LOCAL_WORLD_SIZE'", ""),
])
def test_near_misses_are_not_torchrun_variable_unset(text):
    assert sig(text) != "torchrun-var-unset"


@pytest.mark.parametrize("text", [
    _tb("from .utils import seed_all", "SystemError: Parent module '' not loaded, cannot perform relative import", ""),
    _tb("from .utils import seed_all", "ValueError: Attempted relative import in non-package", ""),
])
def test_relative_import_without_package(text):
    assert sig(text) == "relative-import-no-package"


@pytest.mark.parametrize("text", [
    _tb("from ...common import utils", "ImportError: attempted relative import beyond top-level package", ""),
    _tb("from model import Net",
        "ImportError: cannot import name 'Net' from partially initialized module 'model' (most likely due to a "
        "circular import) (/w/model.py)", ""),
])
def test_near_misses_are_not_relative_import_without_package(text):
    assert sig(text) != "relative-import-no-package"


def _spawned(child_last: str, header: str = "torch.multiprocessing.spawn.ProcessRaisedException: ") -> str:
    return ('Traceback (most recent call last):\n  File "/w/main.py", line 70, in <module>\n'
            "    mp.spawn(run, args=(2,), nprocs=2)\n"
            '  File "/opt/torch/multiprocessing/spawn.py", line 158, in join\n'
            "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
            f"{header}\n\n-- Process 1 terminated with the following error:\nTraceback (most recent call last):\n"
            '  File "/opt/torch/multiprocessing/spawn.py", line 69, in _wrap\n    fn(i, *args)\n'
            '  File "/w/main.py", line 22, in run\n    dist.init_process_group("nccl", rank=rank, world_size=2)\n'
            f"{child_last}\n")


@pytest.mark.parametrize("text", [
    # torch 1.x's TCPStore words (1.9-1.13 raise ProcessRaisedException; before 1.9 a bare Exception, not read)
    _spawned("RuntimeError: Address already in use", "torch.multiprocessing.spawn.ProcessRaisedException: "),
    _spawned("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
             "address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"),
])
def test_spawn_under_a_launcher(text):
    assert sig(text) == "spawn-under-launcher"


@pytest.mark.parametrize("text", [
    _spawned("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
             "MASTER_ADDR expected, but not set"),
    # a port taken without spawn: address-in-use's
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
     "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n"),
    # the child's own socket server (Python's [Errno 98]), not the rendezvous store
    _spawned("OSError: [Errno 98] Address already in use"),
])
def test_near_misses_are_not_spawn_under_a_launcher(text):
    assert sig(text) != "spawn-under-launcher"


@pytest.mark.parametrize("text", [
    "Usage: train.py [OPTIONS]\nTry 'train.py --help' for help.\n\nError: No such option: --local_rank (Possible "
    "options: --local-rank, --lr)\n",  # click 8.0
    "Usage: train.py [OPTIONS]\n\nError: no such option: --local_rank\n",  # click 7
    "ERROR: Could not consume arg: --local_rank=3\nUsage: train.py <flags>\n",  # python-fire
    "FATAL Flags parsing error: Unknown command line flag 'local_rank'\nPass --helpshort or --helpfull to see help on "
    "flags.\n",  # absl
])
def test_local_rank_refused_by_other_parsers(text):
    assert sig(text) == "local-rank-arg"


@pytest.mark.parametrize("text", [
    "Usage: train.py [OPTIONS]\nTry 'train.py --help' for help.\n\nError: No such option '--batch-size'.\n",
    "ERROR: Could not consume arg: --epochs\nUsage: train.py <flags>\n",
])
def test_near_misses_are_not_local_rank_arg(text):
    assert sig(text) != "local-rank-arg"


_FILE_TB = ('Traceback (most recent call last):\n  File "/w/train.py", line 30, in <module>\n'
            '    dist.init_process_group("gloo", init_method="file:///scratch/init", rank=r, world_size=4)\n'
            '  File "/opt/torch/distributed/distributed_c10d.py", line 1899, in init_process_group\n'
            "    default_pg, _ = _new_process_group_helper(\n")


@pytest.mark.parametrize("text", [_FILE_TB + "torch.distributed.DistStoreError: Wait timeout\n",
                                  _FILE_TB + "RuntimeError: Wait timeout\n"])
def test_file_store_not_shared(text):
    assert sig(text) == "file-store-not-shared"


@pytest.mark.parametrize("text", [
    _FILE_TB + "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0/0\n",
    "RuntimeError: Timed out waiting 1800000ms for recv operation to complete\n",
    "horovod.common.exceptions.HorovodInternalError: Wait timeout for key(s): 0\n",
])
def test_near_misses_are_not_file_store_not_shared(text):
    assert sig(text) != "file-store-not-shared"


_CLIENT = ("[localhost 1] Traceback (most recent call last):\n"
           '[localhost 1]   File "/w/train.py", line 15, in <module>\n'
           "[localhost 1]     dist.init_process_group('gloo', rank=rank, world_size=8)\n"
           "[localhost 1] torch.distributed.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/0\n")
_SERVER = ("[localhost 0] Traceback (most recent call last):\n"
           '[localhost 0]   File "/w/train.py", line 15, in <module>\n'
           "[localhost 0]     dist.init_process_group('gloo', rank=rank, world_size=8)\n"
           "[localhost 0] torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. 2/8 "
           "clients joined.\n")


def test_a_store_clients_wait_is_a_symptom_of_the_missing_ranks():
    assert sig(_CLIENT + _SERVER) == "store-ranks-missing"


def test_a_store_clients_wait_alone_is_not_store_ranks_missing():
    assert sig(_CLIENT) != "store-ranks-missing"
