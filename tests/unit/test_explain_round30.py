"""Round 30's rules (issue 45), from the issue trackers of the large-scale training stacks (Kubeflow's PyTorchJob,
NeMo and Megatron-Bridge, GPT-NeoX): c10d's TCPStore client that cannot resolve MASTER_ADDR (sigtorch.py), NCCL's
topology search that loses a network device by id (signccl.py), and a name missing from an installed nvidia-modelopt,
composer or llm-foundry (sigmessages.py's installed packages): a second wording of each, in another version's or
another caller's words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.signccl import CCL_SIGNATURES
from dscluster.sigtorch import TORCH_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # newer torch (c10d/socket.cpp) warns while it retries, then times out
    ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (pytorch-master-0, 23456) cannot be retrieved (gai "
     "error: -2 - Name or service not known).\n"
     "torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to "
     "(pytorch-master-0, 23456).\n", "master-unreachable"),
    # older torch, the resolver's other word for a name it could not look up yet, in a rank's prefixed traceback
    ("[rank3]:     store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)\n"
     "[rank3]: ValueError: host not found: Temporary failure in name resolution\n", "master-unreachable"),
    # NeMo-Run's words (NVIDIA-NeMo/Run#266): the WARN of another NCCL version's line, then torch's internal error
    ("graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order\n"
     "graph/topo.h:230 NCCL WARN Could not find NET with id 0\n"
     "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:3376, internal error - please report this issue to the NCCL developers, NCCL version "
     "2.25.1\n", "nccl-topology-net"),
    ("node-3:1234:1300 [2] graph/topo.h:241 NCCL WARN Could not find NET with id 1\n", "nccl-topology-net"),
    # another module of nvidia-modelopt, and composer's, in their plain tracebacks
    ("AttributeError: module 'modelopt.torch.quantization' has no attribute 'NVFP4_DEFAULT_CFG'\n", "import-name"),
    ("ModuleNotFoundError: No module named 'composer.trainer.dist_strategy'\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a name that does not resolve for ssh or for the Hub is not the rendezvous store's
    ("ssh: Could not resolve hostname node2: Name or service not known\n", "master-unreachable"),
    ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded "
     "(Caused by NameResolutionError(\"Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name "
     "resolution)\"))\n", "master-unreachable"),
    # torch's own local addresses (no host and port of a store), and a store that refused the connection
    ("[W socket.cpp:464] [c10d] The local network addresses cannot be retrieved (gai error: -3 - Temporary failure "
     "in name resolution).\n", "master-unreachable"),
    # NCCL's other topology words: a path it falls back from, no IB device at all
    ("graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order\n",
     "nccl-topology-net"),
    ("node1:811:811 [0] NCCL INFO NET/IB : No device found.\n", "nccl-topology-net"),
    # a script named like the package (partially initialized), and the script's own module
    ("AttributeError: partially initialized module 'composer' has no attribute 'Trainer' (most likely due to a "
     "circular import)\n", "import-name"),
    ("AttributeError: module 'modelopt_utils' has no attribute 'prune'\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("torch.distributed.DistNetworkError: The client socket has timed out after 60s while trying to "
               "connect to (10.0.0.1, 29500).\n") == "master-unreachable"
    assert explain.explain("RuntimeError: connect() timed out. Original timeout was 1800000 ms.\n").retry is False
    assert sig("AttributeError: module 'numpy' has no attribute 'float'\n") == "import-name"
    zh = FAILURES_ZH
    new = [s for s in TORCH_SIGNATURES if s.name == "master-unreachable"] + \
        [s for s in CCL_SIGNATURES if s.name == "nccl-topology-net"]
    # round 109 added master-unreachable's entry for a name no resolver answered for, round 141 its entry for an
    # address the kernel refuses to connect to
    assert len(new) == 4
    for s in new:
        assert s.cause in zh and s.fix in zh, s.name
    # a name that resolves only once the master's pod is up: the restart gets through; NCCL's bug repeats
    assert explain.explain("ValueError: host not found: Name or service not known\n").retry is True
    assert explain.explain("graph/topo.h:230 NCCL WARN Could not find NET with id 0\n").retry is False
