"""Round 139's rules (issue 45), from threads of vision-language fine-tuning on several GPUs (Idefics2 through
LLaMA-Factory, GLM-4V and LLaVA through ms-swift): ZeRO's "auto" bucket sizes for a model config without hidden_size
(transformers' and accelerate's words), accelerate's DummyOptim/DummyScheduler called with no DeepSpeed engine to
replace them, and ms-swift 2.x's get_dataset finding a --dataset entry among none of its datasets: a second wording of
each, in another version's or caller's words than the corpus case it was written from, and near misses that must not
be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-auto-hidden-size-missing", "dummyoptim-step-no-deepspeed-engine", "swift-dataset-name-unknown")


@pytest.mark.parametrize("text,expected", [
    # accelerate's Accelerator._prepare_deepspeed (a plain accelerate script, no HF Trainer): its own words
    ("ValueError: Can find neither `model.config.hidden_size` nor `model.config.hidden_sizes`, therefore it's not "
     "possible to automatically fill out the following `auto` entries in the DeepSpeed config file: "
     "['zero_optimization.reduce_bucket_size']. You can fix that by replacing `auto` values for these keys with an "
     "integer value of your choice.\n", "ds-auto-hidden-size-missing"),
    # the same function for a model without a config (a bare torch module), under a rank prefix
    ("[rank1]: ValueError: Can't find `model.config` entry, therefore it's not possible to automatically fill out the "
     "following `auto` entries in the DeepSpeed config file: ['zero_optimization.stage3_prefetch_bucket_size']. You "
     "can fix that by replacing `auto` values for these keys with an integer value of your choice.\n",
     "ds-auto-hidden-size-missing"),
    # the placeholder scheduler stepped by the Trainer's loop (utils/deepspeed.py DummyScheduler has no methods)
    ("  File \"/usr/local/lib/python3.10/dist-packages/transformers/trainer.py\", line 2356, in _inner_training_loop\n"
     "    self.lr_scheduler.step()\n"
     "AttributeError: 'DummyScheduler' object has no attribute 'step'\n", "dummyoptim-step-no-deepspeed-engine"),
    # a hand-written accelerate loop zeroing the placeholder it passed to prepare(), under a rank prefix
    ("[rank0]:     optimizer.zero_grad()\n"
     "[rank0]: AttributeError: 'DummyOptim' object has no attribute 'zero_grad'\n",
     "dummyoptim-step-no-deepspeed-engine"),
    # ms-swift 1.x's get_dataset (swift/llm/utils/dataset.py of late 2023: the same lookup), Python 3.10's traceback
    ("  File \"/root/swift/swift/llm/utils/dataset.py\", line 714, in get_dataset\n"
     "    dataset_info = DATASET_MAPPING[dataset_name]\n"
     "KeyError: 'blossom-math-zh '\n", "swift-dataset-name-unknown"),
    # ms-swift 2.x under torchrun's rank prefix, with Python 3.11's markers between the two lines
    ("[rank2]:   File \"/opt/swift/swift/llm/utils/dataset.py\", line 2390, in get_dataset\n"
     "[rank2]:     dataset_info = DATASET_MAPPING[dataset_name]\n"
     "[rank2]:                    ~~~~~~~~~~~~~~~^^^^^^^^^^^^^^\n"
     "[rank2]: KeyError: '_0 --lora_rank'\n", "swift-dataset-name-unknown"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a model's own code reading a composite config's missing attribute (vLLM, a modeling file): not the DeepSpeed fill
    ("AttributeError: 'Qwen2VLConfig' object has no attribute 'hidden_size'\n", "ds-auto-hidden-size-missing"),
    # accelerate's refusal of an "auto" it fills from prepare()'s arguments (review 73's rule), another key and cause
    ("ValueError: `optimizer.params.lr` not found in kwargs. Please specify `optimizer.params.lr` without `auto` "
     "(set to correct value) in the DeepSpeed config file or pass it in kwargs.\n", "ds-auto-hidden-size-missing"),
    # accelerate's own check that the placeholder has an optimizer section to stand for: a config, not a launch
    ("ValueError: You cannot create a `DummyOptim` without specifying an optimizer in the config file.\n",
     "dummyoptim-step-no-deepspeed-engine"),
    # accelerate's wrapper of a real optimizer: another object, another cause
    ("AttributeError: 'AcceleratedOptimizer' object has no attribute 'param_groups'\n",
     "dummyoptim-step-no-deepspeed-engine"),
    # transformers' AutoConfig without the model type (too old a transformers for Qwen2-VL): another mapping
    ("  File \"/opt/conda/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py\", line 710, in "
     "__getitem__\n"
     "    raise KeyError(key)\n"
     "KeyError: 'qwen2_vl'\n", "swift-dataset-name-unknown"),
    # ms-swift 2.x's model lookup: a model_type the installed swift lacks, not a dataset
    ("  File \"/opt/swift/swift/llm/utils/model.py\", line 6021, in get_model_tokenizer\n"
     "    model_info = MODEL_MAPPING[model_type]\n"
     "KeyError: 'qwen2-vl-7b-instruct'\n", "swift-dataset-name-unknown"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_accelerate_auto_value_refusal_keeps_its_rule():
    text = ("ValueError: `optimizer.params.lr` not found in kwargs. Please specify `optimizer.params.lr` without `auto` "
            "(set to correct value) in the DeepSpeed config file or pass it in kwargs.\n")
    assert sig(text) == "accelerate-ds-auto-value"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
