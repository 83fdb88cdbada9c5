"""Round 174's rules (issue 45, live round: model weight files and loading them): safetensors' save_file refusing tied
tensors (safetensors-shared-tensors), from_pretrained on a directory without a usable config.json (hf-config-missing),
a pickled whole object naming a module not importable where it loads (pickle-module-missing), a file written by a
newer torch (ckpt-newer-torch), and from_pretrained's size mismatch with ignore_mismatched_sizes off
(hf-head-size-mismatch); second wordings (other versions' and callers' words than the live cases) and near misses,
other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("safetensors-shared-tensors", "hf-config-missing", "pickle-module-missing", "ckpt-newer-torch",
       "hf-head-size-mismatch")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "expected"), [
    # transformers 4.3x's save_pretrained (safe_serialization) refusing shared tensors itself
    ("RuntimeError: The weights trying to be saved contained shared tensors [{'lm_head.weight', "
     "'transformer.wte.weight'}] that are mismatching the transformers base configuration. Try saving using "
     "`safe_serialization=False` or remove this tensor sharing.\n", "safetensors-shared-tensors"),
    # safetensors 0.3's one-line form, raised from save_model's caller's save_file
    ("RuntimeError: Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
     "when loading them again: [['encoder.embed.weight', 'decoder.embed.weight']].\n", "safetensors-shared-tensors"),
    # transformers 4.x's hub lookup on a local folder that holds only the weights
    ("OSError: ./my_model does not appear to have a file named config.json. Checkout "
     "'https://huggingface.co/./my_model/tree/None' for available files.\n", "hf-config-missing"),
    # transformers 5.x's AutoConfig, no list of names
    ("ValueError: Unrecognized model in runs/exp3/final. Should have a `model_type` key in its config.json.\n",
     "hf-config-missing"),
    # torch 1.x's legacy loader: unpickler.load() then the error, no find_class frame
    ('  File "/usr/lib/python3/dist-packages/torch/serialization.py", line 774, in _legacy_load\n'
     "    result = unpickler.load()\n"
     "ModuleNotFoundError: No module named 'model.resnet'\n", "pickle-module-missing"),
    # plain pickle.load of a saved object
    ('  File "predict.py", line 12, in <module>\n'
     "    clf = pickle.load(f)\n"
     "ModuleNotFoundError: No module named 'src'\n", "pickle-module-missing"),
    # torch 1.x's inline_container.cc wording
    ("RuntimeError: version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED at ..\\caffe2\\serialize\\"
     "inline_container.cc:131, please report a bug to PyTorch. Attempted to read a PyTorch file with version 3, but "
     "the maximum supported version for reading is 2. Your PyTorch installation may be too old.\n",
     "ckpt-newer-torch"),
    # transformers 5.x's error-message path: load_state_dict's error with the hint appended
    ("RuntimeError: Error(s) in loading state_dict for RobertaForTokenClassification:\n"
     "\tsize mismatch for classifier.weight: copying a param with shape torch.Size([9, 768]) from checkpoint, the "
     "shape in current model is torch.Size([13, 768]).\n"
     "\tYou may consider adding `ignore_mismatched_sizes=True` to `from_pretrained(...)` if appropriate.\n",
     "hf-head-size-mismatch"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize(("text", "not_expected"), [
    # load_state_dict's own size mismatch with no from_pretrained hint: another configuration (ckpt-model-mismatch)
    ("RuntimeError: Error(s) in loading state_dict for Sequential:\n\tsize mismatch for 0.weight: copying a param "
     "with shape torch.Size([32, 8]) from checkpoint, the shape in current model is torch.Size([16, 8]).\n",
     "hf-head-size-mismatch"),
    # the weights file missing, not the config
    ("OSError: Error no file named pytorch_model.bin, model.safetensors, tf_model.h5 found in directory out/.\n",
     "hf-config-missing"),
    # a model_type this transformers does not know: a version too old, not a missing config
    ("ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize "
     "this architecture.\n", "hf-config-missing"),
    # an import at the script's top, no unpickling
    ('  File "train.py", line 3, in <module>\n    import models\nModuleNotFoundError: No module named \'models\'\n',
     "pickle-module-missing"),
    # numpy 2's pickle read under numpy 1: a version mismatch
    ('  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1392, in find_class\n'
     "    return super().find_class(mod_name, name)\nModuleNotFoundError: No module named 'numpy._core'\n",
     "pickle-module-missing"),
    # a file that is no PyTorch archive at all (ckpt-corrupt)
    ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n",
     "ckpt-newer-torch"),
    # a torch.jit model of a newer bytecode version (another reader, another fix)
    ("RuntimeError: The model version 9 is greater than the max supported bytecode version 8.\n", "ckpt-newer-torch"),
    # safetensors refusing a sparse tensor, not shared memory
    ("ValueError: You are trying to save a sparse tensors: `['emb.weight']` which this library does not support.\n",
     "safetensors-shared-tensors"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected
