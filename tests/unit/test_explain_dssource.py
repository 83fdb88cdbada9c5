"""DeepSpeed's own refusals read from its source (sigdssource.py, session 27 of issue 45): for each rule a second
wording (another version's, caller's or value's words of the same message than tests/data/explain/<name>.log), and near
misses: messages with similar words, from DeepSpeed or the libraries around it, that name another cause."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigdssource import DS_SOURCE_SIGNATURES

SP = "/usr/local/lib/python3.11/dist-packages/deepspeed"


@pytest.mark.parametrize("text,expected", [
    # initialize() under a rank prefix (torch >= 2.2's rank-prefixed tracebacks)
    ("[rank3]: AssertionError: DeepSpeed requires --deepspeed_config to specify configuration file\n", "ds-no-config"),
    ("[rank0]: AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided\n",
     "ds-batch-size-missing"),
    # _batch_assertion's other two checks
    ("AssertionError: Gradient accumulation steps: 0 has to be greater than 0\n", "ds-batch-size-zero"),
    ("AssertionError: Train batch size: -8 has to be greater than 0\n", "ds-batch-size-zero"),
    ("[rank1]: ValueError: 'max_grad_norm' is not supported as an optimizer parameter, please switch to using the "
     "deepspeed parameter 'gradient_clipping' see: https://www.deepspeed.ai/docs/config-json/#gradient-clipping for "
     "more details\n", "ds-max-grad-norm"),
    # step() and the pipeline engine's backward (runtime/pipe/engine.py)
    ("AssertionError: must provide optimizer during init in order to use step\n", "ds-no-optimizer"),
    (f"  File \"{SP}/runtime/pipe/engine.py\", line 816, in backward\n    assert self.optimizer is not None, \"must "
     "provide optimizer during init in order to use backward\"\nAssertionError: must provide optimizer during init in "
     "order to use backward\n", "ds-no-optimizer"),
    ("AssertionError: AdamW8bit is not a supported DeepSpeed Optimizer\n", "ds-optimizer-unknown"),
    ("AssertionError: DeepSpeed does not recognize LR scheduler cosine\n", "ds-scheduler-unknown"),
    ("AssertionError: Client Optimizer (type = <class 'function'> is not instantiated but Client LR Scheduler is "
     "instantiated\n", "ds-scheduler-without-optimizer"),
    ("AssertionError: Parameter with name: transformer.wte.weight occurs multiple times in optimizer.param_groups. "
     "Make sure it only appears once to prevent undefined behavior.\n", "ds-param-in-two-groups"),
    ("AssertionError: Amp and ZeRO are not currently compatible, please use (legacy) fp16 mode which performs similar "
     "to amp opt_mode=O2\n", "ds-amp-with-zero"),
    # _zero3_consolidated_16bit_state_dict's own check
    ("ValueError: this function requires ZeRO-3 mode\n", "ds-consolidate-not-partitioned"),
    ("[rank0]: ValueError: Training data must be a torch Dataset\n", "ds-training-data-type"),
    # runner.py's RuntimeError (backticks) for an address word it did not get
    ("RuntimeError: Unable to detect suitable master address via `hostname -I`, please manually specify one via "
     "--master_addr\n", "ds-master-addr-undetected"),
    ("AssertionError: Launching training without ssh, but --node_rank is not set correctly.\n", "ds-no-ssh-node-rank"),
    ("RuntimeError: num_stages (3) must divide distributed world size (8)\n", "pipe-stages-world"),
    # step() of the pipeline engine, as a post quotes it
    ("deepspeed.runtime.pipe.engine.PipelineError: Only train_batch() is accessible in pipeline mode.\n",
     "pipe-train-batch-only"),
    ("[rank2]: RuntimeError: train_batch() requires gradients enabled. Use eval_batch() instead.\n",
     "pipe-train-batch-no-grad"),
    ("RuntimeError: Detected in-place modification of ZeRO-3 parameters inside GatheredParameters with "
     "modifier_rank=None. Use modifier_rank=<rank> to broadcast updates across ranks.\n", "zero3-gathered-modified"),
    ("[rank0]: RuntimeError: bfloat16 and fp16 cannot be enabled at once\n", "ds-fp16-and-bf16"),
    ("AssertionError: DeepSpeedConfig: Maximum supported ZeRO stage is 3\n", "ds-zero-stage-too-high"),
    # WarmupDecayLR's check (lr_schedules.py) with the HF placeholder left
    ("ValueError: warmup_num_steps must be a positive integer, got auto\n", "ds-config-auto"),
    ("ValueError: Expected 8 of '*_optim_states.pt' under 'out/checkpoint-1000/global_step1000' but found 4 files. "
     "Possibly due to an overwrite of an old checkpoint, or a checkpoint didn't get saved by one or more processes.\n",
     "zero-ckpt-incomplete"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


NEW = {s.name for s in DS_SOURCE_SIGNATURES}


@pytest.mark.parametrize("text,not_expected", [
    # _batch_assertion's last check: the three do not multiply up (signatures.py ds-batch-assert), not a zero
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 16 != 2 * 1 * 4\n", "ds-batch-size-zero"),
    # _configure_zero_optimizer: a library's second, frozen model prepared with the training config (TRL's reference
    # model) meets it too; that library's fix, not a missing optimizer section
    ("AssertionError: zero stage 2 requires an optimizer\n", "ds-no-optimizer"),
    # transformers' integrations/deepspeed.py: ZeRO inference without ZeRO-3
    ("Exception: ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config\n", "ds-no-optimizer"),
    # the engine's type check of a client optimizer (another refusal than a config name)
    ("AssertionError: Client Optimizer is of unexpected type <class 'str'>\n", "ds-optimizer-unknown"),
    # transformers' get_scheduler: its own scheduler names
    ("ValueError: 'cosine_warmup' is not a valid SchedulerType, please select one of ['linear', 'cosine']\n",
     "ds-scheduler-unknown"),
    # transformers' TrainingArguments, not DeepSpeed's config
    ("ValueError: At most one of fp16 and bf16 can be True, but not both\n", "ds-fp16-and-bf16"),
    # Megatron's parallel-size check
    ("AssertionError: world size (8) is not divisible by tensor_model_parallel_size (3) times "
     "pipeline_model_parallel_size (1)\n", "pipe-stages-world"),
    # the runner's address line that is no address (sigdeepspeed.py master-addr-not-address)
    ("[2024-03-01 10:00:00,000] [INFO] [runner.py:463:main] Using IP address of  for node node-a\n",
     "ds-master-addr-undetected"),
    # zero_to_fp32 finding none at all (zero-ckpt-dir)
    ("FileNotFoundError: can't find *_optim_states.pt files in directory '/ckpt/global_step10'\n",
     "zero-ckpt-incomplete"),
    # a warmup of 0 steps is no "auto" placeholder
    ("ValueError: warmup_num_steps must be a positive integer, got 0\n", "ds-config-auto"),
    # ZeRO-3's parameter release, another misuse than a read-only gather
    ("RuntimeError: Cannot free a ZeRO-3 parameter while it is still active in submodules.\n",
     "zero3-gathered-modified"),
    # torch's DataLoader misused, not deepspeed_io
    ("TypeError: 'DataLoader' object is not subscriptable\n", "ds-training-data-type"),
    # the pipeline engine's eval_batch under autograd is fine; its metadata buffer check is another matter
    ("AssertionError: Buffer for metadata is too small. Current buffer size: 64 but required 96\n",
     "pipe-train-batch-only"),
])
def test_near_misses(text, not_expected):
    found = sig(text)
    assert found != not_expected and found not in NEW


def test_every_new_text_has_zh():
    for s in DS_SOURCE_SIGNATURES:
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH, s.name
        assert not s.retry
