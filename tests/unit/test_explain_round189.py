"""Round 189's rules (issue 45, live: parameter-efficient fine-tuning written by hand): a LoRA merge whose delta is not
the weight's shape, read from the in-place add of lora_A/lora_B's product above torch's broadcast refusal
(lora-merge-shape); load_state_dict's report of missing keys and nothing else, a partial file (an adapter-only save)
loaded with strict=True (state-dict-partial-strict, before ckpt-model-mismatch); gloo's size mismatch where DDP's
constructor compares or broadcasts the parameters, so the ranks built different models (ddp-model-differs-by-rank,
before collective-mismatch); and ATen's CPU matmul wording of a dtype mismatch (dtype-mismatch, its text widened to
adapters added after the model was cast). Each on its case's log, second wordings and near misses."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("lora-merge-shape", "state-dict-partial-strict", "ddp-model-differs-by-rank")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("case", "expected"), [
    ("live-lora-merge-transposed", "lora-merge-shape"),
    ("live-lora-adapter-only-strict-load", "state-dict-partial-strict"),
    ("live-lora-rank0-only-inject", "ddp-model-differs-by-rank"),
    ("live-lora-bf16-adapter-after-init", "dtype-mismatch"),
    ("live-prompt-tuning-labels-short", "loss-target-batch-mismatch"),
])
def test_the_rounds_cases(case, expected):
    assert sig((LIVE / case / "log.txt").read_text()) == expected


_MERGE_TB = ('Traceback (most recent call last):\n  File "merge_lora.py", line 40, in <module>\n'
             "    merge(model)\n  File \"merge_lora.py\", line 31, in merge\n")


@pytest.mark.parametrize("text", [
    # .data and add_ with the factors in the wrong order (A @ B of square-rank factors that happen to multiply)
    (_MERGE_TB + "    module.weight.data.add_(module.lora_A.weight.T @ module.lora_B.weight.T * scaling)\n"
     "RuntimeError: The size of tensor a (4096) must match the size of tensor b (11008) at non-singleton dimension 0\n"),
    # rank prefixes, a Conv1D weight merged as a Linear's
    ("".join("[rank0]: " + line + "\n" for line in (
        _MERGE_TB + "    layer.weight += scale * (layer.lora_B @ layer.lora_A)\n"
        "RuntimeError: The size of tensor a (2304) must match the size of tensor b (768) at non-singleton dimension 1"
    ).splitlines())),
])
def test_lora_merge_shape(text):
    assert sig(text) == "lora-merge-shape"


@pytest.mark.parametrize("text", [
    # the same refusal in the LoRA forward pass (an input of another width), not a merge
    (_MERGE_TB + "    return self.base(x) + (self.dropout(x) @ self.lora_A.T @ self.lora_B.T) * self.scale\n"
     "RuntimeError: The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 2\n"),
    # an in-place add to a weight that has nothing to do with LoRA
    (_MERGE_TB + "    ema.weight += (1 - decay) * (model.weight - ema.weight)\n"
     "RuntimeError: The size of tensor a (10) must match the size of tensor b (5) at non-singleton dimension 0\n"),
])
def test_near_misses_are_not_lora_merge_shape(text):
    assert sig(text) != "lora-merge-shape"


_LOAD_TB = ('Traceback (most recent call last):\n  File "eval.py", line 12, in <module>\n'
            "    model.load_state_dict(torch.load(path))\n"
            '  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 2593, in load_state_dict\n'
            "    raise RuntimeError(\n")


@pytest.mark.parametrize("text", [
    # a trainable-only save of a transformers model, the report's last line
    (_LOAD_TB + "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
     '\tMissing key(s) in state_dict: "model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight". \n'),
    # the report at the very end of a pasted log
    (_LOAD_TB + "RuntimeError: Error(s) in loading state_dict for Net:\n"
     '\tMissing key(s) in state_dict: "head.weight", "head.bias". '),
])
def test_partial_state_dict_strict(text):
    assert sig(text) == "state-dict-partial-strict"


@pytest.mark.parametrize("text", [
    # DDP's module. prefix: missing and unexpected keys together
    (_LOAD_TB + "RuntimeError: Error(s) in loading state_dict for Net:\n"
     '\tMissing key(s) in state_dict: "fc.weight", "fc.bias". \n'
     '\tUnexpected key(s) in state_dict: "module.fc.weight", "module.fc.bias". \n'),
    # missing keys and a size mismatch (another configuration)
    (_LOAD_TB + "RuntimeError: Error(s) in loading state_dict for Net:\n"
     '\tMissing key(s) in state_dict: "layers.2.weight". \n'
     "\tsize mismatch for layers.0.weight: copying a param with shape torch.Size([8, 32]) from checkpoint, the shape "
     "in current model is torch.Size([16, 32]).\n"),
])
def test_near_misses_are_not_partial_state_dict(text):
    assert sig(text) == "ckpt-model-mismatch"


@pytest.mark.parametrize("text", [
    # torch's own shape check in DDP's constructor (ATen's verify_params_across_processes)
    ('Traceback (most recent call last):\n  File "train.py", line 30, in <module>\n    model = DDP(model)\n'
     '  File "/opt/venv/lib/python3.11/site-packages/torch/nn/parallel/distributed.py", line 835, in __init__\n'
     "    _verify_param_shape_across_processes(self.process_group, parameters)\n"
     '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/utils.py", line 282, in '
     "_verify_param_shape_across_processes\n"
     "    return dist._verify_params_across_processes(process_group, tensors, logger)\n"
     "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 4 params, while rank 0 has inconsistent "
     "6 params.\n"),
])
def test_ddp_model_differs_by_rank(text):
    assert sig(text) == "ddp-model-differs-by-rank"


def test_near_miss_gloo_mismatch_outside_ddp_construction():
    # the same gloo words from a hand-written all_reduce of per-rank tensors: no DDP constructor in any stream
    text = ('[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 50, in <module>\n'
            "[rank0]:     dist.all_reduce(losses)\n"
            '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2806, '
            "in all_reduce\n[rank0]:     work.wait()\n"
            "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
            "  what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= "
            "op.nbytes. 52 vs 40. Received data size doesn't match expected size. Is there a distributed collective "
            "mismatch in your code?\n")
    assert sig(text) == "collective-mismatch"


@pytest.mark.parametrize("text", [
    "RuntimeError: expected m1 and m2 to have the same dtype, but got: c10::BFloat16 != float\n",
    "RuntimeError: expected m1 and m2 to have the same dtype, but got: float != c10::Half\n",
])
def test_cpu_matmul_dtype_wording(text):
    assert sig(text) == "dtype-mismatch"
