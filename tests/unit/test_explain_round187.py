"""Round 187's rules (issue 45, live: changing or reaching into the model after wrapping it): copy.deepcopy of an
object holding a torch.distributed process group (a DeepSpeed engine, a DDP wrapper: an EMA copy made after wrapping),
read from copy.py's frames above pickle's refusal of c10d's ProcessGroup (deepcopy-process-group); autograd's engine
refusing a built-in backward's gradient of another shape (torch/csrc/autograd/engine.cpp validate_outputs, a node
name with the generated nodes' numeric suffix): a parameter's data swapped for a tensor of another shape after DDP
took hold of it (resize_token_embeddings after DDP(...)), read as param-shape-changed-in-place rather than as a custom
autograd.Function's broken contract. Second wordings (other versions' and callers' words) and near misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("deepcopy-process-group", "param-shape-changed-in-place", "zero3-param-not-registered")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


_COPY = ('  File "/usr/lib/python3.10/copy.py", line 172, in deepcopy\n'
         "    y = _reconstruct(x, memo, *rv)\n"
         '  File "/usr/lib/python3.10/copy.py", line 270, in _reconstruct\n'
         "    state = deepcopy(state, memo)\n"
         '  File "/usr/lib/python3.10/copy.py", line 146, in deepcopy\n'
         "    y = copier(x, memo)\n"
         '  File "/usr/lib/python3.10/copy.py", line 230, in _deepcopy_dict\n'
         "    y[deepcopy(key, memo)] = deepcopy(value, memo)\n"
         '  File "/usr/lib/python3.10/copy.py", line 161, in deepcopy\n'
         "    rv = reductor(4)\n")


@pytest.mark.parametrize("text", [
    # an EMA model deep-copied from a DDP wrapper on NCCL (torch 1.x, where the group object is ProcessGroupNCCL)
    ('Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
     "    ema_model = copy.deepcopy(model)\n" + _COPY
     + "TypeError: cannot pickle 'torch._C._distributed_c10d.ProcessGroupNCCL' object\n"),
    # Python 3.7's wording of the same refusal (Objects/typeobject.c before 3.8), ranks' prefixes
    ("".join("[rank3]: " + line + "\n" for line in (_COPY.splitlines() + [
        "TypeError: can't pickle torch._C._distributed_c10d.ProcessGroupNCCL objects"]))),
    # torch 2.x's ProcessGroup on gloo, as this release prints it
    (_COPY + "TypeError: cannot pickle 'torch._C._distributed_c10d.ProcessGroup' object\n"),
])
def test_deepcopy_of_a_wrapper(text):
    assert sig(text) == "deepcopy-process-group"


@pytest.mark.parametrize("text", [
    # torch.save of the whole engine: pickled by torch/serialization.py, not copied
    ('  File "/opt/venv/lib/python3.10/site-packages/torch/serialization.py", line 652, in _save\n'
     "    pickler.dump(obj)\n"
     "TypeError: cannot pickle 'torch._C._distributed_c10d.ProcessGroup' object\n"),
    # a deepcopy that fails on a lock (a logger or a DataLoader iterator held by the object), not a process group
    (_COPY + "TypeError: cannot pickle '_thread.lock' object\n"),
    # torch's Tensor.__deepcopy__ refusing a non-leaf tensor (a deepcopy after a forward)
    ('  File "/opt/venv/lib/python3.10/site-packages/torch/_tensor.py", line 86, in __deepcopy__\n'
     "    raise RuntimeError(\n"
     "RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
     "moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
     "see https://github.com/pytorch/pytorch/pull/103001\n"),
])
def test_near_misses_are_not_deepcopy_process_group(text):
    assert sig(text) != "deepcopy-process-group"


_BACKWARD = ('  File "/opt/venv/lib/python3.10/site-packages/torch/autograd/__init__.py", line 266, in backward\n'
             "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n")


@pytest.mark.parametrize("text", [
    # an embedding grown by resize_token_embeddings after wrapping, a LLaMA-sized vocabulary
    (_BACKWARD + "RuntimeError: Function EmbeddingBackward0 returned an invalid gradient at index 0 - got [32001, 4096] "
     "but expected shape compatible with [32000, 4096]\n"),
    # filters pruned (weight.data replaced by a smaller tensor) after wrapping: a Linear's addmm
    ("[rank1]: RuntimeError: Function AddmmBackward0 returned an invalid gradient at index 1 - got [64, 512] but "
     "expected shape compatible with [64, 256]\n"),
])
def test_builtin_backward_of_another_shape(text):
    assert sig(text) == "param-shape-changed-in-place"


@pytest.mark.parametrize("text", [
    # a custom autograd.Function's backward (its node is the class name + Backward, no numeric suffix)
    (_BACKWARD + "RuntimeError: Function ScaledReluBackward returned an invalid gradient at index 0 - got [4] but "
     "expected shape compatible with [4, 8]\n"),
    # torch 1.9's built-in nodes had no suffix either: the name cannot tell them from a custom Function's
    ("RuntimeError: Function MmBackward returned an invalid gradient at index 0 - got [712, 768] but expected shape "
     "compatible with [712, 21128]\n"),
    # tensor.backward(gradient=...) of another shape than the output (autograd/__init__.py _make_grads, old wording)
    ("RuntimeError: invalid gradient at index 0 - expected shape [] but got [10, 2]\n"),
    # a built-in node's gradient of another dtype: not a shape swapped in place
    ("RuntimeError: Function TBackward0 returned an invalid gradient at index 0 - expected dtype float but got "
     "double\n"),
])
def test_near_misses_are_not_param_shape_changed(text):
    assert sig(text) != "param-shape-changed-in-place"


@pytest.mark.parametrize("text", [
    # a LoRA adapter injected after deepspeed.initialize, met by the ZeRO-3 pre-forward fetch (an older DeepSpeed)
    ('  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/zero/partitioned_param_coordinator.py", line '
     "276, in fetch_sub_module\n"
     "    if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:\n"
     "AttributeError: 'Parameter' object has no attribute 'ds_status'\n"),
    # the same met by the optimizer's setup, by ds_id
    ("[rank0]: AttributeError: 'Parameter' object has no attribute 'ds_id'\n"),
])
def test_zero3_parameter_added_after_initialize(text):
    assert sig(text) == "zero3-param-not-registered"


@pytest.mark.parametrize("text", [
    # a user's own attribute on a parameter, not DeepSpeed's ds_* ones
    ("AttributeError: 'Parameter' object has no attribute 'lr_scale'\n"),
    # DeepSpeed's engine asked for an attribute its module has (DeepSpeedEngine.__getattr__)
    ("AttributeError: 'DeepSpeedEngine' object has no attribute 'ds_config'\n"),
])
def test_near_misses_are_not_zero3_param_not_registered(text):
    assert sig(text) != "zero3-param-not-registered"


_RESIZE = ('  File "/opt/venv/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2011, in '
           "resize_token_embeddings\n"
           "    model_embeds = self._resize_token_embeddings(new_num_tokens, pad_to_multiple_of)\n"
           '  File "/opt/venv/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2055, in '
           "_resize_token_embeddings\n")


@pytest.mark.parametrize("text", [
    # transformers 4.4x: the LM head resized after the embedding (an untied head), its own unpacking line
    (_RESIZE + '  File "/opt/venv/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2290, in '
     "_get_resized_lm_head\n"
     "    old_lm_head.weight.size() if not transposed else old_lm_head.weight.t().size()\n"
     "ValueError: not enough values to unpack (expected 2, got 1)\n"),
    # the embedding's own, without the caret lines
    (_RESIZE + '  File "/opt/venv/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2112, in '
     "_get_resized_embeddings\n"
     "    old_num_tokens, old_embedding_dim = old_embeddings.weight.size()\n"
     "ValueError: not enough values to unpack (expected 2, got 1)\n"),
])
def test_resize_of_a_partitioned_embedding(text):
    assert sig(text) == "zero3-param-partitioned"


@pytest.mark.parametrize("text", [
    # the user's own unpacking of a 1-D shape, outside transformers' resize
    ('  File "train.py", line 40, in <module>\n'
     "    vocab, dim = emb.weight.size()\n"
     "ValueError: not enough values to unpack (expected 2, got 1)\n"),
])
def test_near_misses_are_not_the_resize_rule(text):
    found = sig(text)
    assert found != "zero3-param-partitioned"
