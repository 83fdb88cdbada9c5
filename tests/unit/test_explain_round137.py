"""Round 137's rules (issue 45), from threads of the kernel and efficiency libraries inside multi-GPU training:
Unsloth's generated trainer modules (unsloth_compiled_cache) imported half-written because every rank of a launch
wrote them at once, accelerate 1.2 reading a bitsandbytes optimizer's optim_bits where DeepSpeed offloads the
optimizer, and LLaMA-Factory refusing Unsloth under DeepSpeed ZeRO-3 read as Unsloth's single-GPU limit (not as a
DeepSpeed feature clash): a second wording of each, in another version's or caller's words than the corpus case it
was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("accelerate-bnb-optim-bits",)


@pytest.mark.parametrize("text,expected", [
    # unslothai/unsloth#3205 (another thread: two processes' tracebacks interleaved), the exec form of rl.py
    ("  File \"/workspace/training-venv/lib/python3.12/site-packages/unsloth/models/rl.py\", line 715, in "
     "_patch_trl_rl_trainers\n"
     "    exec(f\"trl.{RLTrainer_name} = created_module.Unsloth{RLTrainer_name}\", locals(), globals())\n"
     "  File \"<string>\", line 1, in <module>\n"
     "AttributeError: module 'UnslothIterativeSFTTrainer' has no attribute 'UnslothIterativeSFTTrainer'\n",
     "unsloth-compiled-cache-race"),
    # rl.py's config patch from the same generated module (`created_module.Unsloth{RLConfig_name}`), under a rank prefix
    ("[rank5]:     exec(f\"trl.{RLConfig_name} = created_module.Unsloth{RLConfig_name}\", locals(), globals())\n"
     "[rank5]:   File \"<string>\", line 1, in <module>\n"
     "[rank5]: AttributeError: module 'UnslothGRPOTrainer' has no attribute 'UnslothGRPOConfig'\n",
     "unsloth-compiled-cache-race"),
    # accelerate 1.2's Adagrad check in the same function (utils/deepspeed.py: `isinstance(optimizer, (bnb_opt.Adagrad,
    # bnb_opt.Adagrad32bit)) and optimizer.optim_bits == 32`)
    ("[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/accelerate/utils/deepspeed.py\", line 67, in "
     "map_pytorch_optim_to_deepspeed\n"
     "[rank0]:     is_ada = isinstance(optimizer, (bnb_opt.Adagrad, bnb_opt.Adagrad32bit)) and optimizer.optim_bits == 32\n"
     "[rank0]: AttributeError: 'Adagrad' object has no attribute 'optim_bits'\n", "accelerate-bnb-optim-bits"),
    # the bare line of a 32-bit AdamW (the class name bitsandbytes gives AdamW32bit), as an issue title quotes it
    ("AttributeError: 'AdamW32bit' object has no attribute 'optim_bits'\n", "accelerate-bnb-optim-bits"),
    # LLaMA-Factory's hparams/parser.py raise, as its traceback ends (the source's words, with the full stop)
    ("[rank0]:   File \"/root/LLaMA-Factory/src/llamafactory/hparams/parser.py\", line 312, in get_train_args\n"
     "[rank0]:     raise ValueError(\"Unsloth is incompatible with DeepSpeed ZeRO-3.\")\n"
     "[rank0]: ValueError: Unsloth is incompatible with DeepSpeed ZeRO-3.\n", "single-gpu-only"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # Python's words for a name an installed package lacks (an older torch), not Unsloth's generated module
    ("AttributeError: module 'torch' has no attribute 'compiler'\n", "unsloth-compiled-cache-race"),
    # an older unsloth without FastVisionModel: the package's own module, not a generated one
    ("AttributeError: module 'unsloth' has no attribute 'FastVisionModel'\n", "unsloth-compiled-cache-race"),
    # an attribute missing on a trainer object (not a module): the trainer's code, not the cache
    ("AttributeError: 'UnslothGRPOTrainer' object has no attribute 'vllm_client'\n", "unsloth-compiled-cache-race"),
    # DeepSpeed's CPU Adam whose op failed to build (deepspeedai/DeepSpeed#1846): another attribute, another cause
    ("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n", "accelerate-bnb-optim-bits"),
    # NVIDIA/TransformerEngine PR 2795's Megatron-FSDP checkpoint (a plain Tensor where a DTensor was expected)
    ("[rank0]: AttributeError: 'Tensor' object has no attribute 'to_local'\n", "accelerate-bnb-optim-bits"),
    # LLaMA-Factory's other ZeRO-3 refusal in the same function: a feature clash, not Unsloth's single-GPU limit
    ("ValueError: KTransformers is incompatible with DeepSpeed ZeRO-3.\n", "single-gpu-only"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_other_zero3_refusals_stay_deepspeed_feature_clashes():
    assert sig("ValueError: KTransformers is incompatible with DeepSpeed ZeRO-3.\n") == "ds-incompatible"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
    by_name = {s.name: s for s in explain.SIGNATURES}
    race = by_name["unsloth-compiled-cache-race"]
    # a race: the next launch finds the files complete, so a restart is offered
    assert race.retry and race.cause in FAILURES_ZH and race.fix in FAILURES_ZH
    assert by_name["single-gpu-only"].cause in FAILURES_ZH
