"""Round 162's rules (issue 45), from a live round of mistakes users make with the Hugging Face Trainer (and
accelerate) launched by dscluster launch --local 2: a custom model whose input the Trainer's remove_unused_columns
dropped (trainer.py compute_loss's `outputs = model(**inputs)` raising Python's `forward() missing ... required
... argument`), gradient checkpointing on a model class that does not support it (modeling_utils.py), resume_from_checkpoint=True
with no checkpoint in output_dir (trainer.py, trainer_utils.get_last_checkpoint), and TrainingArguments(bf16=True)
where no GPU is visible (training_args.py _validate_args, now read as no-gpu rather than an old GPU's precision);
second wordings (other versions' and callers' words than the live cases) and near misses, other components' text
with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("trainer-columns-removed", "gradient-checkpointing-unsupported", "resume-no-checkpoint")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW + ("no-gpu",))


_TRAINER_CALL = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 88, in <module>\n'
    "    trainer.train()\n"
    '  File "/opt/conda/lib/python3.8/site-packages/transformers/trainer.py", line 1645, in train\n'
    "    return inner_training_loop(\n"
    '  File "/opt/conda/lib/python3.8/site-packages/transformers/trainer.py", line 2759, in training_step\n'
    "    loss = self.compute_loss(model, inputs)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/transformers/trainer.py", line 2784, in compute_loss\n'
    "    outputs = model(**inputs)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    "    return forward_call(*args, **kwargs)\n"
)


@pytest.mark.parametrize("text", [
    # Python 3.8's bare wording under transformers 4.3x (a vision model's pixel values under another key)
    _TRAINER_CALL + "TypeError: forward() missing 1 required positional argument: 'pixel_values'\n",
    # a keyword-only input, 3.10+'s qualified name
    _TRAINER_CALL + "TypeError: SiameseNet.forward() missing 2 required keyword-only arguments: 'left' and 'right'\n",
])
def test_trainer_called_forward_without_an_input(text):
    assert sig(text) == "trainer-columns-removed"


@pytest.mark.parametrize("text", [
    # remove_unused_columns=False and a column the forward does not take: the opposite mistake
    _TRAINER_CALL + "TypeError: BertForSequenceClassification.forward() got an unexpected keyword argument 'text'\n",
    # the script's own call of its model, no Trainer in the traceback
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 41, in <module>\n'
     "    out = model(batch)\n"
     '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1789, in _call_impl\n'
     "    return forward_call(*args, **kwargs)\n"
     "TypeError: Net.forward() missing 1 required positional argument: 'mask'\n"),
])
def test_near_misses_are_not_trainer_columns_removed(text):
    assert sig(text) != "trainer-columns-removed"


@pytest.mark.parametrize("text", [
    # transformers 4.x's gradient_checkpointing_enable
    ('  File "/usr/local/lib/python3.10/dist-packages/transformers/modeling_utils.py", line 2148, in '
     "gradient_checkpointing_enable\n"
     '    raise ValueError(f"{self.__class__.__name__} does not support gradient checkpointing.")\n'
     "ValueError: ChatGLMForConditionalGeneration does not support gradient checkpointing.\n"),
    # transformers 5's wording behind a torchrun rank prefix
    "[rank3]: ValueError: MyEncoder does not support activation checkpointing.\n",
])
def test_gradient_checkpointing_unsupported(text):
    assert sig(text) == "gradient-checkpointing-unsupported"


@pytest.mark.parametrize("text", [
    # LlamaFactory's own warning that it skipped gradient checkpointing: no failure of it
    "[WARNING|checkpointing.py:70] 2024-05-02 10:11:12 >> Current model does not support gradient checkpointing.\n",
    # a wrapper's RuntimeError about its backbone, another library's words
    "RuntimeError: The selected decoder does not support gradient checkpointing.\n",
    # mmagic's assertion in a model's __init__
    "AssertionError: KandinskyV3 does not support gradient checkpointing.\n",
])
def test_near_misses_are_not_gradient_checkpointing_unsupported(text):
    assert sig(text) != "gradient-checkpointing-unsupported"


@pytest.mark.parametrize("text", [
    # transformers 4.x, one process
    ('  File "/home/u/.local/lib/python3.9/site-packages/transformers/trainer.py", line 1490, in train\n'
     '    raise ValueError(f"No valid checkpoint found in output directory ({args.output_dir})")\n'
     "ValueError: No valid checkpoint found in output directory (./outputs/llama-sft)\n"),
    # a rank that listed output_dir before any rank created it (trainer_utils.get_last_checkpoint)
    ('[rank1]:   File "/venv/lib/python3.11/site-packages/transformers/trainer_utils.py", line 271, in '
     "get_last_checkpoint\n"
     "[rank1]:     content = os.listdir(folder)\n"
     "[rank1]:               ^^^^^^^^^^^^^^^^^^\n"
     "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: 'runs/exp7'\n"),
])
def test_resume_without_a_checkpoint(text):
    assert sig(text) == "resume-no-checkpoint"


@pytest.mark.parametrize("text", [
    # a checkpoint named by path whose trainer_state.json is missing: another mistake
    ('  File "/venv/lib/python3.10/site-packages/transformers/trainer.py", line 2120, in _load_from_checkpoint\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'out/checkpoint-500/trainer_state.json'\n"),
    # DeepSpeed's warning for load_checkpoint without a `latest` file
    ("[WARNING] [engine.py:2780:load_checkpoint] Unable to find latest file at out/latest, if trying to load latest "
     "checkpoint please ensure you have passed a valid checkpoint.\n"),
])
def test_near_misses_are_not_resume_no_checkpoint(text):
    assert sig(text) != "resume-no-checkpoint"


def test_bf16_where_no_gpu_is_visible_is_no_gpu():
    text = ("[rank0]: ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train "
            "the model on CPU.\n")
    assert sig(text) == "no-gpu"


def test_bf16_on_an_old_gpu_stays_precision_unsupported():
    # the same check where CUDA is available but the GPU has no bf16 (transformers appends the Ampere hint)
    text = ("ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model "
            "on CPU. You need Ampere+ GPU with cuda>=11.0.\n")
    assert sig(text) == "precision-unsupported"
    assert sig("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with "
               "cuda>=11.0\n") == "precision-unsupported"
