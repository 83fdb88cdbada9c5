"""Round 102's rule (issue 45), from multi-GPU training on accelerators other than NVIDIA's (ROCm, Gaudi, Ascend, XPU):
Intel Gaudi's graph compiler failing on the run's first collective, the broadcast of the model's weights, read as the
Habana software's environment missing on that node (huggingface/optimum-habana#1779: the ranks DeepSpeed's multi-node
runner started on the other node lacked GC_KERNEL_PATH and the other paths of /etc/profile.d/habanalabs.sh). A second
wording in another version's and caller's words than the corpus case, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("habana-env-missing",)


@pytest.mark.parametrize("text,expected", [
    # composed from torch 2.5+'s broadcast (distributed_c10d.py, torch 2.13 line 3145: `work = group.broadcast([tensor],
    # opts)`) under Python 3.11+'s caret line and torch's rank prefix, reached from DeepSpeed's comm/torch.py (0.19.8,
    # line 351)
    ("[rank3]:   File \"/usr/local/lib/python3.12/dist-packages/deepspeed/comm/torch.py\", line 351, in broadcast\n"
     "[rank3]:     return torch.distributed.broadcast(tensor=tensor, src=src, group=group, async_op=async_op)\n"
     "[rank3]:   File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py\", line 3145, "
     "in broadcast\n"
     "[rank3]:     work = group.broadcast([tensor], opts)\n"
     "[rank3]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "[rank3]: RuntimeError: Graph compile failed. synStatus=synStatus 26 [Generic failure].\n", "habana-env-missing"),
    # composed: the same under pdsh's node prefix with no rank prefix (DeepSpeed's multi-node runner) in torch < 2.5's
    # words for the default group (`work = default_pg.broadcast([tensor], opts)`)
    ("10.0.0.12:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 1910, "
     "in broadcast\n"
     "10.0.0.12:     work = default_pg.broadcast([tensor], opts)\n"
     "10.0.0.12: RuntimeError: Graph compile failed. synStatus=synStatus 26 [Generic failure].\n", "habana-env-missing"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # huggingface/optimum-habana#744: the same words from the all-reduce of a training step, which compiles the step's
    # graph of the model's own operations (its cause was not the environment; the thread never established one)
    ("Traceback (most recent call last):\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py\", line 47, in wrapper\n"
     "    return func(*args, **kwargs)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 2051, in all_reduce\n"
     "    work = group.allreduce([tensor], opts)\n"
     "RuntimeError: Graph compile failed. synStatus=synStatus 26 [Generice failure]. \n", "habana-env-missing"),
    # huggingface/optimum-habana#1611: synStatus 26 as the device is acquired, not a graph compile
    ("RuntimeError: synStatus=26 [Generic failure] Device acquire failed.\n", "habana-env-missing"),
    # huggingface/tgi-gaudi#93: a device another process holds
    ("RuntimeError: synStatus=20 [Device already acquired] Device acquire failed.\n", "habana-env-missing"),
    # composed: a broadcast failing in NCCL on NVIDIA GPUs, not Gaudi's compiler (torch's DistBackendError words)
    ("    work = default_pg.broadcast([tensor], opts)\n"
     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid "
     "usage, NCCL version 2.14.3\n", "habana-env-missing"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
