"""Round 103's rules (issue 45), from threads on DeepSpeed ZeRO-3 parameter partitioning in training (LoRA/QLoRA under
ZeRO-3, reference models, weights read outside the engine): ZeRO-3's gather of a module's parameters meeting more than
one dtype (bitsandbytes-quantized weights next to float ones), and DeepSpeed's learning-rate scheduler pairing fewer
parameter groups than learning rates once the engine dropped an empty group (LoRA's empty no-decay group). A second
wording of each, in another version's or caller's words than the corpus case it was written from, and near misses
that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("zero3-quantized-params", "ds-empty-param-group-lrs")


@pytest.mark.parametrize("text,expected", [
    # baichuan-inc/Baichuan2#120 (LoRA fine-tuning under ZeRO-3): DeepSpeed 0.9/0.10's nested all_gather_coalesced
    ("RuntimeError: expected there to be only one unique element in <generator object Init._convert_to_deepspeed_param."
     "<locals>.all_gather_coalesced.<locals>.<genexpr> at 0x7f32a94b1890>\n", "zero3-quantized-params"),
    # DeepSpeed since 0.12.3 (partition_parameters.py): _all_gather_coalesced of the all-reduce fetch, under torchrun's
    # rank prefix, its frames first
    ("[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/zero/partition_parameters.py\", "
     "line 1424, in _all_gather_coalesced\n"
     "[rank1]:     dtype=get_only_unique_item(p.ds_tensor.dtype for p in params),\n"
     "[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/utils.py\", line 864, in "
     "get_only_unique_item\n"
     "[rank1]:     raise RuntimeError(f\"expected there to be only one unique element in {items}\")\n"
     "[rank1]: RuntimeError: expected there to be only one unique element in <generator object "
     "Init._convert_to_deepspeed_param.<locals>._all_gather_coalesced.<locals>.<genexpr> at 0x7f9c3c1e2a40>\n",
     "zero3-quantized-params"),
    # CPython's other wording of a strict zip (fewer learning rates than groups), in DeepSpeed's update_lr frame with
    # its code line, under torchrun's rank prefix
    ("[rank0]:   File \"/usr/local/lib/python3.12/site-packages/deepspeed/runtime/lr_schedules.py\", line 252, in "
     "update_lr\n"
     "[rank0]:     for param_group, lr in zip(param_groups, lrs, strict=True):\n"
     "[rank0]: ValueError: zip() argument 2 is shorter than argument 1\n", "ds-empty-param-group-lrs"),
    # a Windows path, and CPython's words for a third argument
    ("  File \"C:\\venv\\Lib\\site-packages\\deepspeed\\runtime\\lr_schedules.py\", line 731, in get_lr\n"
     "ValueError: zip() argument 3 is longer than arguments 1-2\n", "ds-empty-param-group-lrs"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed's zero/utils.py defragment (ZeRO-3's low-precision partitions moved to a flat host buffer): the same
    # helper's words for a dtype or a device, not the gather of a module's parameters
    ("RuntimeError: expected there to be only one unique element in <generator object defragment.<locals>.<genexpr> "
     "at 0x7f0a2b3c4d50>\n", "zero3-quantized-params"),
    # torch's own LR scheduler (no DeepSpeed frame): its strict zip of groups and values, whatever made them differ
    ("  File \"/usr/local/lib/python3.12/site-packages/torch/optim/lr_scheduler.py\", line 214, in _update_lr\n"
     "    for param_group, lr in zip(self.optimizer.param_groups, values, strict=True):\n"
     "ValueError: zip() argument 2 is shorter than argument 1\n", "ds-empty-param-group-lrs"),
    # a strict zip in a data collator, not a scheduler
    ("  File \"/usr/local/lib/python3.12/site-packages/transformers/data/data_collator.py\", line 612, in __call__\n"
     "    for feature, label in zip(features, labels, strict=True):\n"
     "ValueError: zip() argument 2 is shorter than argument 1\n", "ds-empty-param-group-lrs"),
    # DeepSpeed's WarmupLR given "auto" (a string) for warmup_num_steps: its own frame, another error
    ("  File \"/usr/local/lib/python3.10/site-packages/deepspeed/runtime/lr_schedules.py\", line 708, in __init__\n"
     "    self.warmup_num_steps = max(2, warmup_num_steps)\n"
     "TypeError: '>' not supported between instances of 'str' and 'int'\n", "ds-empty-param-group-lrs"),
    # DeepSpeed's scheduler frame, then a later traceback's zip error far below it
    ("  File \"/usr/local/lib/python3.10/site-packages/deepspeed/runtime/lr_schedules.py\", line 252, in update_lr\n"
     "    param_group['lr'] = lr\n"
     "KeyError: 'lr'\n"
     "During handling of the above exception, another exception occurred:\n"
     "Traceback (most recent call last):\n"
     "  File \"/workspace/train.py\", line 12, in <module>\n"
     "ValueError: zip() argument 2 is longer than argument 1\n", "ds-empty-param-group-lrs"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_string_config_value_stays_ds_config_auto():
    assert sig("  File \"/usr/local/lib/python3.10/site-packages/deepspeed/runtime/lr_schedules.py\", line 708, in "
               "__init__\n"
               "    self.warmup_num_steps = max(2, warmup_num_steps)\n"
               "TypeError: '>' not supported between instances of 'str' and 'int'\n") == "ds-config-auto"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
