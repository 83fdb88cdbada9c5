"""Round 39's rules (issue 45), from the threads of RLHF and preference-training stacks on several GPUs (sigrlhf.py,
sigtraining.py): TRL's refusal of create_reference_model() under ZeRO-3, TRL's reference-model sync meeting ZeRO-3's
empty placeholders, DeepSpeed's DataLoader read as torch's, vLLM's V1 engine without the model_executor RLHF code
reaches into, and the advice Ray prints after its memory monitor killed a worker: a second wording of each, in another
version's or another caller's words than the corpus case it was written from, and near misses that must not be read
as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigrlhf import RLHF_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # TRL's newer wording (AutoModelForCausalLM), raised in a PPO script run without torchrun's rank prefixes
    ("  File \"/opt/conda/lib/python3.11/site-packages/trl/models/modeling_base.py\", line 652, in "
     "create_reference_model\n    raise ValueError(\n"
     "ValueError: DeepSpeed ZeRO-3 is enabled and is not compatible with `create_reference_model()`. Please "
     "instantiate your reference model directly with `AutoModelForCausalLM.from_pretrained()`.\n",
     "zero3-ref-model-copy"),
    # TRL's callback under torchrun, Python 3.11's carets under the failing line, the policy's side empty
    ("[rank3]:   File \"/usr/local/lib/python3.11/site-packages/trl/trainer/utils.py\", line 118, in "
     "_sync_target_model\n"
     "[rank3]:     target_param.data.mul_(1.0 - alpha).add_(copy_param.data, alpha=alpha)\n"
     "[rank3]:     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "[rank3]: RuntimeError: The size of tensor a (2048) must match the size of tensor b (0) at non-singleton "
     "dimension 0\n", "zero3-param-partitioned"),
    # accelerate's prepare reading torch's batch_sampler from DeepSpeed's loader
    ("    batch_sampler = dataloader.batch_sampler\n"
     "AttributeError: 'DeepSpeedDataLoader' object has no attribute 'batch_sampler'\n", "ds-dataloader-attribute"),
    # another caller (a CPU-offload call written for V0) and V1's client class
    ("    return self.llm.llm_engine.model_executor.driver_worker.offload_cpu()\n"
     "AttributeError: 'LLMEngine' object has no attribute 'model_executor'\n", "import-name"),
    ("AttributeError: 'SyncMPClient' object has no attribute 'model_executor'\n", "import-name"),
    # Ray's advice for a task (max_retries), and Ray 2.0-2.2's eviction threshold
    ("Refer to the documentation on how to address the out of memory issue: "
     "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on "
     "this node or reducing task parallelism by requesting more CPUs per task. Set max_retries to enable retry when "
     "the task crashes due to OOM.\n", "memcg-oom"),
    ("Consider provisioning more memory on this node or reducing task parallelism by requesting more CPUs per task. To "
     "adjust the eviction threshold, set the environment variable `RAY_memory_usage_threshold_fraction` when starting "
     "Ray.\n", "memcg-oom"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # TRL's other refusal of a reference model (adapters), and create_reference_model called wrongly
    ("ValueError: You passed both a ref_model and a peft_config. For training PEFT adapters with DPO there is no need "
     "to pass a reference model.\n", "zero3-ref-model-copy"),
    ("TypeError: create_reference_model() got an unexpected keyword argument 'shared_layers'\n",
     "zero3-ref-model-copy"),
    # the same sync running out of GPU memory; a size mismatch of two full tensors in it (no empty placeholder)
    ("  File \"/usr/lib/python3.11/site-packages/trl/trainer/utils.py\", line 84, in _sync_target_model\n"
     "    target_param.data.mul_(1.0 - alpha).add_(copy_param.data, alpha=alpha)\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB\n", "zero3-param-partitioned"),
    ("  File \"/usr/lib/python3.11/site-packages/trl/trainer/utils.py\", line 84, in _sync_target_model\n"
     "    target_param.data.mul_(1.0 - alpha).add_(copy_param.data, alpha=alpha)\n"
     "RuntimeError: The size of tensor a (151936) must match the size of tensor b (151646) at non-singleton "
     "dimension 0\n", "zero3-param-partitioned"),
    # DeepSpeed's own loader internals, and torch's loader
    ("AttributeError: 'DeepSpeedDataLoader' object has no attribute 'data_iterator'\n", "ds-dataloader-attribute"),
    ("AttributeError: 'DataLoader' object has no attribute 'data_sampler'\n", "ds-dataloader-attribute"),
    # a script's own engine class, and another attribute of vLLM's
    ("AttributeError: 'RolloutEngine' object has no attribute 'model_executor'\n", "import-name"),
    # Ray's docs linked by a user, and the threshold set in a launch script
    ("# see https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html before raising it\n"
     "export RAY_memory_usage_threshold=0.98\n", "memcg-oom"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    # DeepSpeed's own refusal of a feature with ZeRO-3 stays its own answer
    assert sig("AssertionError: ZeRO-3 is not compatible with gradient accumulation through no_sync()\n") == \
        "ds-incompatible"
    assert sig("(raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 "
               "Workers crashed due to other reasons\n") == "memcg-oom"
    zh = FAILURES_ZH
    for s in RLHF_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("ValueError: DeepSpeed ZeRO-3 is enabled and is not compatible with "
                           "`create_reference_model()`.\n").retry is False
