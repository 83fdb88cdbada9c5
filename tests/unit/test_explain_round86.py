"""Round 86's rules (issue 45), from post-training frameworks run on several GPUs and nodes (LLaMA-Factory's DPO under
DeepSpeed ZeRO-2, veRL on a two-node Ray cluster, DeepSpeed-Chat's step 3 with the hybrid engine): DeepSpeed's ZeRO-1/2
engine refusing to start without an optimizer (`zero stage N requires an optimizer`, read as the config's missing
optimizer section, and not where a reference model is being prepared with the training config: that fix is the
library's), veRL's check of the GPUs its Ray cluster reports (`Total available GPUs X is less than total desired GPUs
Y`: the driver not in the multi-node cluster, nodes not joined), and DeepSpeed's hybrid engine without its
tensor-parallel group (`'DeepSpeedHybridEngine' object has no attribute 'mp_group'`: an inference_tp_size the GPUs do
not divide); and ds-config-invalid no longer read from a pasted config's `"zero_allow_untested_optimizer": true` key. A
second wording of each, in another version's or caller's words than the corpus case it was written from, and near
misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-zero-requires-optimizer", "ray-cluster-gpus-short", "ds-hybrid-tp-size")

_TB = "Traceback (most recent call last):\n"


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed's format string with stage 1 (runtime/engine.py _configure_zero_optimizer), raised from a plain
    # deepspeed.initialize under torch 2.x's rank prefix
    ("[rank2]: " + _TB + '[rank2]:   File "pretrain.py", line 77, in <module>\n'
     "[rank2]:     engine, *_ = deepspeed.initialize(model=model, config=args.deepspeed_config)\n"
     '[rank2]:   File "/usr/lib/python3/dist-packages/deepspeed/runtime/engine.py", line 1544, in '
     "_configure_zero_optimizer\n"
     '[rank2]:     assert not isinstance(optimizer, DummyOptim), "zero stage {} requires an optimizer".format(zero_stage)\n'
     "[rank2]: AssertionError: zero stage 1 requires an optimizer\n", "ds-zero-requires-optimizer"),
    # the same assertion as a launcher prints a rank's stderr (DeepSpeed's runner prefixes each line with the host)
    ("worker-1: AssertionError: zero stage 2 requires an optimizer\n", "ds-zero-requires-optimizer"),
    # veRL's check in other threads' words (DeepEyes#72 on four nodes, DAPO#32's title)
    ("ValueError: Total available GPUs 8.0 is less than total desired GPUs 32\n", "ray-cluster-gpus-short"),
    ("(TaskRunner pid=20113) ValueError: Total available GPUs 4.0 is less than total desired GPUs 32\n",
     "ray-cluster-gpus-short"),
    # the per-pool check after it (verl/single_controller/ray/base.py since volcengine/verl#505)
    (_TB + '  File "/app/verl/verl/single_controller/ray/base.py", line 205, in _check_resource_available\n'
     "    raise ValueError(\n"
     "ValueError: Resource pool global_pool: 8*2 cannot be satisfied in this ray cluster\n", "ray-cluster-gpus-short"),
    # the hybrid engine's other attribute set only inside a tensor-parallel group (hybrid_engine.py mp_replace)
    ("AttributeError: 'DeepSpeedHybridEngine' object has no attribute 'mp_replace'\n", "ds-hybrid-tp-size"),
    ("[rank7]: AttributeError: 'DeepSpeedHybridEngine' object has no attribute 'mp_group'\n", "ds-hybrid-tp-size"),
    # DeepSpeed's own untested-optimizer assertion stays ds-config-invalid after the rule stopped reading the key alone
    ("AssertionError: You are using an untested ZeRO Optimizer. Please add <\"zero_allow_untested_optimizer\": true> "
     "in the configuration file to use it.\n", "ds-config-invalid"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # TRL's DPOTrainer preparing its frozen reference model with the training run's ZeRO-2 config (trl PR 825's
    # description): the fix is TRL's, not the config's
    ("AssertionError: zero stage 2 requires an optimizer\n" + _TB +
     '  File "/fsx/trl/trl/trainer/dpo_trainer.py", line 248, in __init__\n'
     "    self.ref_model = self.accelerator._prepare_deepspeed(self.ref_model)[0]\n", "ds-zero-requires-optimizer"),
    # DeepSpeed's other optimizer refusals keep their own readings
    ("AssertionError: must provide optimizer during init in order to use backward\n", "ds-zero-requires-optimizer"),
    ("AssertionError: ZeRO Offload can only work with DeepSpeed optimizers\n", "ds-zero-requires-optimizer"),
    # a ds_config pasted beside another error (LLaMA-Factory#1243's shape): the key is no error of its own
    ('{\n  "zero_allow_untested_optimizer": true,\n  "zero_optimization": {"stage": 2}\n}\n'
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
     "79.15 GiB of which 1.02 GiB is free.\n", "ds-config-invalid"),
    # vLLM's own Ray placement checks (vllm#26028's title, vllm PR 28873) and Keras's multi_gpu_model: other components
    ("ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group.\n",
     "ray-cluster-gpus-short"),
    ("AssertionError: local_world_size (16) must be less than or equal to the number of visible devices (8).\n",
     "ray-cluster-gpus-short"),
    ("ValueError: To call `multi_gpu_model` with `gpus=8`, we expect the following devices to be available: "
     "['/cpu:0', '/gpu:0', '/gpu:1']. However this machine only has: ['/cpu:0', '/gpu:0']. Try reducing `gpus`\n",
     "ray-cluster-gpus-short"),
    # veRL's placement of one pool on the nodes it has (another assertion of the same module)
    ("AssertionError: no enough nodes for request: searching 2 th node\n", "ray-cluster-gpus-short"),
    # the hybrid engine's failure with models it has no container for (DeepSpeedExamples#456), and DeepSpeed's
    # ZeRO-3 offload without trl's hook method (LLaMA-Factory#8114)
    ('  File "/usr/lib/python3/dist-packages/deepspeed/runtime/hybrid_engine.py", line 398, in step\n'
     "    if(self._inference_containers[0].module.attention.attn_qkvw is not None and \\\n"
     "IndexError: list index out of range\n", "ds-hybrid-tp-size"),
    ("AttributeError: 'DeepSpeedZeRoOffload' object has no attribute '_register_hooks_recursively'\n",
     "ds-hybrid-tp-size"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_evidence_is_the_message_not_the_block():
    from dscluster import explain
    found = explain.explain(_TB + '  File "train.py", line 9, in <module>\n    deepspeed.initialize(model=m)\n'
                            "AssertionError: zero stage 2 requires an optimizer\n")
    assert found.evidence == "AssertionError: zero stage 2 requires an optimizer"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
