"""Round 45's rules (issue 45), from multi-node training under orchestrators other than a batch scheduler
(sigelastic.py): torch elastic's rendezvous closed by an agent that ended and its rendezvous timed out before enough
nodes joined, and Triton finding no GPU driver in a CPU-only launcher process: a second wording of each, in another
version's or another caller's words than the corpus case it was written from, and near misses that must not be read
as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigelastic import ELASTIC_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # torch 1.13's traceback's last line after a scale-down (the case was the error_handler's JSON, etcd backend)
    ("  File \"/usr/local/lib/python3.6/dist-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py\", "
     "line 634, in run\n    raise RendezvousClosedError()\ntorch.distributed.elastic.rendezvous.api."
     "RendezvousClosedError\n", "elastic-rdzv-closed"),
    # torch 2.x's error_handler JSON of the timeout (the case was a traceback's last line)
    ("ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n  \"message\": {\n    \"message\": "
     "\"RendezvousTimeoutError: \",\n", "elastic-rdzv-timeout"),
    # triton's words reached through Ray's wrapper of a task's error (the case was a bare traceback)
    ("ray.exceptions.RayTaskError(RuntimeError): ray::TaskRunner.run() (pid=818177, ip=10.220.1.179)\n"
     "RuntimeError: 0 active drivers ([]). There should only be one.\n", "triton-no-gpu-driver"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a rendezvous that could not reach its store is the store's symptom, not a closed rendezvous
    ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
     "failed. See inner exception for details.\n", "elastic-rdzv-closed"),
    ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
     "failed. See inner exception for details.\n", "elastic-rdzv-timeout"),
    # a collective's timeout is not the rendezvous's
    ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
     "Timeout(ms)=600000) ran for 600033 milliseconds before timing out.\n", "elastic-rdzv-timeout"),
    # two active backends at once is another case than no GPU
    ("RuntimeError: 2 active drivers ([CudaDriver, HIPDriver]). There should only be one.\n", "triton-no-gpu-driver"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in ELASTIC_SIGNATURES:
        assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
