"""Round 111's rules (issue 45), from threads on PEFT / LoRA / QLoRA / bitsandbytes training on several GPUs: LitGPT
refusing --quantize with more than one device, LLaMA-Factory refusing an 8-bit (not 4-bit) bitsandbytes model under
FSDP, ZeRO-3 or the auto device map, and FSDP refusing to broadcast rank 0's weights (sync_module_states) while parts
of the module are on the CPU (torchtune's multi-GPU LoRA recipe given a quantized QLoRA base). A second wording of
each, in another caller's or version's words than the corpus case it was written from, and near misses that must not
be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("quantize-multi-gpu-unsupported", "fsdp-qlora-needs-4bit", "fsdp-cpu-params-sync-states")


@pytest.mark.parametrize("text,expected", [
    # LitGPT's present words (finetune/adapter_v2.py setup(), devices * num_nodes > 1 with --quantize), wrapped as
    # the litgpt CLI raises it; the corpus case has 2023's lit-gpt "Please set devices=1 when using the --quantize flag."
    ("  File \"/opt/venv/lib/python3.10/site-packages/litgpt/finetune/adapter_v2.py\", line 124, in setup\n"
     "    raise NotImplementedError(\n"
     "NotImplementedError: Quantization is currently not supported for multi-GPU training. Please set devices=1 and "
     "num_nodes=1 when using the --quantize flag.\n", "quantize-multi-gpu-unsupported"),
    # LLaMA-Factory of April to June 2024 (src/llmtuner/model/utils/quantization.py configure_quantization, 03f2e3284):
    # quantization_bit 8 under DeepSpeed ZeRO-3, before the words named fsdp+qlora
    ("[rank1]:   File \"/data/LLaMA-Factory/src/llmtuner/model/utils/quantization.py\", line 138, in "
     "configure_quantization\n"
     "[rank1]:     raise ValueError(\"Only 4-bit quantized model can use auto device map.\")\n"
     "[rank1]: ValueError: Only 4-bit quantized model can use auto device map.\n", "fsdp-qlora-needs-4bit"),
    # LLaMA-Factory's v1 quantization plugin (src/llamafactory/v1/plugins/model_plugins/quantization.py), its words
    ("ValueError: Only 4-bit quantized model can use fsdp+qlora or auto device map.\n", "fsdp-qlora-needs-4bit"),
    # the same check of torch's FSDP reached through Accelerate's prepare (fsdp_sync_module_states: true, a model
    # built on the CPU), under torchrun's rank prefix, not torchtune's recipe
    ("[rank1]:   File \"/usr/local/lib/python3.11/site-packages/accelerate/accelerator.py\", line 1467, in "
     "prepare_model\n"
     "[rank1]:     model = FSDP(model, **kwargs)\n"
     "[rank1]:   File \"/usr/local/lib/python3.11/site-packages/torch/distributed/fsdp/_init_utils.py\", line 1179, in "
     "_check_module_states_for_sync_module_states\n"
     "[rank1]:     raise ValueError(\n"
     "[rank1]: ValueError: The module has CPU parameters or buffers when `sync_module_states=True`, which requires "
     "them to be on GPU. Please specify the `device_id` argument or move the module to GPU before passing it to "
     "FSDP.\n", "fsdp-cpu-params-sync-states"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # LitGPT's other refusal of quantization (finetune/*.py, generate/*.py): with a mixed precision, not several GPUs
    ("ValueError: Quantization and mixed precision is not supported.\n", "quantize-multi-gpu-unsupported"),
    # Accelerate's refusal of an 8-bit model on several devices: its own family (quantized-model-placement)
    ("ValueError: You can't train a model that has been loaded in 8-bit precision on multiple devices.\n",
     "quantize-multi-gpu-unsupported"),
    # LLaMA-Factory's neighbouring refusals of quantization (model_utils/quantization.py, hparams/parser.py)
    ("ValueError: Bitsandbytes only accepts 4-bit or 8-bit quantization.\n", "fsdp-qlora-needs-4bit"),
    ("ValueError: Cannot use device map for quantized models in training.\n", "fsdp-qlora-needs-4bit"),
    ("ValueError: Quantization is only compatible with the LoRA or OFT method.\n", "fsdp-qlora-needs-4bit"),
    # torch's FSDP warning (_init_utils.py _warn_cpu_init) for a module on the CPU without device_id: a slow
    # initialization it warns of, no failure
    ("UserWarning: The passed-in `module` is on CPU and will thus have FSDP's sharding initialization run on CPU, "
     "which may be slower than on GPU. We recommend passing in the `device_id` argument for FSDP to move `module` to "
     "GPU for the sharding initialization. `module` must also be on GPU device to work with the "
     "`sync_module_states=True` flag since that requires GPU communication.\n", "fsdp-cpu-params-sync-states"),
    # Accelerate's refusal of cpu_ram_efficient_loading without sync_module_states: its own family
    ("ValueError: When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`\n",
     "fsdp-cpu-params-sync-states"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_neighbours_keep_their_own_families():
    assert sig("ValueError: You can't train a model that has been loaded in 8-bit precision on multiple devices.\n") \
        == "quantized-model-placement"
    assert sig("ValueError: When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to "
               "`True`\n") == "accelerate-fsdp-sync-states"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
