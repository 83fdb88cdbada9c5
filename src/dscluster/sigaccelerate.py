"""Failure signatures of Hugging Face Accelerate used directly (the Accelerator API, its DeepSpeed integration),
written from accelerate's own sources (issue 45; live round 166). sigmessages.py places this table right after
siglibs.py's, in the order these had there. Each is deterministic: none lets a restart help."""

from __future__ import annotations

import re

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig


def _not_filled_for_one(m: re.Match) -> bool:
    """accelerate-world-of-one's DeepSpeed numbers "T != M * G * W" where T is not M x G: not the "auto" batch filled
    for a world of 1 process, but numbers that do not add up for another reason (DeepSpeed's own check says it)."""
    return int(m[1]) != int(m[2]) * int(m[3])


ACCELERATE_SIGNATURES: tuple[Signature, ...] = (
    # Round 166 (Accelerate used directly): accelerate's Accelerator.load_state (accelerator.py, 0.17 to today) given a
    # directory that is not there ("Tried to find {input_dir} but folder does not exist"), or, with
    # ProjectConfiguration(automatic_checkpoint_naming=True) and no directory, listing project_dir/checkpoints before
    # any save made it (`folders = [... for folder in os.listdir(input_dir)]`, FileNotFoundError). A missing file inside
    # a checkpoint folder that exists (load_accelerator_state's model or optimizer file) is another case.
    _sig("accelerate-resume-no-checkpoint", r"ValueError: Tried to find (?:(?!Tried to find )[^\n]){1,400}? but folder "
         r"does not exist|in load_state\n(?:\[rank\d+\]: ?)?[ \t]*folders = [^\n]{0,120}\bfor folder in "
         r"os\.listdir\(input_dir\)\]?\n(?:[^\n]*\n){0,3}?[^\n]*FileNotFoundError: \[Errno 2\]",
         "accelerator.load_state() found no saved state to resume from: the directory it was given does not exist "
         "(or, with automatic_checkpoint_naming, project_dir/checkpoints holds nothing yet): a first launch that "
         "resumes unconditionally, a path relative to another working directory, or a run that never reached its "
         "first save_state.",
         "Resume only when a checkpoint exists: call accelerator.load_state(dir) only if os.path.isdir(dir) (with "
         "automatic naming, only if project_dir/checkpoints has a checkpoint_N folder), and give the same absolute "
         "path save_state wrote. A restart fails the same way until a state is saved.", retry=False),
    # accelerate's AcceleratorState._check_initialized (state.py, 0.1x to today; forks add flags such as
    # autocast_backend): a second Accelerator (or AcceleratorState) in the same process asked for another
    # mixed_precision or cpu=True than the first one was made with; the state is a per-process singleton.
    _sig("accelerate-state-reinit", r"AcceleratorState has already been initialized and cannot be changed, restart "
         r"your runtime",
         "A second Accelerator was made in the same process with another setting (the mixed_precision or cpu=True "
         "the error names) than the first one: Accelerate's state is made once per process, by the first "
         "Accelerator() (or AcceleratorState/PartialState: a helper, a logging or data module, a library that "
         "creates one on import), and cannot change afterwards.",
         "Create one Accelerator, with every setting (mixed_precision, cpu, plugins), before anything else creates "
         "one, and pass it (or use accelerator.state) where another was made; or make the first one with the same "
         "settings. In a notebook, restart the kernel. A restart of the run fails the same way.", retry=False),
    # Accelerate on a CPU-only torch, not told to use the CPU (accelerate >= 1.13's PartialState._prepare_backend
    # finds no device backend): it joins the launcher's process group but counts a world of 1, fills DeepSpeed's
    # "auto" train_batch_size as micro x accumulation x 1, and DeepSpeed's _batch_assertion counts every rank
    # ("16 != 16 * 1 * 2", "16 != 8 * 2 * 2"). Set aside where the batch is not micro x accumulation (numbers of the
    # user's own). Accelerator(cpu=True) drops a DeepSpeedPlugin (state.py: DEEPSPEED only `and not cpu`).
    _sig("accelerate-world-of-one", r"[/\\]accelerate[/\\](?:(?![/\\]accelerate[/\\])[\s\S]){0,8000}?train_batch_size "
         r"is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size ?(\d+) != (\d+) \* (\d+) \* "
         r"(?:[2-9]|\d{2,})\b",
         "Accelerate set each rank up as a world of 1 process, so DeepSpeed's \"auto\" batch size was filled for one "
         "process while DeepSpeed runs all of them: accelerate 1.13 and later, with a torch that has no GPU "
         "backend (a CPU-only build) and no word to use the CPU, find no device and count a single process.",
         "On a CPU-only torch tell Accelerate to use the CPU: the Trainer's --use_cpu (TrainingArguments("
         "use_cpu=True)) or Accelerator(cpu=True), which then runs without DeepSpeed (Accelerate sets DeepSpeed up "
         "only off the CPU and leaves a DeepSpeedPlugin unused); on GPU nodes install a CUDA build of torch; or pin "
         "accelerate<1.13.", retry=False, aside_if=lambda m, _texts: _not_filled_for_one(m)),
    # Round 188 (live): accelerator.py Accelerator.__init__ (accelerate 0.17 to today) refuses the accumulation steps
    # given both ways: "You can only pass one of `gradient_accumulation_steps` and `gradient_accumulation_plugin`."
    _sig("accelerate-accumulation-steps-and-plugin", r"You can only pass one of `?gradient_accumulation_steps`? and "
         r"`?gradient_accumulation_plugin`?",
         "Accelerator() was given gradient accumulation twice: gradient_accumulation_steps=N and a "
         "GradientAccumulationPlugin (gradient_accumulation_plugin=...), which carries its own num_steps; Accelerate "
         "takes only one of them.",
         "Drop gradient_accumulation_steps from Accelerator(...) and put the number in the plugin: "
         "Accelerator(gradient_accumulation_plugin=GradientAccumulationPlugin(num_steps=N, sync_with_dataloader=...)); "
         "or keep gradient_accumulation_steps=N alone when the plugin's other options are not needed. A restart fails "
         "the same way.", retry=False),
)
