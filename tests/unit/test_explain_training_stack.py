"""Round 14's rules (issue 45), sigtraining.py and the words added to no-gpu and import-name: a second wording of
each, in another library's or another version's words than the corpus case it was written from, and near misses
that must not be read as it."""

import pytest

from dscluster import explain


def sig(text: str) -> str | None:
    found = explain.explain(text)
    return found.signature if found else None


@pytest.mark.parametrize("text,expected", [
    # wandb: the key check's ValueError (a key pasted wrong), not the no-tty UsageError of the corpus case
    ("wandb: Enter your choice: 2\nTraceback (most recent call last):\n"
     "ValueError: API key must be 40 characters long, yours was 2\n", "wandb-login"),
    ("wandb.errors.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n",
     "wandb-login"),
    # huggingface_hub's own exception for a gated model, without transformers' OSError around it
    ("huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-6604c5e0)\n"
     "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/main/config.json.\n"
     "Repo model meta-llama/Llama-2-7b-chat-hf is gated. You must be authenticated to access it.\n", "hub-gated"),
    # flash-attn's other architecture check: the backward pass of a large head dimension
    ("[rank0]: RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800\n",
     "flash-attn-arch"),
    # torch's message as a later version spells it ("built")
    ("RuntimeError: use_libuv was requested but PyTorch was built without libuv support\n", "libuv-unsupported"),
    # ZeRO-3's coordinator in its older wording (a bound method's summary instead of a dict)
    ("RuntimeError: still have inflight params [<bound method Init._convert_to_deepspeed_param.<locals>.ds_summary "
     "of Parameter containing:\n", "ds-inflight-params"),
    # GradScaler's message raised through the Trainer (torch.cuda.amp's older path)
    ("  File \"/x/torch/cuda/amp/grad_scaler.py\", line 212, in _unscale_grads_\n"
     "    raise ValueError(\"Attempting to unscale FP16 gradients.\")\n"
     "ValueError: Attempting to unscale FP16 gradients.\n", "amp-fp16-params"),
    # DeepSpeed's launcher without a hostfile counts the local CUDA devices: none (never an --include problem)
    ("[WARNING] [runner.py:217:fetch_hostfile] Unable to find hostfile, will proceed with training with local "
     "resources only.\nRuntimeError: Unable to proceed, no GPU resources available\n", "no-gpu"),
    # transformers' TrainingArguments without the keyword newer versions moved into accelerator_config
    ("TypeError: SentenceTransformerTrainingArguments.__init__() got an unexpected keyword argument "
     "'dispatch_batches'\n", "import-name"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # another Hub refusal: a repository that does not exist (or is private) is no gated model
    ("huggingface_hub.utils._errors.RepositoryNotFoundError: 401 Client Error. Repository Not Found for url: "
     "https://huggingface.co/org/missing/resolve/main/config.json.\n", "hub-gated"),
    # wandb logged in and running: its own info lines are no failure
    ("wandb: Currently logged in as: someone (team). Use `wandb login --relogin` to force relogin\n"
     "RuntimeError: CUDA error: an illegal memory access was encountered\n", "wandb-login"),
    # FlashAttention's other refusals are not about the GPU's generation
    ("RuntimeError: FlashAttention only support fp16 and bf16 data type\n", "flash-attn-arch"),
    # a user's own function with an unexpected keyword is not a package in another version
    ("TypeError: build_model() got an unexpected keyword argument 'dispatch'\n", "import-name"),
    # DeepSpeed's --include naming a slot the hostfile does not have stays ds-include
    ("ValueError: No slot '5' specified on host 'node1'\n", "no-gpu"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_include_check_is_still_the_include_check():
    assert sig("ValueError: Hostname 'node9' not found in hostfile\n") == "ds-include"
