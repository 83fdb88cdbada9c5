"""Round 56's rule (issue 45), from multi-GPU fine-tuning threads of ms-swift, Qwen's scripts and their launchers
(sigfinetune.py): ms-swift refusing DeepSpeed in a process that sees several GPUs (its is_mp() check: NPROC_PER_NODE
unset or not reaching swift). A second wording of it, in another version's or another caller's words than the corpus
cases it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("swift-deepspeed-multi-gpu-process",)


@pytest.mark.parametrize("text,expected", [
    # ms-swift 3.x (swift/llm/argument/train_args.py _init_deepspeed), a swift rlhf traceback posted in another thread
    ("  File \"/usr/local/lib/python3.11/site-packages/swift/llm/argument/train_args.py\", line 186, in "
     "_init_deepspeed\n    raise ValueError('DeepSpeed is not compatible with `device_map`. '\n"
     "ValueError: DeepSpeed is not compatible with `device_map`. n_gpu: 3, local_world_size: 1.\n",
     "swift-deepspeed-multi-gpu-process"),
    # ms-swift 1.x/2.0's assert (swift/llm/utils/argument.py: assert not is_mp(), ...; modelscope/ms-swift#479)
    ("AssertionError: DeepSpeed is not compatible with MP.\n", "swift-deepspeed-multi-gpu-process"),
    # ms-swift 2.x under DeepSpeed's own launcher, two GPUs (modelscope/ms-swift#1188), swift's info line after it
    ("ValueError: DeepSpeed is not compatible with MP. n_gpu: 2, local_world_size: 1.\n"
     "[INFO:swift] Using DDP + MP(device_map)\n", "swift-deepspeed-multi-gpu-process"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a TTS server refusing DeepSpeed on Apple's GPU backend (MPS), not ms-swift's model parallelism
    ("DeepSpeed is not compatible with MPS, disabling it.\n", "swift-deepspeed-multi-gpu-process"),
    # transformers' refusal of a device_map under ZeRO-3 keeps its own answer (ds-incompatible)
    ("ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing a `device_map`.\n",
     "swift-deepspeed-multi-gpu-process"),
    # ms-swift's GRPO refusal (modelscope/ms-swift#5592): vLLM beside the trainer, another setting
    ("ValueError: GRPO with vLLM is not compatible with device_map. Please set NPROC_PER_NODE equal to "
     "num_processes.\n", "swift-deepspeed-multi-gpu-process"),
    # accelerate's refusal of a device_map='auto' model in a distributed run keeps its own answer
    ("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. "
     "Please rerun your script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.\n",
     "swift-deepspeed-multi-gpu-process"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_transformers_zero3_device_map_stays_ds_incompatible():
    assert sig("ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing a "
               "`device_map`.\n") == "ds-incompatible"


def test_the_new_texts_are_translated():
    for s in explain.SIGNATURES:
        if s.name in NEW:
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
