"""Round 27's rules (issue 45), the fine-tuning frameworks in their own words (sigfinetune.py): Unsloth refusing a
multi-GPU setup, FSDP's transformer auto-wrap given a layer class the model lacks, LLaMA-Factory refusing a run no
launcher started, transformers' lazy import wrapping an ImportError of a name: a second wording of each, in another
release's or another caller's words than the corpus case it was written from, and near misses that must not be read
as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigfinetune import FINETUNE_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # Unsloth's other refusal (tokenizer_utils.py), under torchrun, each rank's line prefixed
    ("[rank1]:   File \"/opt/conda/lib/python3.10/site-packages/unsloth/tokenizer_utils.py\", line 1050, in "
     "_fast_inner_training_loop\n"
     "[rank1]: RuntimeError: Unsloth currently does not support multi GPU setups - but we are working on it!\n",
     "single-gpu-only"),
    # accelerate's FSDP2 wording, naming the class
    ("  File \"/usr/local/lib/python3.11/site-packages/accelerate/utils/fsdp_utils.py\", line 706, in "
     "fsdp2_prepare_auto_wrap_policy\n"
     "    raise ValueError(f\"Could not find the transformer layer class {layer_class} in the model.\")\n"
     "ValueError: Could not find the transformer layer class Llama4VisionEncoderLayer in the model.\n",
     "fsdp-wrap-class"),
    # accelerate's FSDP plugin (the first wording) under accelerate launch
    ("  File \"/opt/venv/lib/python3.10/site-packages/accelerate/utils/dataclasses.py\", line 1061, in "
     "set_auto_wrap_policy\n"
     "    raise Exception(\"Could not find the transformer layer class to wrap in the model.\")\n"
     "Exception: Could not find the transformer layer class to wrap in the model.\n", "fsdp-wrap-class"),
    # LLaMA-Factory's next check: DeepSpeed without its torchrun
    ("  File \"/app/src/llamafactory/hparams/parser.py\", line 243, in get_train_args\n"
     "    raise ValueError(\"Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.\")\n"
     "ValueError: Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.\n", "not-launched"),
    # transformers' lazy import of another module, the inner error pasted on the same line; torch older than the code
    ("RuntimeError: Failed to import transformers.models.gpt2.modeling_gpt2 because of the following error (look up "
     "to see its traceback): cannot import name 'autocast' from 'torch.cuda.amp' "
     "(/home/u/.virtualenvs/main/lib/python3.7/site-packages/torch/cuda/amp/__init__.py)\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # Unsloth's banner counting GPUs, and its import-order warning
    ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1\n", "single-gpu-only"),
    ("UserWarning: Unsloth should be imported before transformers to ensure all optimizations are applied.\n",
     "single-gpu-only"),
    # a module not found in a state dict is not a wrap class
    ("KeyError: 'Could not find module model.layers.0 in the state dict'\n", "fsdp-wrap-class"),
    # LLaMA-Factory's other argument checks
    ("ValueError: Please specify `max_steps` in streaming mode.\n", "not-launched"),
    ("ValueError: Please enable `predict_with_generate` to save model predictions.\n", "not-launched"),
    # the lazy import wrapping an undefined symbol is not a name the package lacks
    ("RuntimeError: Failed to import transformers.modeling_utils because of the following error (look up to see its "
     "traceback):\n/opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("ImportError: cannot import name 'LRScheduler' from 'torch.optim.lr_scheduler'\n") == "import-name"
    assert sig("KeyError: 'LOCAL_RANK'\n") == "not-launched"
    assert sig("ModuleNotFoundError: No module named 'mpi4py'\n") == "not-launched"
    # the lazy import wrapping a module torch no longer has: round 12's rule answers it, not this one
    six = ("RuntimeError: Failed to import transformers.training_args because of the following error (look up to see "
           "its traceback):\nNo module named 'torch._six'\n")
    assert sig(six) == "import-name" and not FINETUNE_SIGNATURES[3].pattern.search(six)
    zh = FAILURES_ZH
    for s in FINETUNE_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    unsloth = explain.explain("RuntimeError: Unsloth currently does not work on multi GPU setups - sadly we are a 2 "
                              "brother team so enabling it will require much more work\n")
    assert unsloth.signature == "single-gpu-only" and not unsloth.retry
