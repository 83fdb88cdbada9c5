"""Round 100's rules (issue 45), from threads on logging, experiment tracking and evaluation inside distributed training
runs: wandb used on a rank that has no run (wandb.log before init, wandb.run None, Lightning's WandbLogger experiment
None under ddp; before: error-line or python-error), a TensorBoard writer built on every rank racing to create one log
directory (before: python-error), and Accelerate's check that a gather's tensors have one shape on every process
(before: python-error). A second wording of each, in another release's or caller's words than the corpus case it was
written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("wandb-no-run-on-rank", "logger-on-every-rank", "gather-shape-mismatch")


@pytest.mark.parametrize("text,expected", [
    # wandb/sdk/lib/preinit.py PreInitObject.__getattr__ (wandb.config.update on a rank without init), under torchrun
    ("[rank1]:     wandb.config.update(vars(args))\n"
     "[rank1]: wandb.errors.errors.Error: You must call wandb.init() before wandb.config.update\n",
     "wandb-no-run-on-rank"),
    # preinit.py PreInitObject.__getitem__ (f"... before {self._name}[{key!r}]")
    ("wandb.errors.Error: You must call wandb.init() before wandb.summary['best_acc']\n", "wandb-no-run-on-rank"),
    # Lightning-AI/pytorch-lightning#7028's title, older wandb's exception module
    ("wandb.errors.error.Error: You must call wandb.init() before wandb.log()\n", "wandb-no-run-on-rank"),
    # wandb.run read on a rank without init, Python 3.10 (no caret line)
    ("  File \"/workspace/callbacks.py\", line 31, in on_train_start\n"
     "    run_name = wandb.run.name\n"
     "AttributeError: 'NoneType' object has no attribute 'name'\n", "wandb-no-run-on-rank"),
    # PyTorch Lightning's later WandbLogger.log_hyperparams (loggers/wandb.py), the experiment None in that process
    ("  File \"/usr/local/lib/python3.8/site-packages/pytorch_lightning/loggers/wandb.py\", line 372, in "
     "log_hyperparams\n"
     "    self.experiment.config.update(params, allow_val_change=True)\n"
     "AttributeError: 'NoneType' object has no attribute 'config'\n", "wandb-no-run-on-rank"),
    # torch.utils.tensorboard's SummaryWriter built on every rank (fastai2#13's shape, torch's own frames)
    ("  File \"/opt/conda/lib/python3.8/site-packages/torch/utils/tensorboard/writer.py\", line 247, in __init__\n"
     "    self._get_file_writer()\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/torch/utils/tensorboard/writer.py\", line 277, in "
     "_get_file_writer\n"
     "    self.file_writer = FileWriter(\n"
     "  File \"/opt/conda/lib/python3.8/os.py\", line 223, in makedirs\n"
     "    mkdir(name, mode)\n"
     "FileExistsError: [Errno 17] File exists: 'runs/Jan05_10-11-12_node1'\n", "logger-on-every-rank"),
    # tensorboardX's record_writer.directory_check (exists, then os.makedirs), Windows paths
    ("  File \"C:\\envs\\tb\\lib\\site-packages\\tensorboardX\\record_writer.py\", line 51, in directory_check\n"
     "    os.makedirs(path)\n"
     "  File \"C:\\envs\\tb\\lib\\os.py\", line 225, in makedirs\n"
     "    mkdir(name, mode)\n"
     "FileExistsError: [Errno 17] File exists: 'logs\\\\exp3'\n", "logger-on-every-rank"),
    # accelerate/utils/operations.py verify_operation, the whole message, then chained_operation's
    ("accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape "
     "mismatches. All shapes across devices must be valid.\n\n"
     "Operation: `accelerate.utils.operations.gather`\nInput shapes:\n  - Process 0: [4, 512]\n"
     "  - Process 1: [4, 480]\n\n"
     "The above exception was the direct cause of the following exception:\n\n"
     "accelerate.utils.operations.DistributedOperationException: Error found while calling "
     "`accelerate.utils.operations.gather`. Please see the earlier error for more details.\n",
     "gather-shape-mismatch"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # wandb's own refusal without a key (sigtraining wandb-login) and its init timeout: another cause
    ("wandb.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n",
     "wandb-no-run-on-rank"),
    ("wandb: ERROR Run initialization has timed out after 90.0 sec. Please try increasing the timeout with the "
     "`init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.\n", "wandb-no-run-on-rank"),
    # an AttributeError on None that is not wandb's run
    ("    run_id = run.id\nAttributeError: 'NoneType' object has no attribute 'id'\n", "wandb-no-run-on-rank"),
    # wandb.run read, then an AttributeError on another attribute of another None object
    ("    tags = wandb.run.tags\n    name = cfg.experiment.name\n"
     "AttributeError: 'NoneType' object has no attribute 'name'\n", "wandb-no-run-on-rank"),
    # Lightning's TensorBoardLogger (loggers/tensorboard.py), not wandb's
    ("  File \"/usr/local/lib/python3.8/site-packages/pytorch_lightning/loggers/tensorboard.py\", line 210, in "
     "log_metrics\n    self.experiment.add_scalar(k, v, step)\n"
     "AttributeError: 'NoneType' object has no attribute 'add_scalar'\n", "wandb-no-run-on-rank"),
    # a checkpoint directory made with exist_ok=True that still fails (sigcheckpoint's), no TensorBoard frame
    ("    os.makedirs(save_dir, exist_ok=True)\n"
     "  File \"/usr/lib/python3.8/os.py\", line 223, in makedirs\n    mkdir(name, mode)\n"
     "FileExistsError: [Errno 17] File exists: '/ckpt/step_100'\n", "logger-on-every-rank"),
    # a TensorBoard writer refused its directory for permissions, not a race
    ("  File \"/opt/conda/lib/python3.8/site-packages/torch/utils/tensorboard/writer.py\", line 247, in __init__\n"
     "    self._get_file_writer()\n  File \"/opt/conda/lib/python3.8/os.py\", line 223, in makedirs\n"
     "    mkdir(name, mode)\nPermissionError: [Errno 13] Permission denied: 'runs'\n", "logger-on-every-rank"),
    # accelerate's other verify_operation refusal: a tensor on the wrong device
    ("accelerate.utils.operations.DistributedOperationException: One or more of the tensors passed to "
     "accelerate.utils.operations.gather were not on the cpu while the `Accelerator` is configured for cuda. Please "
     "move it to the cuda before calling accelerate.utils.operations.gather.\n", "gather-shape-mismatch"),
    # chained_operation's line alone says no shape
    ("accelerate.utils.operations.DistributedOperationException: Error found while calling "
     "`accelerate.utils.operations.gather`. Please see the earlier error for more details.\n",
     "gather-shape-mismatch"),
    # torch's own debug check of mismatched collectives (EchoseChen/SPA-VL-RLHF#2): collective-mismatch's
    ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
     "CollectiveFingerPrint(SequenceNumber=14370, OpType=BROADCAST, TensorShape=[33554432], TensorDtypes=BFloat16), "
     "but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=14370, OpType=BROADCAST, "
     "TensorShape=[38838272], TensorDtypes=BFloat16).Collectives differ in the following aspects: \t Tensor Tensor "
     "shapes: 33554432vs 38838272\n", "gather-shape-mismatch"),
    # torch.cat in an evaluation loop (IDEA-Research/DN-DETR#34)
    ("RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 900 but got size 300 for tensor "
     "number 1 in the list\n", "gather-shape-mismatch"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_collective_mismatch_stays():
    assert sig("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
               "CollectiveFingerPrint(SequenceNumber=14370, OpType=BROADCAST, TensorShape=[33554432]), but Rank 2 is "
               "running collective: CollectiveFingerPrint(SequenceNumber=14370, OpType=BROADCAST, "
               "TensorShape=[38838272]).Collectives differ in the following aspects: \t Tensor Tensor shapes: "
               "33554432vs 38838272\n") == "collective-mismatch"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
