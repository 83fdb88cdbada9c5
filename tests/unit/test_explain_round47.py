"""Round 47's rules (issue 45), from multi-GPU training with PyTorch Lightning and Lightning Fabric
(sigframeworks.py, rankerror.py): Lightning's strategy registry refusing a name, its DeepSpeed strategy refusing a key
of the DeepSpeed config it sets itself, a name imported from Lightning that the installed version lacks (Python's bare
`cannot import name`), and a pasted traceback that begins at the last frame's code line: a second wording of each, in
another version's or another caller's words than the corpus case it was written from, and near misses that must not
be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigframeworks import FRAMEWORK_SIGNATURES

NEW = ("lightning-strategy-name", "lightning-deepspeed-config")


@pytest.mark.parametrize("text,expected", [
    # Lightning 2.x's Trainer given strategy=None (1.x's default; the case was pytorch_lightning 2.0's 'dp')
    ("  File \"/usr/local/lib/python3.11/dist-packages/lightning/pytorch/trainer/connectors/accelerator_connector.py\""
     ", line 194, in _check_config_and_set_final_flags\n    raise ValueError(\nValueError: You selected an invalid "
     "strategy name: `strategy=None`. It must be either a string or an instance of "
     "`lightning.pytorch.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, deepspeed, ... Find a complete "
     "list of options in our documentation at https://lightning.ai\n", "lightning-strategy-name"),
    # Fabric's connector, a misspelt name, its backticks lost in a paste
    ("ValueError: You selected an invalid strategy name: strategy='deepspeed_stage3'. It must be either a string or "
     "an instance of lightning.fabric.strategies.Strategy. Example choices: auto, ddp, ddp_spawn, deepspeed, dp, ...\n",
     "lightning-strategy-name"),
    # pytorch_lightning 1.5's wording of the same refusal (the case was 2.x's)
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: Within the DeepSpeed config, do not set "
     "gradient_accumulation_steps as this will be set via accumulate_grad_batches=x argument passed via the Lightning "
     "Trainer.\n", "lightning-deepspeed-config"),
    # 1.3's refusal of the batch sizes
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: Within the DeepSpeed config, do not set "
     "train_batch_size or train_micro_batch_size_per_gpu as these will be passed from the data-loader.\n",
     "lightning-deepspeed-config"),
    # Python 3.6's bare ImportError under another Lightning name, with its File line (the case had none)
    ("  File \"train.py\", line 12, in <module>\n    from pytorch_lightning.plugins import DDPPlugin\n"
     "ImportError: cannot import name 'DDPPlugin'\n", "import-name"),
    # an excerpt beginning at the frame's code line: Lightning 2.x's package name
    ("    from lightning.pytorch.strategies import DeepSpeedStrategy, FSDPStrategy\n"
     "ImportError: cannot import name 'FSDPStrategy'\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # an accelerator name refused is not a strategy name
    ("ValueError: You selected an invalid accelerator name: `accelerator='cuda:0'`. Available names are: auto, cpu, "
     "cuda, mps, gpu, tpu.\n", "lightning-strategy-name"),
    # the HF Trainer's DeepSpeed integration comparing values is not Lightning's refusal
    ("ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
     "- ds gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=1\n", "lightning-deepspeed-config"),
    # DeepSpeed's own batch assertion, after the key was removed: not Lightning's refusal
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 256 != 16 * 1 * 8\n", "lightning-deepspeed-config"),
    # a bare ImportError under the user's own module (a circular import in old Python) is not Lightning's version
    ("    from models.utils import build_model\nImportError: cannot import name 'build_model'\n", "import-name"),
    # an unindented line above is not a frame's code line
    ("Loading plugins from pytorch_lightning.plugins import list\nImportError: cannot import name 'helpers'\n",
     "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in FRAMEWORK_SIGNATURES:
        if s.name in NEW or s.cause.startswith("The code imports a name from Lightning"):
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
