"""Round 201's rules (issue 45, live: rendezvous and process-group creation written by hand): a timeout that is not a
timedelta (pg-timeout-not-timedelta), a world size of 0 (pg-world-size-zero), tcp:// without rank or port and file://
without a path (init-method-no-rank, init-method-no-port, init-method-file-no-path), a hand-built store given without
rank and world size (pg-store-no-rank-world), a CUDA device_id on a CPU build (pg-device-id-no-accelerator), a
TCPStore built by hand as master on every rank (tcpstore-master-every-rank) or counting more clients than the job
has (store-world-size-hand-built), and the default group used after destroy_process_group (pg-used-after-destroy).
The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain

NEW = ("pg-timeout-not-timedelta", "pg-world-size-zero", "init-method-no-rank", "init-method-no-port",
       "init-method-file-no-path", "pg-store-no-rank-world", "pg-device-id-no-accelerator",
       "tcpstore-master-every-rank", "store-world-size-hand-built", "pg-used-after-destroy")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-rdzv-timeout-int-seconds", "pg-timeout-not-timedelta"),
    ("live-rdzv-setup-rank-world-swapped", "pg-world-size-zero"),
    ("live-rdzv-tcp-init-no-rank", "init-method-no-rank"),
    ("live-rdzv-tcp-init-no-port", "init-method-no-port"),
    ("live-rdzv-file-init-relative-path", "init-method-file-no-path"),
    ("live-rdzv-store-without-rank-world", "pg-store-no-rank-world"),
    ("live-rdzv-device-id-cuda-on-cpu", "pg-device-id-no-accelerator"),
    ("live-rdzv-tcpstore-master-every-rank", "tcpstore-master-every-rank"),
    ("live-rdzv-tcpstore-world-plus-one", "store-world-size-hand-built"),
    ("live-rdzv-destroy-then-barrier", "pg-used-after-destroy"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


def test_rank_files_of_the_destroyed_group():
    """The supervisor reads each rank's own file, where torch's `[rankN]: ` prefix starts the line."""
    for log in sorted((LIVE / "live-rdzv-destroy-then-barrier" / "logs").glob("*_rank*.log")):
        assert sig(log.read_text(encoding="utf-8")) == "pg-used-after-destroy"


_TB = 'Traceback (most recent call last):\n  File "/home/u/proj/train.py", line 40, in <module>\n    main()\n'
_C10D = "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py"
_RDZV = "/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py"
_STORE_LINE = '  File "/home/u/proj/dist_utils.py", line 12, in make_store\n' \
              "    return TCPStore(host, port, world, True, timeout=timedelta(minutes=5))\n"


@pytest.mark.parametrize("text, name", [
    # new_group's own check, a float
    (_TB + f'  File "{_C10D}", line 4910, in new_group\n    _check_valid_timeout(timeout)\n'
     "TypeError: Expected timeout argument to be of type datetime.timedelta, got 1800.0\n", "pg-timeout-not-timedelta"),
    # a store built by hand from torch.cuda.device_count() on a CPU node
    (_TB + "ValueError: TCPStore world size cannot be 0\n", "pg-world-size-zero"),
    # file:// without world size
    (_TB + f'  File "{_RDZV}", line 147, in _file_rendezvous_handler\n    raise _error("world size parameter missing")\n'
     "ValueError: Error initializing torch.distributed using file:// rendezvous: world size parameter missing\n",
     "init-method-no-rank"),
    (_TB + "AssertionError: rank must be non-negative if using store\n", "pg-store-no-rank-world"),
    (_TB + "ValueError: device_id is an int, but no accelerator support is found from the current compilation. Please "
     "use a different compiled version that supports your accelerator.\n", "pg-device-id-no-accelerator"),
    # the store built in a helper module, lines under torch's rank prefix, Python 3.10 (no caret line)
    ("\n".join("[rank1]: " + ln for ln in (_TB + _STORE_LINE).splitlines()) + "\n[rank1]: torch.distributed."
     "DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: "
     "false, code: -98, name: EADDRINUSE, message: address already in use\n", "tcpstore-master-every-rank"),
    (_TB + _STORE_LINE + "torch.distributed.DistStoreError: Timed out after 301 seconds waiting for clients. 8/9 clients "
     "joined.\n", "store-world-size-hand-built"),
    # a group destroyed then used by get_rank, under a pdsh-style host prefix
    ("node1: [rank3]: Traceback (most recent call last):\nnode1: [rank3]:   File \"eval.py\", line 9, in <module>\n"
     "node1: [rank3]: ValueError: Default process group has not been initialized, please make sure to call "
     "init_process_group.\n", "pg-used-after-destroy"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # torch's own env:// store failing to listen (another job on the port): the general address-in-use's
    (_TB + f'  File "{_RDZV}", line 199, in _create_c10d_store\n    return TCPStore(\n           ^^^^^^^^^\n'
     "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: "
     "29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n",
     "tcpstore-master-every-rank"),
    # torch's own env:// store waiting for ranks never started: store-ranks-missing's
    (_TB + f'  File "{_RDZV}", line 199, in _create_c10d_store\n    return TCPStore(\n'
     "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.\n",
     "store-world-size-hand-built"),
    # a group never initialized (no torch prefix): pg-not-initialized's
    (_TB + "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n",
     "pg-used-after-destroy"),
    # a timeout of the wrong type elsewhere (a requests call): not torch's words
    (_TB + "TypeError: Timeout value connect was 20, but it must be an int, float or None.\n",
     "pg-timeout-not-timedelta"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_near_misses_keep_their_general_answers():
    env_store = (_TB + f'  File "{_RDZV}", line 199, in _create_c10d_store\n    return TCPStore(\n'
                 "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
                 "address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n")
    assert sig(env_store) == "address-in-use"
    never = _TB + "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"
    assert sig(never) == "pg-not-initialized"
    assert explain.explain(never) is not None
