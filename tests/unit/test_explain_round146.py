"""Round 146's rule (issue 45), from a thread of the fine-tuning frameworks' trackers (unslothai/unsloth#2584):
torch's "No backend type associated with device type cpu" raised inside Unsloth's own files (its import-time patching
in every rank of a multi-GPU launch of a release without multi-GPU support) read as Unsloth's single-GPU limit; a
second wording in the order a traceback prints it (frames, then the error), and near misses that must stay a CPU tensor
given to a collective."""

import pytest
from explain_rounds import sig


@pytest.mark.parametrize("text,expected", [
    # constructed (no second thread was read this round): torch's words (c10d ProcessGroup.hpp getBackend) at the end
    # of a rank's traceback through unsloth/models/rl.py, in the order Python prints it (the corpus case quotes it above)
    ("[rank1]: Traceback (most recent call last):\n"
     "[rank1]:   File \"/root/miniconda3/lib/python3.12/site-packages/unsloth/models/llama.py\", line 2757, in <module>\n"
     "[rank1]:     PatchFastRL(FastLanguageModel = FastLlamaModel)\n"
     "[rank1]:   File \"/root/miniconda3/lib/python3.12/site-packages/unsloth/models/rl.py\", line 742, in PatchFastRL\n"
     "[rank1]:     patch_trl_rl_trainers()\n"
     "[rank1]: RuntimeError: No backend type associated with device type cpu\n", "single-gpu-only"),
    # constructed likewise: the same raise under a frame of unsloth_zoo, without rank prefixes
    ("Traceback (most recent call last):\n"
     "  File \"/usr/local/lib/python3.11/dist-packages/unsloth_zoo/patching_utils.py\", line 120, in patch_model\n"
     "    torch.distributed.barrier()\n"
     "RuntimeError: No backend type associated with device type cpu\n", "single-gpu-only"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text", [
    # a script's own collective on a CPU tensor, Unsloth's banner printed before it (a banner is no Unsloth frame)
    ("\U0001f9a5 Unsloth: Will patch your computer to enable 2x faster free finetuning.\n"
     "Traceback (most recent call last):\n"
     "  File \"/home/u/train.py\", line 40, in <module>\n"
     "    dist.all_reduce(t)\n"
     "RuntimeError: No backend type associated with device type cpu\n"),
    # LLaMA-Factory's own module named unsloth.py (model_utils/unsloth.py) is no Unsloth file
    ("Traceback (most recent call last):\n"
     "  File \"/root/LLaMA-Factory/src/llamafactory/model/model_utils/unsloth.py\", line 51, in load\n"
     "    dist.broadcast(t, 0)\n"
     "RuntimeError: No backend type associated with device type cpu\n"),
    # the bare message, as accelerate users post it (unslothai/unsloth PR 2074's comment quotes the line alone)
    "[rank6]: RuntimeError: No backend type associated with device type cpu\n",
])
def test_near_misses_stay_cpu_tensor_collectives(text):
    assert sig(text) == "collective-cpu-tensor"
