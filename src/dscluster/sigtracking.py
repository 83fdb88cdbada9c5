"""Failure signatures of logging and metrics inside distributed training runs (round 100 of issue 45): an experiment
tracker used in a process that has no run of its own (wandb initialised on rank 0 only, then wandb.log, wandb.run or
a framework logger's experiment touched on the other ranks), a TensorBoard writer built on every rank racing to create
one log directory, and Accelerate's check that the tensors a gather collects have one shape on every process. Round
180 (live) adds the HF Trainer's reporting callbacks without their package and report_to names it does not know, a
tensor of many elements logged as one number, a TensorBoard image of another shape, Tensor.numpy on a tensor that
requires grad, a profiler trace saved twice and torch.cuda.memory_summary without CUDA (their sources beside each). Each
pattern is the wording of the component that prints it, never one log's: wandb's pre-init placeholders
(wandb/sdk/lib/preinit.py: `You must call wandb.init() before {name}()`, `... before {name}.{key}`), Python's
AttributeError on `wandb.run` (None until wandb.init ran in this process) and on PyTorch Lightning's WandbLogger
experiment (pytorch_lightning/logging/wandb.py, later loggers/wandb.py), Python's FileExistsError raised under
torch.utils.tensorboard's or tensorboardX's writer (tensorboardX/record_writer.py directory_check: `if not
os.path.exists(path): os.makedirs(path)`), and Accelerate's verify_operation (accelerate/utils/operations.py:
`Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.`). sigmessages.py
places this table right after the training stack's. The real logs they are measured on are tests/data/failures."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

# Python's AttributeError on None, the object the traceback's last source line used (a line of its own, a caret line
# under it in Python 3.11+ and a rank prefix or timestamp before each); each stretch bounded, read in linear time.
_NONE_ATTR = r"[^\n]*AttributeError: 'NoneType' object has no attribute '"

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
         r"[^\n]{0,200}?\bself\.experiment\.(?P<exp_attr>\w+)\b)[^\n]{0,300}\n" + CARET_LINE +
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
    # Round 180 (issue 45), live failures of logging and monitoring calls. transformers' reporting callbacks refuse to
    # start when their tracker's package is missing (transformers/integrations/integration_utils.py: WandbCallback
    # `WandbCallback requires wandb to be installed. Run `pip install wandb`.`, MLflowCallback, CometCallback
    # `requires comet-ml>=... to be installed`, TensorBoardCallback, ClearMLCallback `requires 'clearml' ...`,
    # NeptuneCallback `requires the Neptune client library to be installed`, ...): raised as RuntimeError or ImportError.
    _sig("tracker-not-installed",
         r"(?P<ev>(?:RuntimeError|ImportError|ModuleNotFoundError): \w+Callback requires [^\n]{1,80}? to be installed)",
         "The HF Trainer was told to report to an experiment tracker (report_to names it, or its callback was added by "
         "hand) whose package is not installed in this node's python, so the tracker's callback refused to start.",
         "Install the package the message names in the python of every node (pip install wandb, mlflow, comet-ml, "
         "tensorboard ...), or drop that tracker from report_to (report_to='none', or only trackers that are "
         "installed). A restart fails the same way.", retry=False),
    # transformers' get_reporting_integration_callbacks (integrations/integration_utils.py, since 4.x): a report_to
    # name that is not one of its integrations: `{name} is not supported, only azure_ml, comet_ml, mlflow, ... are
    # supported.` (INTEGRATION_TO_CALLBACK's keys, in every version starting azure_ml, comet_ml, mlflow).
    _sig("report-to-unknown",
         r"(?P<ev>[\w.-]{1,60} is not supported, only azure_ml, comet_ml, mlflow\b[\w, -]{0,400}? are supported)",
         "report_to (TrainingArguments or --report_to) names an integration that transformers does not know: a "
         "misspelled or made-up name (each must be one the message lists, e.g. tensorboard, wandb, mlflow).",
         "Spell it as one of the names the message lists (\"tensorboard\", \"wandb\", ...), or use \"none\" to report "
         "nowhere and \"all\" for every installed tracker. A restart fails the same way.", retry=False),
    # A tensor of many elements where one number is needed: torch.utils.tensorboard's scalar()
    # (torch/utils/tensorboard/summary.py: `Tensor should contain one element (0 dimensions). Was given size: ...`,
    # older torch and tensorboardX: `assert scalar.squeeze().ndim == 0, "scalar should be 0D"`), Tensor.item (aten's
    # _local_scalar_dense: `a Tensor with N elements cannot be converted to Scalar`). Not Tensor.__float__'s `only one
    # element tensors can be converted to Python scalars`: torch.tensor([t1, t2]) of many-element tensors says it too.
    _sig("scalar-of-many-elements",
         r"(?P<ev>Tensor should contain one element \(0 dimensions\)\.\s*Was given size|"
         r"AssertionError: scalar should be 0D|"
         r"\ba Tensor with (?:[2-9]|[1-9]\d+) elements cannot be converted to Scalar)",
         "A tensor of more than one element was used where one number is needed: logged as a scalar "
         "(SummaryWriter.add_scalar/add_scalars), or turned into a number with .item(); e.g. a "
         "per-sample loss (reduction='none'), a batch of predictions compared with labels, or a metric not yet "
         "reduced.",
         "Reduce it to one value before logging (.mean() or .sum(), then .item()), or log each element on its own "
         "(a loop, add_scalars with a dict, add_histogram for a distribution); check where the tensor comes from "
         "(reduction='none', a missing .float().mean()). A restart fails the same way.", retry=False),
    # torch.utils.tensorboard's convert_to_HWC (_utils.py) and tensorboardX's: an image whose number of dimensions is
    # not the dataformats': `size of input tensor and input format are different. tensor shape: (4, 3, 8, 8),
    # input_format: CHW`.
    _sig("tb-image-shape", r"(?P<ev>size of input tensor and input format are different)",
         "SummaryWriter.add_image got a tensor whose number of dimensions is not that of its dataformats (CHW by "
         "default): a whole batch (N, C, H, W) given to add_image, or an image in another layout (HWC, HW) without "
         "saying so.",
         "Give add_image one image (images[0]), or log the batch with add_images (NCHW), or pass dataformats to match "
         "the tensor ('HWC', 'HW', 'NHWC'); make_grid(batch) makes one image of a batch. A restart fails the same "
         "way.", retry=False),
    # Tensor.numpy on a tensor in the autograd graph (torch/csrc/utils/tensor_numpy.cpp): `Can't call numpy() on
    # Tensor that requires grad. Use tensor.detach().numpy() instead.` (older torch: `Can't call numpy() on Variable
    # that requires grad. Use var.detach().numpy() instead.`).
    _sig("numpy-requires-grad",
         r"(?P<ev>Can't call numpy\(\) on (?:Tensor|Variable) that requires grad)",
         "A tensor still attached to the autograd graph (it requires grad: a loss, an output, a parameter) was turned "
         "into a numpy array (.numpy(), or np.array/np.mean/matplotlib/a logger converting it), which torch refuses "
         "while it requires grad.",
         "Detach it first: tensor.detach().cpu().numpy(), or for one number (a loss) loss.item(); compute metrics "
         "under torch.no_grad(). A restart fails the same way.", retry=False),
    # Kineto's trace wrapper (torch/csrc/autograd/profiler_kineto.cpp ActivityTraceWrapper::save, older
    # ProfilerResult::save: `Trace is already saved`): a profiler's trace exported twice.
    _sig("profiler-trace-saved-twice", r"(?P<ev>RuntimeError: Trace is already saved)",
         "A torch.profiler trace was saved twice: the profiler's on_trace_ready handler (tensorboard_trace_handler, "
         "or one calling export_chrome_trace) already saved it, and the script then called prof.export_chrome_trace "
         "(or export_stacks) on the same trace; Kineto's save is destructive, a trace can be written once.",
         "Save each trace once: keep on_trace_ready (its files are under the handler's directory) and drop the later "
         "export_chrome_trace, or drop on_trace_ready and export in your own handler; with a schedule, export inside "
         "on_trace_ready (p.export_chrome_trace(f'trace_{p.step_num}.json')). A restart fails the same way.",
         retry=False),
    # torch.cuda.memory_summary (torch/cuda/memory.py) reads stats["allocated_bytes.all.current"] and the like from
    # memory_stats, which is {} while CUDA is not initialized in this process (no GPU, a CPU build, or nothing put on
    # the GPU yet): a KeyError under its frame.
    _sig("cuda-memory-summary-uninitialized",
         r"[/\\]torch[/\\]cuda[/\\]memory\.py\", line \d+, in memory_summary\n(?:[^\n]*\n){0,8}?"
         r"(?P<ev>[^\n]*KeyError: '[\w.]+')",
         "torch.cuda.memory_summary() was called in a process where CUDA was never initialized: no GPU is visible "
         "(torch's CPU build, CUDA_VISIBLE_DEVICES empty, a CPU-only node) or nothing was put on the GPU yet, so the "
         "allocator's statistics are empty and the report fails on its first key.",
         "Print the memory report only when CUDA is in use (if torch.cuda.is_available() and torch.cuda.is_initialized()"
         "), after the model is on the GPU; on a CPU-only node drop it (or log psutil's host memory instead). A "
         "restart fails the same way.", retry=False),
)
