"""Round 112's rules (issue 45), from diffusion and image/video generation training threads (diffusers' examples,
kohya-ss/sd-scripts, OneTrainer, Lumina-Video, video models under DeepSpeed): a model class without the FSDP wrap list
Alpha-VLLM's training scripts ask of it (get_fsdp_wrap_module_list), read as fsdp-wrap-list-missing, and OneTrainer's
training window reading .model from its multi-GPU or cloud trainer (early December 2025), read as
onetrainer-multitrainer-attribute. A second wording of each, in another caller's words than the corpus case, and near
misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("fsdp-wrap-list-missing", "onetrainer-multitrainer-attribute")


@pytest.mark.parametrize("text,expected", [
    # Lumina-T2X's Next-DiT-ImageNet/train.py (setup_fsdp_sync: lambda_fn=lambda m: m in
    # model.get_fsdp_wrap_module_list()) over a model class without the method, torch's nn.Module.__getattr__
    # wording, no rank prefix (torch before 2.4)
    ("Traceback (most recent call last):\n"
     "  File \"/data/Lumina-T2X/Next-DiT-ImageNet/train.py\", line 147, in <lambda>\n"
     "    lambda_fn=lambda m: m in model.get_fsdp_wrap_module_list(),\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1614, in __getattr__\n"
     "    raise AttributeError(\"'{}' object has no attribute '{}'\".format(\n"
     "AttributeError: 'DiT_Llama' object has no attribute 'get_fsdp_wrap_module_list'\n", "fsdp-wrap-list-missing"),
    # the last line alone under torch 2.4+'s rank prefix (Lumina-T2X's lumina_next_t2i model class)
    ("[rank7]: AttributeError: 'NextDiT' object has no attribute 'get_fsdp_wrap_module_list'\n",
     "fsdp-wrap-list-missing"),
    # OneTrainer's TrainUI with cloud training on: the revert #1188 names Cloud training as broken the same way
    ("Traceback (most recent call last):\n"
     "  File \"C:\\OneTrainer\\modules\\ui\\TrainUI.py\", line 764, in __training_thread_function\n"
     "    train_progress = trainer.model.train_progress\n"
     "                     ^^^^^^^^^^^^^\n"
     "AttributeError: 'CloudTrainer' object has no attribute 'model'\n", "onetrainer-multitrainer-attribute"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the wrapper's own name: the model already wrapped by FSDP when a script reads the list from it (the wrapper
    # does not pass the attribute on) is ddp-wrapped-attribute's family
    ("AttributeError: 'FullyShardedDataParallel' object has no attribute 'get_fsdp_wrap_module_list'\n",
     "fsdp-wrap-list-missing"),
    # the call on a traceback's source line, another error below it (a CUDA OOM while FSDP shards the blocks)
    ("  File \"/workspace/Lumina-Video/train.py\", line 343, in setup_fsdp_sync\n"
     "    lambda_fn=lambda m: m in model.get_fsdp_wrap_module_list(),\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.33 "
     "GiB of which 1.02 GiB is free.\n", "fsdp-wrap-list-missing"),
    # accelerate's/transformers' FSDP auto-wrap by class name (utils/dataclasses.py) is fsdp-wrap-class
    ("Exception: Could not find the transformer layer class to wrap in the model.\n", "fsdp-wrap-list-missing"),
    # bearyi26/DCPT#4: a model class of a training script missing another attribute than the wrap list
    ("AttributeError: 'DCPT' object has no attribute 'module'\n", "fsdp-wrap-list-missing"),
    # mboudiaf/TIM#4: a project's own Trainer without an attribute (not OneTrainer's multi-GPU trainer)
    ("AttributeError: 'Trainer' object has no attribute 'meta_val_interval'\n", "onetrainer-multitrainer-attribute"),
    # nanoporetech/bonito#64: the model wrapped in DataParallel (ddp-wrapped-attribute), not OneTrainer
    ("AttributeError: 'DataParallel' object has no attribute 'ctc_label_smoothing_loss'\n",
     "onetrainer-multitrainer-attribute"),
    # ms-swift/TRL-style trainers whose .model is wrapped: 'DistributedDataParallel' object has no attribute 'model'
    ("AttributeError: 'DistributedDataParallel' object has no attribute 'model'\n",
     "onetrainer-multitrainer-attribute"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_wrapper_names_stay_ddp_wrapped_attribute():
    assert sig("AttributeError: 'FullyShardedDataParallel' object has no attribute 'get_fsdp_wrap_module_list'\n") \
        == "ddp-wrapped-attribute"
    assert sig("AttributeError: 'DistributedDataParallel' object has no attribute 'model'\n") == "ddp-wrapped-attribute"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
