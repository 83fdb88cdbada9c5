"""Round 181's rules (issue 45, live: hangs and collective timeouts a user's code causes): a blocking point-to-point
recv/send that timed out waiting for its peer (p2p-recv-timeout: distributed_c10d.py's recv/send frame before gloo's
unbound_buffer.cc timeout or NCCL's watchdog, or the watchdog's `WorkNCCL(... OpType=RECV ...) ran for`); two ranks whose
own gloo timeouts were raised in different calls (collective-mismatch: barrier on one, all_reduce or backward's DDP
all_reduce or a DeepSpeed ZeRO-3 gather on another); and pdb quitting in a launched rank (pdb-no-terminal: bdb.py's
`raise BdbQuit`, printed `bdb.BdbQuit`). Second wordings (other versions' and callers' words than the live cases they were
written from) and near misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("p2p-recv-timeout", "pdb-no-terminal")
GLOO_RECV = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv "
GLOO_SEND = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms for send "
C10D = '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line {}, in {}\n'


def _rank(n: int, text: str) -> str:
    return "".join(f"[rank{n}]: {line}\n" for line in text.splitlines())


def test_new_rules_are_translated_and_final():
    mine = [s for s in explain.SIGNATURES if s.name in NEW or (s.name == "collective-mismatch" and "timed out waiting "
                                                                "in different collectives" in s.cause)]
    assert {s.name for s in mine} == {*NEW, "collective-mismatch"}
    for s in mine:
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH and not s.retry, s.name


@pytest.mark.parametrize("text", [
    # NCCL's watchdog on a rank whose recv's sender never came (ProcessGroupNCCL.cpp's WorkNCCL description)
    ("[rank1]:[E1104 10:22:31.448000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=3, OpType=RECV, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600042 milliseconds "
     "before timing out.\n"),
    # a blocking send under gloo in torch 1.13 (default_pg.send(...).wait(), unbound_buffer.cc's waitSend)
    ("Traceback (most recent call last):\n"
     '  File "/home/u/pipe.py", line 30, in <module>\n'
     "    dist.send(act, dst=1)\n" + C10D.format(1159, "send") + "    default_pg.send([tensor], dst, tag).wait()\n"
     + GLOO_SEND + "operation to complete\n"),
    # DeepSpeed's pipeline p2p reaching torch's recv through deepspeed.comm
    ("Traceback (most recent call last):\n"
     '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/p2p.py", line 81, in recv\n'
     "    return dist.recv(tensor, src_rank)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/comm/torch.py", line 477, in recv\n'
     "    return torch.distributed.recv(tensor=tensor, src=src, group=group, tag=tag)\n"
     + C10D.format(2463, "recv") + "    pg.recv([tensor], group_src, tag).wait()\n" + GLOO_RECV + "operation to complete\n"),
])
def test_p2p_recv_timeout(text):
    assert sig(text) == "p2p-recv-timeout"


@pytest.mark.parametrize("text", [
    # a barrier's timeout: gloo says "recv operation" for every collective
    ("Traceback (most recent call last):\n"
     '  File "/home/u/train.py", line 30, in <module>\n'
     "    dist.barrier()\n" + C10D.format(4811, "barrier") + "    work.wait()\n" + GLOO_RECV + "operation to complete\n"),
    # NCCL's watchdog on a collective, not a p2p op
    ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, "
     "NumelOut=1, Timeout(ms)=1800000) ran for 1800562 milliseconds before timing out.\n"),
    # a recv whose peer is gone: gloo's pair.cc, not a timeout
    ("Traceback (most recent call last):\n" + C10D.format(2799, "recv") + "    work.wait()\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.0.0.2]:4793\n"),
])
def test_near_misses_are_not_p2p_recv_timeout(text):
    assert sig(text) != "p2p-recv-timeout"


_IN_BARRIER = ("Traceback (most recent call last):\n" '  File "/home/u/train.py", line 51, in <module>\n'
               "    dist.barrier()\n" + C10D.format(4811, "barrier") + "    work.wait()\n" + GLOO_RECV
               + "operation to complete\n")
_IN_BACKWARD = ("Traceback (most recent call last):\n" '  File "/home/u/train.py", line 44, in <module>\n'
                "    loss.backward()\n"
                '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py", line 825, in '
                "_engine_run_backward\n    return Variable._execution_engine.run_backward(\n" + GLOO_RECV
                + "operation to complete\n")


@pytest.mark.parametrize("text", [
    # torch 2.5's frames (graph.py's _engine_run_backward), rank 0 in backward, rank 1 at the final barrier
    _rank(0, _IN_BACKWARD) + _rank(1, _IN_BARRIER),
    # all_reduce of a metric on one rank, broadcast of a flag on the other, gloo's send-side words
    _rank(0, "Traceback (most recent call last):\n" + C10D.format(2501, "all_reduce") + "    work.wait()\n" + GLOO_SEND
          + "operation to complete\n")
    + _rank(1, "Traceback (most recent call last):\n" + C10D.format(2205, "broadcast") + "    work.wait()\n"
            + GLOO_RECV + "operation to complete\n"),
    # ZeRO-3's gather of parameters on rank 0 (partition_parameters.py waits on its own handles), a barrier on rank 1
    _rank(0, "Traceback (most recent call last):\n"
          '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 2112, '
          "in _allgather_params_coalesced\n    h.wait()\n" + GLOO_SEND + "operation to complete\n")
    + _rank(1, _IN_BARRIER),
])
def test_timeouts_in_different_calls_are_a_mismatch(text):
    found = explain.explain(text)
    assert found.signature == "collective-mismatch" and "timed out waiting in different collectives" in found.cause


@pytest.mark.parametrize("text", [
    # both ranks timed out in the same call: a rank elsewhere (hung or slow), not two different collectives
    _rank(0, _IN_BARRIER) + _rank(1, _IN_BARRIER),
    # one rank timed out, the other saw its peer leave (gloo-peer-closed's words), in another call
    _rank(0, _IN_BARRIER)
    + _rank(1, "Traceback (most recent call last):\n" + C10D.format(2501, "all_reduce") + "    work.wait()\n"
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
            "[10.0.0.1]:4793\n"),
    # one rank's timeout alone
    _IN_BACKWARD,
])
def test_near_misses_are_not_a_timeout_mismatch(text):
    found = explain.explain(text)
    assert found is None or "timed out waiting in different collectives" not in found.cause


@pytest.mark.parametrize("text", [
    # Python 3.12's pdb.set_trace() entering a call (bdb.py's dispatch_call), the caret line of 3.11+
    ("Traceback (most recent call last):\n"
     '  File "/workspace/train.py", line 40, in <module>\n    evaluate(model)\n'
     '  File "/usr/lib/python3.12/bdb.py", line 126, in dispatch_call\n    if self.quitting: raise BdbQuit\n'
     "                      ^^^^^^^^^^^^^\nbdb.BdbQuit\n"),
    # a rank's prefixed lines, Python 3.8's bdb.py (no caret line)
    ('[rank0]:   File "/usr/lib/python3.8/bdb.py", line 113, in dispatch_line\n'
     "[rank0]:     if self.quitting: raise BdbQuit\n[rank0]: bdb.BdbQuit\n"),
])
def test_pdb_no_terminal(text):
    assert sig(text) == "pdb-no-terminal"


@pytest.mark.parametrize("text", [
    # IPython's deprecation warning names BdbQuit_excepthook, no debugger quit
    ("/usr/lib/python3/dist-packages/IPython/core/debugger.py:212: UserWarning: BdbQuit_excepthook is deprecated since "
     "version 5.1\n"),
    # input() with an empty stdin: stdin-eof's
    ("Traceback (most recent call last):\n"
     '  File "/workspace/train.py", line 12, in <module>\n    answer = input("Overwrite? [y/n] ")\n'
     "EOFError: EOF when reading a line\n"),
    # the debugger's prompt printed, then another error
    ("(Pdb) \nTraceback (most recent call last):\n"
     '  File "/workspace/train.py", line 12, in <module>\n    x = int(cfg["steps"])\n'
     "ValueError: invalid literal for int() with base 10: 'ten'\n"),
])
def test_near_misses_are_not_pdb_no_terminal(text):
    assert sig(text) != "pdb-no-terminal"
