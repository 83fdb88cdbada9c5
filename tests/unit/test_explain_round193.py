"""Round 193's rules (issue 45, live: hand-written tensor and pipeline parallelism over torch.distributed process
subgroups): a send past the last pipeline stage, whose peer never publishes its address (p2p-dst-not-in-world), a
list of ranks given as group= (group-not-process-group), a group's world size of -1 on a rank outside it used to
split a weight (group-size-not-member), and all_gather's output of another size than its input needs
(all-gather-output-size). Each on its case's log, second wordings, and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("p2p-dst-not-in-world", "group-not-process-group", "group-size-not-member", "all-gather-output-size")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-pp-send-past-last-stage", "p2p-dst-not-in-world"),
    ("live-tp-group-rank-list", "group-not-process-group"),
    ("live-tp-group-loop-keeps-last", "group-size-not-member"),
    ("live-tp-all-gather-into-tensor-full-size", "all-gather-output-size"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text()) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_C10D = '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line {}, in {}\n    {}\n'


@pytest.mark.parametrize("text, name", [
    # a recv from a src no process has, unprefixed
    (_TB + _C10D.format(2700, "irecv", "return pg.recv([tensor], group_src, tag)")
     + "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg/0//cpu//0/4\n",
     "p2p-dst-not-in-world"),
    # a tuple of ranks given to barrier, ranks' prefixes
    ("[rank1]: " + _TB.replace("\n", "\n[rank1]: ", 3) + "[rank1]: " + _C10D.format(4800, "barrier", "x")
     .replace("\n    ", "\n[rank1]:     ") + "[rank1]: TypeError: unhashable type: 'tuple'\n", "group-not-process-group"),
    # all_gather's output list of full-size buffers
    (_TB + "RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected (4, 16), got (8, 16))\n",
     "all-gather-output-size"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a matching call that never came, the pair already made: p2p-recv-timeout's
    (_TB + _C10D.format(2753, "send", "work.wait()") + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/"
     "unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete\n", "p2p-dst-not-in-world"),
    # the store's wait timeout at rendezvous, no p2p frame
    (_TB + "torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /default_pg//cpu//0/1\n",
     "p2p-dst-not-in-world"),
    # a user's own dict keyed by a list
    (_TB + '  File "train.py", line 12, in build\n    cache[ranks] = g\nTypeError: unhashable type: \'list\'\n',
     "group-not-process-group"),
    # chunk of 0 pieces (an empty world computed elsewhere)
    (_TB + "RuntimeError: chunk expects `chunks` to be greater than 0, got: 0\n", "group-size-not-member"),
    # the ranks' all_gather tensors of different sizes met in the transport: collective-mismatch's
    (_TB + "RuntimeError: [enforce fail at gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 2048 vs "
     "1024\n", "all-gather-output-size"),
])
def test_near_misses(text, name):
    assert sig(text) != name
