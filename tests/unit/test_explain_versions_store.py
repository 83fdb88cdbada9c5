"""Round 12's rules (issue 45): what the log already says about a package's version, torch's rendezvous store, a
destructor's error at exit and a safetensors file read in part. A second wording of each, and near misses."""

import pytest

from dscluster import explain


def sig(text: str) -> str | None:
    found = explain.explain(text)
    return found.signature if found else None


@pytest.mark.parametrize("text", [
    # Python names the dotted module only once the package imported: it is there, in another version.
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
    "    from transformers.models.qwen3 import Qwen3ForCausalLM\n"
    "ModuleNotFoundError: No module named 'transformers.models.qwen3'\n",
    "[rank1]: ModuleNotFoundError: No module named 'deepspeed.runtime.zero.stage_1_and_3'\n",
    # a version check that names the accepted range and the version found (here newer than the range)
    "ImportError: accelerate>=0.26.0,<1.0 is required for a normal functioning of this module, but found "
    "accelerate==1.2.1.\n",
])
def test_an_installed_package_in_another_version_is_no_missing_module(text):
    found = explain.explain(text)
    assert found.signature == "import-name" and found.retry is False


@pytest.mark.parametrize("text,expected", [
    ("ModuleNotFoundError: No module named 'flash_attn'\n", "module-not-found"),  # the package itself is missing
    # the user's own code, not a library; torchx is not torch. Both dotted: Python names a dotted module only once its
    # package imported, so neither is "not installed" (session 25): the rank's own words, never import-name
    ("ModuleNotFoundError: No module named 'src.models'\n", "python-error"),
    ("ModuleNotFoundError: No module named 'torchx.specs'\n", "python-error"),
    # the minimum alone, older installed: the package is too old (package-too-old answers first)
    ("ImportError: tokenizers>=0.14 is required for a normal functioning of this module, but found "
     "tokenizers==0.13.3.\n", "package-too-old"),
])
def test_near_misses_of_another_version(text, expected):
    assert sig(text) == expected


def test_the_stores_own_words_name_its_usual_causes_and_claim_none():
    bare = ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
            "has failed. See inner exception for details.\n")
    found = explain.explain(bare)
    assert found.signature == "store-connection" and found.signature in explain.GENERIC and found.retry is True
    assert "another job" in found.cause and "not up yet" in found.cause
    # a client that waited the process group's 30 minutes on one machine: the same words, no network in it
    assert sig("torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to "
               "connect to (127.0.0.1, 42649).\n") == "store-connection"


def test_a_connect_that_timed_out_is_still_the_network():
    text = ("RuntimeError: connect() timed out. Original timeout was 60000 ms.\n\nThe above exception was the direct "
            "cause of the following exception:\n\ntorch.distributed.elastic.rendezvous.api.RendezvousConnectionError: "
            "The connection to the C10d store has failed. See inner exception for details.\n")
    assert sig(text) == "master-unreachable"
    assert sig("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to "
               "(10.0.0.1, 29500).\n") == "master-unreachable"


def test_a_destructors_error_at_exit_is_not_the_cause():
    text = ("Exception: Installed CUDA version 12.1 does not match the version torch was compiled with 11.8, unable "
            "to compile cuda/cpp extensions without a matching cuda version.\n"
            "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f1c2a0b9f30>\n"
            "Traceback (most recent call last):\n"
            "  File \"/opt/venv/lib/python3.10/site-packages/deepspeed/ops/adam/cpu_adam.py\", line 102, in __del__\n"
            "    self.ds_opt_adam.destroy_adam(self.opt_id)\n"
            "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
    assert sig(text) == "version-mismatch"
    # alone, the destructor's error still says the op was never built
    assert sig(text[text.index("Exception ignored"):]) == "op-build-failed"


def test_a_safetensors_file_read_in_part():
    assert sig("Exception: Error while deserializing header: MetadataIncompleteBuffer\n") == "ckpt-corrupt"


def test_the_trainers_ds_config_mismatch_wrapped_over_lines():
    # a terminal or a forum wraps the Trainer's message; each "- ds X=V vs hf Y" line is its own too
    text = ("ValueError: Please correct the following DeepSpeed config values that mismatch\n"
            "  TrainingArguments values:\n- ds train_micro_batch_size_per_gpu=16 vs hf per_device_train_batch_size=4\n")
    assert sig(text) == "ds-hf-mismatch"
    assert sig("[rank0]: - ds fp16.enabled=True vs hf fp16|fp16_full_eval+fp16_backend(amp)=False\n") == "ds-hf-mismatch"
    # near miss: a line that only looks like a list item
    assert sig("ValueError: bad value\n- ds is fine vs hf\n") != "ds-hf-mismatch"


@pytest.mark.parametrize("line,sig", [
    # An installed package's module without the name the code uses: a version other than the code's.
    ("AttributeError: module 'numpy' has no attribute 'float'.", "import-name"),
    ("AttributeError: module 'torch.distributed' has no attribute 'checkpoint'", "import-name"),
    ("ModuleNotFoundError: No module named 'megablocks.layers'", "import-name"),
    # The script's own module: its own bug or file, not a version.
    ("AttributeError: module 'utils' has no attribute 'load_cfg'", "python-error"),
    ("ModuleNotFoundError: No module named 'utils.helpers'", "python-error"),  # its package imported (session 25)
    # A package's name as the prefix of another name is not the package.
    ("AttributeError: module 'torchvision_utils' has no attribute 'x'", "python-error"),
    # Python says the module is half imported: a script named like the package, or a circular import.
    ("AttributeError: partially initialized module 'torch' has no attribute 'nn' (most likely due to a circular "
     "import)", "python-error"),
])
def test_a_name_an_installed_package_lacks_is_another_version_of_it(line, sig):
    exp = explain.explain(f'Traceback (most recent call last):\n  File "/w/t.py", line 3, in <module>\n{line}\n')
    assert exp.signature == sig, (line, exp.signature)
