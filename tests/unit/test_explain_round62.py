"""Round 62's rules (issue 45), from Chinese-language threads of LLaMA-Factory, ChatGLM and their neighbours: a
package's own entry script that the ranks' python cannot import the package of (a torchrun from another environment
first on PATH), and the ranks other than 0 giving up waiting in the c10d store for rank 0's NCCL unique id (rank 0
still busy, a store timeout, read as collective-timeout): a second wording of each, in another version's, project's or
thread's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("torchrun-other-python",)


@pytest.mark.parametrize("text,expected", [
    # meta-llama/llama#571: the repository's example at the root of its clone (llama/), llama pip-installed for
    # python3.11, the example run by a torchrun of another python
    ("Traceback (most recent call last):\n"
     "  File \"/root/ai/llama/example_text_completion.py\", line 6, in <module>\n"
     "    from llama import LLaMa\n"
     "ModuleNotFoundError: No module named 'llama'\n", "torchrun-other-python"),
    # hiyouga/LlamaFactory#5008: the launcher's line 15, torchrun's workers on the base anaconda's python
    ("Traceback (most recent call last):\n"
     "  File \"/home/.../Project/LLaMA-Factory/src/llamafactory/launcher.py\", line 15, in <module>\n"
     "    from llamafactory.train.tuner import run_exp\n"
     "ModuleNotFoundError: No module named 'llamafactory'\n\n"
     "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 2963998) of "
     "binary: /usr/local/anaconda3/bin/python\n", "torchrun-other-python"),
    # hiyouga/LlamaFactory#8675: a later launcher (its comment on the import line), ~/.local/bin/torchrun, /usr/bin/python3
    ("Traceback (most recent call last):\n"
     "  File \"/home/ubuntu/LLaMA-Factory/src/llamafactory/launcher.py\", line 15, in <module>\n"
     "    from llamafactory.train.tuner import run_exp  # use absolute import\n"
     "ModuleNotFoundError: No module named 'llamafactory'\n"
     "E0718 02:26:56.971000 64126 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
     "local_rank: 0 (pid: 64233) of binary: /usr/bin/python3\n", "torchrun-other-python"),
    # zai-org/ChatGLM-6B#1232: torch 1.13's spelling ("retreiving"), a RuntimeError
    ("RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store "
     "by key '0', but store->get('0') got error: Socket Timeout\n"
     "Exception raised from recvBytes at /opt/conda/conda-bld/pytorch_1670525552843/work/torch/csrc/distributed/c10d/"
     "Utils.hpp:594 (most recent call first):\n", "collective-timeout"),
    # hiyouga/LlamaFactory#793: 12 GB of pre-training text tokenized on rank 0 while ranks 1-3 wait
    ("RuntimeError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store "
     "by key '0', but store->get('0') got error: Socket Timeout\n"
     "Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:604 (most recent call first):\n",
     "collective-timeout"),
    # torch 2.4+'s DistBackendError under a rank prefix (the KTO/HALOs README: rank 0 waiting at wandb's login prompt)
    ("[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
     "[0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n", "collective-timeout"),
    # a later TCPStore's words for the same wait (a verl user's notes in the code index)
    ("torch.distributed.DistBackendError: [5] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: wait timeout after 300000ms\n",
     "collective-timeout"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # meta-llama/llama#1039: the example copied to /content (Colab), not in a directory named like the package; the
    # package was never installed there: module-not-found's
    ("Traceback (most recent call last):\n"
     "  File \"/content/example_text_completion.py\", line 6, in <module>\n"
     "    from llama import Llama\n"
     "ModuleNotFoundError: No module named 'llama'\n", "torchrun-other-python"),
    # pytorch/pytorch#77737: a package's module (torch/utils/tensorboard/__init__.py) importing a dependency named
    # like its own directory, deep in the traceback, not the entry script's first frame
    ("Traceback (most recent call last):\n"
     "  File \"train_ours.py\", line 12, in <module>\n"
     "    from torch.utils.tensorboard import SummaryWriter\n"
     "  File \"/opt/miniconda/lib/python3.7/site-packages/torch/utils/tensorboard/__init__.py\", line 1, in <module>\n"
     "    import tensorboard\n"
     "ModuleNotFoundError: No module named 'tensorboard'\n", "torchrun-other-python"),
    # round 55's DeepSpeed op the install never built: a submodule, from DeepSpeed's own builder
    ("[rank0]: ModuleNotFoundError: No module named 'deepspeed.ops.aio.async_io_op'\n", "torchrun-other-python"),
    # rdt#44's store error when rank 0 is gone, not late (PEER_CLOSED's)
    ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store "
     "by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible application "
     "crash on rank 0 or a network set up issue.\n", "collective-timeout"),
    # rank 0 aborted inside RCCL (a ROCm site's notes): the store's connection closed, no timeout
    ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: Failed to recv, got 0 bytes. Connection was "
     "likely closed.\n", "collective-timeout"),
    # the store's own client timing out while connecting (DiffSynth-Studio#538): store-connection's words
    ("torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to "
     "(127.0.0.1, 29500).\n", "collective-timeout"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
