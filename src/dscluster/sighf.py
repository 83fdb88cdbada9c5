"""Failure signatures of Hugging Face's training stack in its own words (round 25 of issue 45): the Trainer refusing a
model loaded before ZeRO-3 was in effect, and accelerate's launcher given several machines but no rank for this one.
Each pattern is the wording of the code that prints it (transformers' trainer.py, accelerate's utils/launch.py), never
one log's; `retry=False` throughout: the same command meets the same check again. sigmessages.py places this table
after the other frameworks'. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

HF_SIGNATURES: tuple[Signature, ...] = (
    # transformers' Trainer (_validate_model / __init__): `if is_deepspeed_zero3_enabled() and not getattr(model,
    # "_transformers_zero3_init_used", True): raise ValueError("Model was not initialized with `Zero-3` despite being
    # configured for DeepSpeed Zero-3. Please re-initialize your model via `Model.from_pretrained(...)` or
    # `Model.from_config(...)` after creating your `TrainingArguments`!")`; from_pretrained marks the model when
    # deepspeed.zero.Init was not used for it (ZeRO-3 not yet on when it was loaded).
    _sig("zero3-not-initialized", r"Model was not initiali[sz]ed with `?Zero-?3`? despite being configured",
         "The Trainer refused the model: the run is configured for DeepSpeed ZeRO-3, but the model was loaded without "
         "ZeRO-3's partitioned initialisation (deepspeed.zero.Init), because it was loaded before the "
         "TrainingArguments (or SFTConfig) that turn ZeRO-3 on were created, or in a way that skips it.",
         "Create the TrainingArguments/SFTConfig with the ZeRO-3 config first and load the model after them with "
         "from_pretrained/from_config (or give the Trainer model_init= that loads it); for a quantized (QLoRA) model, "
         "follow PEFT's ZeRO-3 recipe (accelerate launch with zero3_init_flag) or use ZeRO-2. A restart fails the "
         "same way.", retry=False),
    # accelerate's utils/launch.py (prepare_multi_gpu_env: `setattr(args, "node_rank", int(args.machine_rank))`; its
    # port check `int(args.machine_rank) == 0`): with num_machines > 1 and no --machine_rank (nor machine_rank in the
    # config file) the rank is None, and Python's int() says so. The frame's source line is Python's own quote of
    # accelerate's code.
    _sig("accelerate-config", r"int\(args\.machine_rank\)[^\n]*\n(?:[ \t]*[~^]+[ \t]*\n)?[ \t]*TypeError: int\(\) "
         r"argument must be [^\n]{0,80}not '?NoneType'?",
         "accelerate launch was started for several machines (num_machines > 1) without this machine's rank: no "
         "--machine_rank on the command line and no machine_rank in the config file, so the launcher has no node "
         "rank to give torch.distributed.",
         "Pass --machine_rank to accelerate launch on every node (0 on the main node, 1, 2, ... on the others; under "
         "a scheduler its node index, e.g. the task's rank), or set machine_rank in each node's config file; "
         "--main_process_ip and --main_process_port as well.", retry=False),
)
