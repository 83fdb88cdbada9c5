"""Round 32's rules (issue 45), from the threads of research code whose users run torchrun / DeepSpeed on several GPUs:
Llama's loader asserting one process per model-parallel shard (sigmodels.py), transformers' HfArgumentParser refusing
arguments no dataclass took (sigsetup.py), and Python's `cannot import name` answered as another version of an
installed package only where the module is an installed one (sigmessages.CANNOT_IMPORT): a second wording of each, in
another version's or another caller's words than the corpus case it was written from, and near misses that must not be
read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # the first release's example.py load() (llama v1), 65B's 8 shards on 2 processes, under torchrun's rank prefix
    ("[rank1]:     assert world_size == len(\n"
     "[rank1]: AssertionError: Loading a checkpoint for MP=8 but world size is 2\n", "ckpt-mp-size"),
    # more processes than shards: 7B's one shard with --nproc_per_node 4
    ("AssertionError: Loading a checkpoint for MP=1 but world size is 4\n", "ckpt-mp-size"),
    # no shard at all, with two processes, in a repository that copied the loader (LLaMA-Adapter's words)
    ("AssertionError: Loading a checkpoint for MP=0 but world size is 2\n", "ckpt-files-missing"),
    # HfArgumentParser with a value split from its flag, torchrun's rank prefix
    ("[rank0]: ValueError: Some specified arguments are not used by the HfArgumentParser: ['--deepspeed_config', "
     "'ds_config.json']\n", "argparse-usage"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed's ZeRO checkpoint of another data-parallel size keeps its own answer
    ("checkpoint being loaded used a DP world size of 2 but the current world size is 4\n", "ckpt-mp-size"),
    # Megatron's check of tensor-parallel ranks in its own words
    ("AssertionError: checkpoint was saved with tensor model parallel size 2 but world size is 4\n", "ckpt-mp-size"),
    # the source line of HfArgumentParser in a traceback frame, without the list of arguments
    ('    raise ValueError(f"Some specified arguments are not used by the HfArgumentParser: {remaining_args}")\n',
     "argparse-usage"),
    # the name missing from the project's own package (its __init__ hid the import that failed), not an installed one
    ("ImportError: cannot import name 'LlavaQwenForCausalLM' from 'llava.model' "
     "(/data/LLaVA-NeXT/llava/model/__init__.py)\n", "import-name"),
    ("ImportError: cannot import name 'MiniGPT4' from 'minigpt4.models' "
     "(C:\\Users\\me\\MiniGPT-4\\minigpt4\\models\\__init__.py)\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    # a name an installed package lacks is still another version of it
    assert sig("ImportError: cannot import name 'is_torch_xla_available' from 'transformers' "
               "(/opt/conda/lib/python3.10/site-packages/transformers/__init__.py)\n") == "import-name"
    assert sig("ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
               "(/usr/local/lib/python3.10/dist-packages/huggingface_hub/__init__.py)\n") == "import-name"
    assert sig("ImportError: cannot import name 'soft_unicode' from 'markupsafe' "
               "(/usr/local/lib/python3.8/site-packages/markupsafe/__init__.py)\n") == "import-name"
    # (unknown location): a folder without __init__.py, maybe the project's own; never read as an installed package
    # (session 25's review, sigmessages.CANNOT_IMPORT)
    assert sig("ImportError: cannot import name 'soft_unicode' from 'markupsafe' (unknown location)\n") != "import-name"
    assert sig("ImportError: cannot import name 'LoraConfig' from 'peft'\n") == "import-name"
    assert sig("checkpoint being loaded used a DP world size of 2 but the current world size is 4\n") == \
        "zero-ckpt-world-size"
    assert sig("ValueError: remaining_argv: ['--sft_type', 'lora']\n") == "argparse-usage"
    zh = FAILURES_ZH
    for s in explain.SIGNATURES:
        if s.name in ("ckpt-mp-size", "ckpt-files-missing") or "HfArgumentParser" in s.cause:
            assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("AssertionError: Loading a checkpoint for MP=2 but world size is 1\n").retry is False
