"""Round 66's rule (issue 45), from training scripts built on Hugging Face accelerate run on several GPUs: TRL's own
vllm_mode check refusing one of the two modes it names (`got 'server'`), the ranks other than the main one of a run
on TRL's main branch between huggingface/trl#3866 and #3886 (trl#3885): a second wording of it, in another caller's
or version's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("trl-vllm-mode-nonmain",)


@pytest.mark.parametrize("text,expected", [
    # the same check's format string in its later home, trl/generation/vllm_generation.py (VLLMGeneration._init_vllm,
    # `got '{self.mode}'`), raised on a rank under accelerate's rank prefix
    ("[rank1]: Traceback (most recent call last):\n"
     "[rank1]:   File \"/opt/venv/lib/python3.11/site-packages/trl/generation/vllm_generation.py\", line 372, in "
     "_init_vllm\n"
     "[rank1]:     raise ValueError(f\"vllm_mode must be either 'server' or 'colocate', got '{self.mode}'.\")\n"
     "[rank1]: ValueError: vllm_mode must be either 'server' or 'colocate', got 'server'.\n", "trl-vllm-mode-nonmain"),
    # GRPOTrainer.__init__ at huggingface/trl@de27d612b (#3866): a plain traceback, the ValueError's own line
    ("  File \"/usr/local/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py\", line 824, in __init__\n"
     "    raise ValueError(f\"vllm_mode must be either 'server' or 'colocate', got '{self.vllm_mode}'.\")\n"
     "ValueError: vllm_mode must be either 'server' or 'colocate', got 'server'.\n", "trl-vllm-mode-nonmain"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the check doing its work: a mode misspelt in the user's config (the same format string, got a mode it does not
    # name), a configuration error, not TRL's bug
    ("ValueError: vllm_mode must be either 'server' or 'colocate', got 'servre'.\n", "trl-vllm-mode-nonmain"),
    ("[rank0]: ValueError: vllm_mode must be either 'server' or 'colocate', got 'colocated'.\n",
     "trl-vllm-mode-nonmain"),
    # the raise line alone, as a traceback prints it (the f-string's placeholder, no mode)
    ("    raise ValueError(f\"vllm_mode must be either 'server' or 'colocate', got '{self.vllm_mode}'.\")\n",
     "trl-vllm-mode-nonmain"),
    # TRL's vLLM client (trl/generation/vllm_client.py check_server): server mode whose server is not up
    ("ConnectionError: The vLLM server can't be reached at http://0.0.0.0:8000 after 240 seconds. Make sure the "
     "server is running by running `trl vllm-serve`.\n", "trl-vllm-mode-nonmain"),
    # TRL's GRPOConfig help text for vllm_gpu_memory_utilization, printed by --help
    ("Control the GPU memory utilization for vLLM. This setting only applies when `vllm_mode` is set to "
     "`'colocate'`. If you are using `vllm_mode='server'`, this parameter must be passed separately when launching "
     "the vLLM server via the `--vllm_gpu_memory_utilization` flag.\n", "trl-vllm-mode-nonmain"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
