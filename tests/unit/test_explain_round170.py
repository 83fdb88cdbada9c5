"""Round 170's rules (issue 45, live): code written for transformers 4.x run with transformers 5.x. A TrainingArguments
argument 5.x removed or renamed (the dataclass's TypeError, or HfArgumentParser's refusal of the command-line flag)
read as hf-trainingargs-removed; Trainer(tokenizer=...) (renamed processing_class) as hf-trainer-tokenizer-renamed; a
Trainer subclass's compute_loss or training_step with the pre-4.46 signature, called with num_items_in_batch, as
hf-trainer-override-signature; a removed name imported from transformers as hf-removed-import. Second
wordings (other Python versions' and callers' words than the live cases') and near misses, other components' text with
like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("hf-trainingargs-removed", "hf-trainer-tokenizer-renamed", "hf-trainer-override-signature", "hf-removed-import")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # Python <= 3.9 names no class: the call's first line above it makes a TrainingArguments
    ('  File "/home/user/finetune/train.py", line 41, in <module>\n'
     "    training_args = TrainingArguments(\n"
     "TypeError: __init__() got an unexpected keyword argument 'evaluation_strategy'\n"),
    # TRL's SFTConfig (a TrainingArguments subclass) given 4.x's overwrite_output_dir, under torchrun's rank prefix
    "[rank0]: TypeError: SFTConfig.__init__() got an unexpected keyword argument 'overwrite_output_dir'\n",
    # Seq2SeqTrainingArguments with the old per-GPU batch size
    "TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'per_gpu_train_batch_size'\n",
    # the same removed names as command-line flags: HfArgumentParser.parse_args_into_dataclasses' ValueError
    ("ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'steps', "
     "'--logging_dir', './logs']\n"),
    # as keys of a JSON or YAML file: parse_json_file/parse_yaml_file's ValueError
    "ValueError: Some keys are not used by the HfArgumentParser: ['no_cuda', 'report_to_wandb']\n",
])
def test_trainingargs_removed(text):
    assert sig(text) == "hf-trainingargs-removed"


@pytest.mark.parametrize("text", [
    # the reverse: 5.x's name on a transformers older than 4.41 (install a newer one, not rename)
    "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'eval_strategy'\n",
    # PyTorch Lightning's Trainer given a flag it dropped: not transformers' TrainingArguments
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'logging_dir'\n",
    # Python 3.9's bare __init__ under Accelerate's Accelerator, a name of the list that is no TrainingArguments'
    ('    accelerator = Accelerator(\n'
     "TypeError: __init__() got an unexpected keyword argument 'logging_dir'\n"),
    # a 4.x addition (4.17) that 5.x removed: on a transformers older than 4.17 the same words mean too old
    "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'include_inputs_for_metrics'\n",
    # HfArgumentParser refusing a flag of the script's own that is not one of the removed names
    "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--lora_rank', '8']\n",
])
def test_near_misses_are_not_trainingargs_removed(text):
    assert sig(text) != "hf-trainingargs-removed"


@pytest.mark.parametrize("text", [
    # TRL 0.12+'s SFTTrainer renamed tokenizer the same way
    "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'\n",
    # Python <= 3.9: the Trainer( line above names it
    ('  File "run_clm.py", line 88, in main\n'
     "    trainer = Trainer(\n"
     "TypeError: __init__() got an unexpected keyword argument 'tokenizer'\n"),
])
def test_trainer_tokenizer_renamed(text):
    assert sig(text) == "hf-trainer-tokenizer-renamed"


@pytest.mark.parametrize("text", [
    # the reverse: processing_class on a transformers older than 4.46
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'processing_class'\n",
    # TRL 0.13 moved max_seq_length into SFTConfig: another argument of the trainer
    "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'max_seq_length'\n",
    # a pipeline given tokenizer for a model whose forward does not take it (no Trainer)
    "TypeError: GPT2LMHeadModel.forward() got an unexpected keyword argument 'tokenizer'\n",
])
def test_near_misses_are_not_trainer_tokenizer_renamed(text):
    assert sig(text) != "hf-trainer-tokenizer-renamed"


@pytest.mark.parametrize("text", [
    # an older TRL's DPOTrainer (written before 4.46) under a newer transformers
    "[rank1]: TypeError: DPOTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'\n",
    # Python <= 3.9 names no class
    "TypeError: compute_loss() got an unexpected keyword argument 'num_items_in_batch'\n",
    # a training_step override whose class is not named ...Trainer, read from the Trainer's own call above it
    ('  File "/opt/venv/lib/python3.9/site-packages/transformers/trainer.py", line 2481, in _inner_training_loop\n'
     "    tr_loss_step = self.training_step(model, inputs, num_items_in_batch)\n"
     "TypeError: training_step() takes 3 positional arguments but 4 were given\n"),
])
def test_trainer_override_signature(text):
    assert sig(text) == "hf-trainer-override-signature"


@pytest.mark.parametrize("text", [
    # a model's forward given the keyword (a custom model that does not take loss kwargs): not an override's signature
    "TypeError: MyModel.forward() got an unexpected keyword argument 'num_items_in_batch'\n",
    # the reverse: an override with the new signature on a transformers older than 4.46
    "TypeError: CustomTrainer.training_step() missing 1 required positional argument: 'num_items_in_batch'\n",
    # PyTorch Lightning 1.x passing optimizer_idx to a LightningModule's training_step (several optimizers)
    ('  File "/opt/venv/lib/python3.9/site-packages/pytorch_lightning/loops/optimization/optimizer_loop.py", line 379\n'
     "    training_step_output = self.trainer._call_strategy_hook(\"training_step\", *step_kwargs.values())\n"
     "TypeError: training_step() takes 3 positional arguments but 4 were given\n"),
])
def test_near_misses_are_not_trainer_override_signature(text):
    assert sig(text) != "hf-trainer-override-signature"


@pytest.mark.parametrize("text", [
    # Python 3.12's wording with its suggestion
    ("ImportError: cannot import name 'AutoModelWithLMHead' from 'transformers' (/opt/conda/lib/python3.12/"
     "site-packages/transformers/__init__.py). Did you mean: 'AutoModelForCausalLM'?\n"),
    # transformers' lazy module's own AttributeError (transformers.is_torch_tpu_available), no quotes
    "AttributeError: module transformers has no attribute is_torch_tpu_available\n",
    # the removed top_k_top_p_filtering, under torchrun's rank prefix
    ("[rank0]: ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' (/usr/local/lib/python3.10/"
     "dist-packages/transformers/__init__.py)\n"),
])
def test_removed_import(text):
    assert sig(text) == "hf-removed-import"


@pytest.mark.parametrize("text", [
    # a name transformers 5 has, missing from a broken or shadowed install: not a removed name
    ("ImportError: cannot import name 'AutoModelForCausalLM' from 'transformers' (/opt/conda/lib/python3.11/"
     "site-packages/transformers/__init__.py)\n"),
    # transformers.deepspeed is missing from a transformers too new (4.46+) and from one too old (before 4.6): the log
    # does not say which (the failure corpus holds both), so the generic answer stays
    "ModuleNotFoundError: No module named 'transformers.deepspeed'\n",
    # DeepSpeed itself not installed
    "ModuleNotFoundError: No module named 'deepspeed'\n",
    # a submodule of transformers.integrations.deepspeed's family of another package
    "ModuleNotFoundError: No module named 'accelerate.deepspeed'\n",
])
def test_near_misses_are_not_removed_import(text):
    assert sig(text) != "hf-removed-import"
