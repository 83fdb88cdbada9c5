"""Round 140's rules (issue 45), from threads of evaluation and generation inside distributed training: the HF
Trainer's evaluation or prediction refusing DeepSpeed inference below ZeRO stage 3 (transformers' deepspeed_init: `ZeRO
inference only makes sense with ZeRO Stage 3 - please adjust your config`), and generate() called on the engine of a
DeepSpeed before 0.3 (`'DeepSpeedLight' object has no attribute 'generate'`, ddp-wrapped-attribute). Each: a second
wording (another caller's or version's words than the corpus case it was written from) and near misses, other
components' text with like words that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("zero-inference-needs-stage3",)


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


def test_the_deepspeed_light_rule_is_translated_and_final():
    rule = next(s for s in explain.SIGNATURES if s.name == "ddp-wrapped-attribute" and "DeepSpeedLight" in s.cause)
    assert rule.cause in FAILURES_ZH and rule.fix in FAILURES_ZH and not rule.retry


@pytest.mark.parametrize("text", [
    # optimum-habana's copy of deepspeed_init (Gaudi's GaudiTrainer.evaluate before training), another caller
    ('  File "/usr/local/lib/python3.10/dist-packages/optimum/habana/transformers/trainer.py", line 1712, in '
     "evaluation_loop\n"
     "    deepspeed_engine, _, _ = deepspeed_init(self, num_training_steps=0, inference=True)\n"
     '  File "/usr/local/lib/python3.10/dist-packages/optimum/habana/transformers/integrations/deepspeed.py", line 112, '
     "in deepspeed_init\n"
     '    raise ValueError("ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config")\n'
     "ValueError: ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config\n"),
    # transformers 4.3x under torch's rank prefix, from a Seq2SeqTrainer's evaluation
    ("[rank0]:     self.model_wrapped = deepspeed_init(self, num_training_steps=0, inference=True)\n"
     '[rank0]:   File "/opt/conda/lib/python3.11/site-packages/transformers/integrations/deepspeed.py", line 400, in '
     "deepspeed_init\n"
     '[rank0]:     raise ValueError("ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config")\n'
     "[rank0]: ValueError: ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config\n"),
])
def test_deepspeed_inference_refused_below_stage3(text):
    assert sig(text) == "zero-inference-needs-stage3"


@pytest.mark.parametrize("text", [
    # a trainer of its own that logs the sentence alone as a warning and goes on (its deepspeed init with inference)
    "[WARNING] ZeRO inference only makes sense with ZeRO Stage 3\n",
    # gpt-neox's evaluation with a ZeRO stage 1 training config (EleutherAI/gpt-neox#987's title): another refusal
    "AssertionError: zero stage 1 requires an optimizer\n",
])
def test_not_deepspeed_inference_refused(text):
    assert sig(text) != "zero-inference-needs-stage3"


def test_a_framework_refusing_generation_under_zero3_stays_its_own():
    # LLaMA-Factory's parser (hiyouga/LlamaFactory#5629): a refused combination, not the inference check
    assert sig("ValueError: `predict_with_generate` is incompatible with DeepSpeed ZeRO-3.\n") == "ds-incompatible"


@pytest.mark.parametrize("text", [
    # torch 1.4's Module.__getattr__ raising it for the model's config read on the engine (DeepSpeed 0.2)
    ('  File "/usr/local/lib/python3.6/dist-packages/torch/nn/modules/module.py", line 576, in __getattr__\n'
     "    type(self).__name__, name))\n"
     "AttributeError: 'DeepSpeedLight' object has no attribute 'config'\n"),
    # PyTorch 1.5's ModuleAttributeError wording, a seq2seq model's encoder
    "torch.nn.modules.module.ModuleAttributeError: 'DeepSpeedLight' object has no attribute 'encoder'\n",
])
def test_a_model_attribute_read_on_deepspeeds_old_engine(text):
    found = explain.explain(text)
    assert found and found.signature == "ddp-wrapped-attribute" and "DeepSpeedLight" in found.cause


@pytest.mark.parametrize("text", [
    # the old engine's own attribute (deepspeed_light.py's csr_tensor_module_names) missing: a DeepSpeed mismatch
    "AttributeError: 'DeepSpeedLight' object has no attribute 'csr_tensor_module_names'\n",
    # DeepSpeedEngine passes the module's attributes on since 0.6.5: its "no attribute" is the model's own lack
    "AttributeError: 'DeepSpeedEngine' object has no attribute 'generate'\n",
])
def test_not_a_model_attribute_on_deepspeeds_old_engine(text):
    found = explain.explain(text)
    assert not (found and "DeepSpeedLight" in found.cause)


def test_the_torch_wrappers_stay_the_general_rule():
    found = explain.explain("AttributeError: 'DistributedDataParallel' object has no attribute 'generate'\n")
    assert found and found.signature == "ddp-wrapped-attribute" and "DeepSpeedLight" not in found.cause
