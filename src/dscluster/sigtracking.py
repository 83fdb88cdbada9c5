"""Failure signatures of logging and metrics inside distributed training runs (round 100 of issue 45): an experiment
tracker used in a process that has no run of its own (wandb initialised on rank 0 only, then wandb.log, wandb.run or
a framework logger's experiment touched on the other ranks), a TensorBoard writer built on every rank racing to create
one log directory, and Accelerate's check that the tensors a gather collects have one shape on every process. Each
pattern is the wording of the component that prints it, never one log's: wandb's pre-init placeholders
(wandb/sdk/lib/preinit.py: `You must call wandb.init() before {name}()`, `... before {name}.{key}`), Python's
AttributeError on `wandb.run` (None until wandb.init ran in this process) and on PyTorch Lightning's WandbLogger
experiment (pytorch_lightning/logging/wandb.py, later loggers/wandb.py), Python's FileExistsError raised under
torch.utils.tensorboard's or tensorboardX's writer (tensorboardX/record_writer.py directory_check: `if not
os.path.exists(path): os.makedirs(path)`), and Accelerate's verify_operation (accelerate/utils/operations.py:
`Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.`). sigmessages.py
places this table right after the training stack's. The real logs they are measured on are tests/data/failures."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# Python's AttributeError on None, the object the traceback's last source line used (a line of its own, a caret line
# under it in Python 3.11+ and a rank prefix or timestamp before each); each stretch bounded, read in linear time.
_NONE_ATTR = r"[^\n]*AttributeError: 'NoneType' object has no attribute '"
_CARETS = r"(?:[^\n^]*\^[\^~ \t]*\n)?"

# What wandb-no-run-on-rank says, for both its entries below.
_WANDB_CAUSE = ("This process has no wandb run: wandb.init ran only in the rank-0 process (the usual setup, or a "
                "framework's logger that creates the run on rank zero only), or not in this process at all, yet this "
                "rank called wandb.log, read wandb.run or used the logger's experiment, which wandb refuses before init "
                "(or which is None there).")
_WANDB_FIX = ("Touch wandb only where the run was created: guard each wandb.log / wandb.run / logger.experiment use with "
              "a rank-0 check (Lightning's @rank_zero_only or trainer.is_global_zero, accelerator.is_main_process, "
              "dist.get_rank() == 0), or call wandb.init in every process on purpose (a group, or wandb's shared mode); "
              "a framework logger that does it itself (PyTorch Lightning's WandbLogger under ddp before 0.7.3) needs an "
              "upgrade. A restart fails the same way.")
# Review 108: not where this process's run was finished before the error: wandb's Run.finish prints its footer ("wandb:
# Find logs at: DIR", the run's directory run-YYYYMMDD_HHMMSS-ID, wandb/sdk/wandb_run.py) and then puts the pre-init placeholders back (module.unset_globals:
# wandb.log raises "You must call wandb.init() before wandb.log()", wandb.run is None), so a wandb.log after the finish
# (a callback's or the script's after training ends: wandb/wandb#4364) fails so in a process that had its run. Read with
# the lines before the error (sigmessages.READS_BEFORE), where the footer stands; the first footer only (atomic group),
# then the error after it: linear time.
_NO_FINISHED_RUN = (r"\A(?!(?>[\s\S]*?Find logs at: [^\n]{0,200}?run-\d{8}_\d{6}-)[\s\S]*?(?:You must call "
                    r"wandb\.init\(\) before|AttributeError: 'NoneType'))[\s\S]*?")
WANDB_NO_RUN = (
    # wandb's placeholders before init (preinit.py PreInitCallable/PreInitObject: wandb.log(), wandb.config.update,
    # wandb.summary['k']).
    _sig("wandb-no-run-on-rank", _NO_FINISHED_RUN + r"(?P<ev>You must call wandb\.init\(\) before wandb\.)",
         _WANDB_CAUSE, _WANDB_FIX, retry=False),
    # wandb.run is None in a process without wandb.init (`wandb.run.id` then fails on None); Lightning 0.7's
    # WandbLogger in a ddp child whose wandb.init returned None (logging/wandb.py log_hyperparams).
    _sig("wandb-no-run-on-rank",
         _NO_FINISHED_RUN +
         r"(?:\bwandb\.run\.(?P<run_attr>\w+)\b|[/\\](?:logging|loggers)[/\\]wandb\.py\", line \d+, in \w+\n"
         r"[^\n]{0,200}?\bself\.experiment\.(?P<exp_attr>\w+)\b)[^\n]{0,300}\n" + _CARETS +
         r"(?P<ev>" + _NONE_ATTR + r"(?:(?P=run_attr)|(?P=exp_attr))')",
         _WANDB_CAUSE, _WANDB_FIX, retry=False),
)

TRACKING_SIGNATURES: tuple[Signature, ...] = (
    *WANDB_NO_RUN,
    # A FileExistsError under a TensorBoard writer's frame (torch.utils.tensorboard's SummaryWriter/FileWriter,
    # tensorboardX's directory_check: exists-then-makedirs, which two ranks race through).
    _sig("logger-on-every-rank",
         r"[/\\](?:torch[/\\]utils[/\\]tensorboard|tensorboardX)[/\\]\w+\.py\", line \d+, in \w+\n"
         r"(?:[^\n]*\n){0,8}?(?P<ev>[^\n]*FileExistsError: \[Errno 17\] File exists)",
         "A TensorBoard writer (SummaryWriter) was created in every rank of the distributed run: all of them create "
         "the same log directory at once, and a rank that checked it did not exist yet failed with FileExistsError "
         "when another had just made it.",
         "Create the writer (or the logging callback that builds it) only on rank 0 (dist.get_rank() == 0, "
         "accelerator.is_main_process, the framework's rank-zero-only logger), or give each rank its own log "
         "directory (a rank suffix); create the directory once with os.makedirs(..., exist_ok=True) before the ranks "
         "start. Launched again it may pass or fail on the same race.", retry=False),
    # Accelerate's verify_operation (debug mode): gather/reduce/broadcast given tensors of different shapes per process.
    _sig("gather-shape-mismatch",
         r"Cannot apply desired operation due to shape mismatches",
         "Accelerate was asked to gather (or reduce, broadcast) tensors that do not have one shape on every process: "
         "each rank's batch or predictions have another length (batches padded per process to their own longest "
         "sequence, or not padded at all, a last batch of another size), and its debug check refused them (without "
         "the check the collective hangs or fails).",
         "Give every process tensors of one shape before the gather: pad to a fixed length in the collate function "
         "(padding='max_length'), or call accelerator.pad_across_processes(tensor, dim=1, pad_index=...) before "
         "accelerator.gather / gather_for_metrics; for ragged outputs gather them as objects "
         "(gather_for_metrics(..., use_gather_object=True)). A restart fails the same way.", retry=False),
)
