"""Round 198's rules (issue 45, live: customising the Hugging Face Trainer in transformers 5.23): compute_metrics
returning no dict (hf-metrics-not-dict), a TrainerCallback returning something other than the control
(hf-callback-return-not-control) or whose hook takes no **kwargs (hf-callback-hook-signature), batches that are no
mapping (hf-batch-not-mapping), prediction_step not returning (loss, logits, labels) (hf-prediction-step-return),
create_optimizer not setting self.optimizer (hf-create-optimizer-unset), optimizers= not a pair
(hf-optimizers-not-pair), compute_loss always returning (loss, outputs) (hf-compute-loss-tuple) and training_step
returning no tensor (hf-training-step-not-tensor). The cases' own logs, second wordings and near misses that must stay
off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("hf-metrics-not-dict", "hf-callback-return-not-control", "hf-callback-hook-signature", "hf-batch-not-mapping",
       "hf-prediction-step-return", "hf-create-optimizer-unset", "hf-optimizers-not-pair", "hf-compute-loss-tuple",
       "hf-training-step-not-tensor")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-hftrainer-metrics-float", "hf-metrics-not-dict"),
    ("live-hftrainer-callback-returns-bool", "hf-callback-return-not-control"),
    ("live-hftrainer-callback-no-kwargs", "hf-callback-hook-signature"),
    ("live-hftrainer-collator-tuple", "hf-batch-not-mapping"),
    ("live-hftrainer-prediction-step-loss-only", "hf-prediction-step-return"),
    ("live-hftrainer-create-optimizer-unset", "hf-create-optimizer-unset"),
    ("live-hftrainer-optimizers-not-tuple", "hf-optimizers-not-pair"),
    ("live-hftrainer-compute-loss-tuple", "hf-compute-loss-tuple"),
    ("live-hftrainer-training-step-float", "hf-training-step-not-tensor"),
    ("live-hftrainer-include-inputs-for-metrics", "import-name"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    trainer.train()\n'
_HF = "/usr/local/lib/python3.10/dist-packages/transformers/trainer.py"
_CB = "/usr/local/lib/python3.10/dist-packages/transformers/trainer_callback.py"


@pytest.mark.parametrize("text, name", [
    # compute_metrics returning None, and no eval loss (prediction_loss_only off, no labels): the keys() line
    (_TB + f'  File "{_HF}", line 4290, in evaluation_loop\n    for key in list(metrics.keys()):\n'
     "AttributeError: 'NoneType' object has no attribute 'keys'\n", "hf-metrics-not-dict"),
    # a dict returned by on_evaluate, ranks' prefixes (Python 3.10, no caret lines)
    ("[rank0]: " + _TB.replace("\n", "\n[rank0]: ", 3) + f'[rank0]:   File "{_HF}", line 3050, in '
     "_maybe_log_save_evaluate\n[rank0]:     if self.control.should_save:\n"
     "[rank0]: AttributeError: 'dict' object has no attribute 'should_save'\n", "hf-callback-return-not-control"),
    # on_log without **kwargs (Python 3.9's bare function name), and a hook without args, state, control
    (_TB + "TypeError: on_log() got an unexpected keyword argument 'model'\n", "hf-callback-hook-signature"),
    (_TB + f'  File "{_CB}", line 520, in call_event\n    result = getattr(callback, event)(\n'
     "TypeError: LossPrinter.on_step_end() takes 1 positional argument but 4 were given\n",
     "hf-callback-hook-signature"),
    # a model without loss kwargs: model(**inputs) of a list
    (_TB + f'  File "{_HF}", line 3801, in compute_loss\n    outputs = model(**inputs)\n'
     "TypeError: transformers.models.bert.modeling_bert.BertForSequenceClassification.forward() argument after ** "
     "must be a mapping, not list\n", "hf-batch-not-mapping"),
    # a pair returned by prediction_step
    (_TB + f'  File "{_HF}", line 4190, in evaluation_loop\n'
     "    losses, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)\n"
     "ValueError: not enough values to unpack (expected 3, got 2)\n", "hf-prediction-step-return"),
    # a cosine schedule on no optimizer
    (_TB + f'  File "{_HF}", line 1180, in create_scheduler\n    self.lr_scheduler = get_scheduler(\n'
     '  File "/usr/local/lib/python3.10/dist-packages/torch/optim/lr_scheduler.py", line 88, in __init__\n'
     "    for group in optimizer.param_groups:\n"
     "AttributeError: 'NoneType' object has no attribute 'param_groups'\n", "hf-create-optimizer-unset"),
    # a 1-tuple for optimizers
    (_TB + f'  File "{_HF}", line 620, in __init__\n    self.optimizer, self.lr_scheduler = optimizers\n'
     "ValueError: not enough values to unpack (expected 2, got 1)\n", "hf-optimizers-not-pair"),
    # several GPUs under DataParallel: loss.mean() of the tuple
    (_TB + f'  File "{_HF}", line 3760, in training_step\n    loss = loss.mean()  # mean() to average on multi-gpu\n'
     "AttributeError: 'tuple' object has no attribute 'mean'\n", "hf-compute-loss-tuple"),
    # logging_nan_inf_filter=False: the device check of a float
    (_TB + f'  File "{_HF}", line 2530, in _inner_training_loop\n'
     "    if tr_loss.device != tr_loss_step.device:\n"
     "AttributeError: 'float' object has no attribute 'device'\n", "hf-training-step-not-tensor"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # the user's own compute_metrics failing inside (called from evaluation_loop): its bug, not its return value
    (_TB + f'  File "{_HF}", line 4280, in evaluation_loop\n    metrics = self.compute_metrics(\n'
     '  File "train.py", line 22, in compute_metrics\n    preds[mask] = -100\n'
     "TypeError: 'tuple' object does not support item assignment\n", "hf-metrics-not-dict"),
    # a PyTorch Lightning callback with a hook of the same name: Lightning passes (trainer, pl_module) positionally
    (_TB + "TypeError: MyCallback.on_train_end() takes 2 positional arguments but 3 were given\n",
     "hf-callback-hook-signature"),
    # a plain loop's model(**batch) of a tensor batch: no Trainer's compute_loss
    (_TB + "TypeError: GPT2LMHeadModel.forward() argument after ** must be a mapping, not Tensor\n",
     "hf-batch-not-mapping"),
    # an unpacking error inside the user's prediction_step override: its own bug
    (_TB + f'  File "{_HF}", line 4190, in evaluation_loop\n'
     "    losses, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)\n"
     '  File "train.py", line 31, in prediction_step\n    logits, hidden = outputs\n'
     "ValueError: too many values to unpack (expected 2)\n", "hf-prediction-step-return"),
    # the user's own scheduler built on None, no Trainer
    (_TB + '  File "/usr/local/lib/python3.10/dist-packages/torch/optim/lr_scheduler.py", line 88, in __init__\n'
     "    for group in optimizer.param_groups:\n"
     "AttributeError: 'NoneType' object has no attribute 'param_groups'\n", "hf-create-optimizer-unset"),
    # a LightningModule's training_step dividing a tuple: not the Trainer's
    (_TB + '  File "model.py", line 55, in training_step\n    loss = out / self.accum\n'
     "TypeError: unsupported operand type(s) for /: 'tuple' and 'int'\n", "hf-compute-loss-tuple"),
    # torch.isnan of a float in the user's own loop
    (_TB + '  File "train.py", line 60, in <module>\n    if torch.isnan(loss_value):\n'
     "TypeError: isnan(): argument 'input' (position 1) must be Tensor, not float\n", "hf-training-step-not-tensor"),
])
def test_near_misses(text, name):
    assert sig(text) != name
