"""Round 166's rules (issue 45), from a live round of mistakes users make with Hugging Face Accelerate used directly
(the Accelerator API, with and without its DeepSpeed integration) launched by dscluster launch --local 2:
accelerator.load_state() with no saved state to resume from (accelerator.py load_state: "Tried to find ... but folder
does not exist", or automatic_checkpoint_naming's os.listdir of a project_dir/checkpoints never made), a second
Accelerator with another mixed_precision in the same process (state.py AcceleratorState._check_initialized), and
Accelerate's world of 1 on a CPU-only torch now read for any gradient accumulation ("16 != 8 * 2 * 2", not only
"N != N * 1 * W"); second wordings (other versions' and callers' words than the live cases) and near misses, other
components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("accelerate-resume-no-checkpoint", "accelerate-state-reinit")


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW)
    # the widened world-of-1 fix says what Accelerator(cpu=True) does to a DeepSpeedPlugin
    assert "DeepSpeedPlugin unused" in by_name["accelerate-world-of-one"].fix


@pytest.mark.parametrize("text", [
    # an older accelerate (0.2x) under Python 3.10, pasted from accelerate launch: no rank prefix, a path with ~
    ("Traceback (most recent call last):\n"
     '  File "/home/me/proj/train_lora.py", line 212, in <module>\n'
     "    main()\n"
     '  File "/home/me/proj/train_lora.py", line 140, in main\n'
     "    accelerator.load_state(args.resume_from_checkpoint)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py", line 2772, in load_state\n'
     '    raise ValueError(f"Tried to find {input_dir} but folder does not exist")\n'
     "ValueError: Tried to find /home/me/proj/output/step_1500 but folder does not exist\n"),
    # automatic checkpoint naming on a first launch, Python 3.10 (no carets), a diffusers-style script
    ("Traceback (most recent call last):\n"
     '  File "train_text_to_image.py", line 1103, in <module>\n'
     "    main()\n"
     '  File "train_text_to_image.py", line 871, in main\n'
     "    accelerator.load_state()\n"
     '  File "/usr/local/lib/python3.10/dist-packages/accelerate/accelerator.py", line 2781, in load_state\n'
     "    folders = [os.path.join(input_dir, folder) for folder in os.listdir(input_dir)]\n"
     "FileNotFoundError: [Errno 2] No such file or directory: '/output/sd-model/checkpoints'\n"),
])
def test_accelerate_load_state_without_a_saved_state(text):
    assert sig(text) == "accelerate-resume-no-checkpoint"


@pytest.mark.parametrize("text", [
    # another project's own print with like words (a config loader that downloads checkpoints)
    "Trying to load config from checkpoints folder, but folder does not exist. Downloading checkpoints from Google "
    "Drive...\n",
    # the checkpoint folder exists but lacks the optimizer's file (load_accelerator_state): an incomplete checkpoint
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 77, in <module>\n'
     '    accelerator.load_state("ckpt/epoch_3")\n'
     '  File "/opt/venv/lib/python3.11/site-packages/accelerate/accelerator.py", line 3897, in load_state\n'
     "    override_attributes = load_accelerator_state(\n"
     '  File "/opt/venv/lib/python3.11/site-packages/accelerate/checkpointing.py", line 214, in load_accelerator_state\n'
     "    optimizer_state = load(input_optimizer_file, map_location=map_location)\n"
     '  File "/opt/venv/lib/python3.11/site-packages/accelerate/utils/other.py", line 383, in load\n'
     "    loaded_obj = torch.load(f, map_location=map_location, **kwargs)\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'ckpt/epoch_3/optimizer.bin'\n"),
    # the Trainer's resume with no checkpoint stays the Trainer's own family
    "ValueError: No valid checkpoint found in output directory (out/run-3)\n",
])
def test_near_misses_are_not_accelerate_resume_no_checkpoint(text):
    assert sig(text) != "accelerate-resume-no-checkpoint"


@pytest.mark.parametrize("text", [
    # cpu=True asked of a second Accelerator after a GPU one (the flag the error names is cpu=True)
    ("Traceback (most recent call last):\n"
     '  File "/workspace/eval.py", line 31, in <module>\n'
     "    accelerator = Accelerator(cpu=True)\n"
     '  File "/usr/local/lib/python3.10/dist-packages/accelerate/accelerator.py", line 371, in __init__\n'
     "    self.state = AcceleratorState(\n"
     '  File "/usr/local/lib/python3.10/dist-packages/accelerate/state.py", line 777, in __init__\n'
     "    self._check_initialized(mixed_precision, cpu)\n"
     '  File "/usr/local/lib/python3.10/dist-packages/accelerate/state.py", line 893, in _check_initialized\n'
     '    raise ValueError(err.format(flag="cpu=True"))\n'
     "ValueError: AcceleratorState has already been initialized and cannot be changed, restart your runtime completely "
     "and pass `cpu=True` to `Accelerator()`.\n"),
    # a fork's AcceleratorState with its own flag (autocast_backend), the same words
    "ValueError: AcceleratorState has already been initialized and cannot be changed, restart your runtime completely "
    "and pass `autocast_backend='bf16'` to `Accelerator()`.\n",
])
def test_second_accelerator_with_other_settings(text):
    assert sig(text) == "accelerate-state-reinit"


@pytest.mark.parametrize("text", [
    # a test helper's log that resets the singletons between tests (no refusal)
    "WARNING conftest: AcceleratorState has already been initialized and cannot be changed by this test; resetting "
    "the singletons\n",
    # a second Accelerator given a DeepSpeedPlugin: another refusal with its own words
    ("NotImplementedError: You cannot pass in a `deepspeed_plugin` when creating a second `Accelerator`. Please make "
     "sure the first `Accelerator` is initialized with all the plugins you want to use.\n"),
    # AcceleratorState made directly before any Accelerator: another refusal
    ("ValueError: Please make sure to properly initialize your accelerator via `accelerator = Accelerator()` before "
     "using any functionality from the `accelerate` library.\n"),
])
def test_near_misses_are_not_accelerate_state_reinit(text):
    assert sig(text) != "accelerate-state-reinit"


_PREPARE_DS = (
    "[rank0]: Traceback (most recent call last):\n"
    '[rank0]:   File "/home/user/proj/train.py", line 40, in <module>\n'
    "[rank0]:     model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n"
    '[rank0]:   File "/opt/venv/lib/python3.12/site-packages/accelerate/accelerator.py", line 1551, in prepare\n'
    "[rank0]:     result = self._prepare_deepspeed(*args)\n"
    '[rank0]:   File "/opt/venv/lib/python3.12/site-packages/accelerate/accelerator.py", line 2160, in '
    "_prepare_deepspeed\n"
    "[rank0]:     engine, optimizer, _, lr_scheduler = ds_initialize(**kwargs)\n"
    '[rank0]:   File "/opt/venv/lib/python3.12/site-packages/deepspeed/runtime/config.py", line 947, in _batch_assertion\n'
    "[rank0]:     assert train_batch == micro_batch * grad_acc * self.world_size, (\n"
)


@pytest.mark.parametrize("text", [
    # gradient accumulation 4 on 4 ranks through accelerate's own prepare
    _PREPARE_DS + "[rank0]: AssertionError: Check batch related parameters. train_batch_size is not equal to "
    "micro_batch_per_gpu * gradient_acc_step * world_size 64 != 16 * 4 * 4\n",
    # the original form, accumulation 1
    _PREPARE_DS + "[rank0]: AssertionError: Check batch related parameters. train_batch_size is not equal to "
    "micro_batch_per_gpu * gradient_acc_step * world_size 8 != 8 * 1 * 2\n",
])
def test_accelerate_world_of_one_any_accumulation(text):
    assert sig(text) == "accelerate-world-of-one"


@pytest.mark.parametrize("text", [
    # numbers of the user's own ds_config that do not add up (32 is not 8 x 2): DeepSpeed's batch check, not a world of 1
    _PREPARE_DS + "[rank0]: AssertionError: Check batch related parameters. train_batch_size is not equal to "
    "micro_batch_per_gpu * gradient_acc_step * world_size 32 != 8 * 2 * 4\n",
    # deepspeed.initialize called by the script itself, no accelerate in the traceback
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 52, in <module>\n'
     "    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())\n"
     '  File "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/config.py", line 602, in _batch_assertion\n'
     "    assert train_batch == micro_batch * grad_acc * self.world_size, (\n"
     "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 16 != 8 * 2 * 2\n"),
])
def test_near_misses_are_not_accelerate_world_of_one(text):
    assert sig(text) == "ds-batch-assert"
