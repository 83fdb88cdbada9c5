"""Round 169's rules (issue 45, live round of DeepSpeed's own features): a PipelineModule built without loss_fn, whose
last stage's output reaches the engine's backward as the loss (runtime/pipe/engine.py _exec_backward_pass, then
DeepSpeed 0.18+'s maybe_loss_for_backward assertion or torch's _make_grads), read as pipe-no-loss-fn; engine.step()
with no engine.backward before it (ZeRO's optimizer indexing its empty averaged_gradients: KeyError under that source
line), read as ds-step-without-backward; activation checkpointing's configure asserting partitioned activations for
contiguous checkpointing, read as ds-contiguous-ckpt-no-partition. Second wordings (other versions' and callers'
words than the live cases) and near misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("pipe-no-loss-fn", "ds-step-without-backward", "ds-contiguous-ckpt-no-partition")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # DeepSpeed before 0.18: the engine's backward hands the outputs to torch, whose _make_grads refuses a non-scalar
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 728, in '
     "_exec_backward_pass\n"
     "    super().backward(self.loss)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1862, in backward\n'
     "    self.optimizer.backward(loss, retain_graph=retain_graph)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1901, in '
     "backward\n"
     "    self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 193, in backward\n'
     "    grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 88, in _make_grads\n'
     '    raise RuntimeError("grad can be implicitly created only for scalar outputs")\n'
     "RuntimeError: grad can be implicitly created only for scalar outputs\n"),
    # DeepSpeed 0.18+'s own assertion, a rank prefix and Windows paths
    ('[rank3]:   File "C:\\envs\\ds\\Lib\\site-packages\\deepspeed\\runtime\\pipe\\engine.py", line 801, in '
     "_exec_backward_pass\n"
     "[rank3]:     super().backward(self.loss)\n"
     '[rank3]:   File "C:\\envs\\ds\\Lib\\site-packages\\deepspeed\\runtime\\engine.py", line 3390, in backward\n'
     "[rank3]:     assert maybe_loss_for_backward(\n"
     "[rank3]: AssertionError: loss must be a scalar tensor. If you need to pass output gradients, backward() of "
     "output tensors\n"),
])
def test_pipeline_without_loss_fn(text):
    assert sig(text) == "pipe-no-loss-fn"


@pytest.mark.parametrize("text", [
    # the same assertion from a user's own engine.backward(outputs): no pipeline frame (round 167's family)
    ('  File "/home/user/train.py", line 40, in <module>\n'
     "    engine.backward(outputs)\n"
     '  File "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 3397, in backward\n'
     "    assert maybe_loss_for_backward(\n"
     "AssertionError: loss must be a scalar tensor. If you need to pass output gradients, backward() of output "
     "tensors\n"),
    # torch's words from a plain script's loss.backward() on a per-sample loss
    ('  File "/home/user/train.py", line 52, in <module>\n'
     "    loss.backward()\n"
     '  File "/usr/lib/python3/dist-packages/torch/_tensor.py", line 487, in backward\n'
     "    torch.autograd.backward(\n"
     "RuntimeError: grad can be implicitly created only for scalar outputs\n"),
    # another failure under the pipeline's backward: the peer stage gone (gloo)
    ('  File "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/pipe/engine.py", line 812, in '
     "_exec_backward_pass\n"
     "    p2p.recv(self.grad_layer, self.next_stage)\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
     "[10.0.0.2]:4817\n"),
])
def test_near_misses_are_not_pipe_no_loss_fn(text):
    assert sig(text) != "pipe-no-loss-fn"


@pytest.mark.parametrize("text", [
    # DeepSpeed 0.10's overflow check (deepspeedai/DeepSpeed#4397: model_engine.step() with no backward before it)
    ('  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1885, in '
     "has_overflow\n"
     "    overflow = self.local_overflow if self.cpu_offload else self.has_overflow_partitioned_grads_serial()\n"
     '  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1874, in '
     "has_overflow_partitioned_grads_serial\n"
     "    for j, grad in enumerate(self.averaged_gradients[i]):\n"
     "KeyError: 0\n"),
    # ZeRO-3's gradient norm (stage3.py _get_norm_groups), a rank prefix and carets
    ('[rank1]:   File "/opt/venv/lib/python3.12/site-packages/deepspeed/runtime/zero/stage3.py", line 2579, in '
     "_get_norm_groups\n"
     "[rank1]:     norm = self.get_grad_norm_direct(self.averaged_gradients[i], self.fp16_groups[i])\n"
     "[rank1]:                                      ~~~~~~~~~~~~~~~~~~~~~~~^^^\n"
     "[rank1]: KeyError: 0\n"),
])
def test_step_without_backward(text):
    assert sig(text) == "ds-step-without-backward"


@pytest.mark.parametrize("text", [
    # a parameter the optimizer does not know (a KeyError in the same file, on another line)
    ('  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 872, in '
     "reduce_independent_p_g_buckets_and_remove_grads\n"
     "    param_id = self.get_param_id(param)\n"
     '  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1011, in '
     "get_param_id\n"
     "    return self.param_id[unique_id]\n"
     "KeyError: 140185123456784\n"),
    # a dataset's own KeyError: 0 (a pandas frame indexed by position) in a DeepSpeed run
    ('  File "/home/user/data.py", line 21, in __getitem__\n'
     "    row = self.df[idx]\n"
     '  File "/opt/venv/lib/python3.10/site-packages/pandas/core/frame.py", line 3761, in __getitem__\n'
     "    indexer = self.columns.get_loc(key)\n"
     "KeyError: 0\n"),
    # averaged_gradients None after overflow handling (deepspeedai/DeepSpeed#686): another error, not a KeyError
    ('  File "/opt/venv/lib/python3.8/site-packages/deepspeed/runtime/zero/stage2.py", line 1443, in step\n'
     "    self.averaged_gradients[i],\n"
     "TypeError: 'NoneType' object is not subscriptable\n"),
])
def test_near_misses_are_not_step_without_backward(text):
    assert sig(text) != "ds-step-without-backward"


@pytest.mark.parametrize("text", [
    # Megatron-DeepSpeed configuring checkpointing from the ds_config ("contiguous_memory_optimization": true)
    ('  File "/workspace/Megatron-DeepSpeed/megatron/training.py", line 120, in pretrain\n'
     "    deepspeed.checkpointing.configure(mpu, deepspeed_config=args.deepspeed_config)\n"
     '  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/activation_checkpointing/checkpointing.py", '
     "line 1014, in configure\n"
     '    assert PARTITION_ACTIVATIONS, "Contiguous Checkpointing is only available with partitioned activations. '
     'Set partitioned activations to true in deepspeed config"\n'
     "AssertionError: Contiguous Checkpointing is only available with partitioned activations. Set partitioned "
     "activations to true in deepspeed config\n"),
])
def test_contiguous_checkpointing_without_partition(text):
    assert sig(text) == "ds-contiguous-ckpt-no-partition"


@pytest.mark.parametrize("text", [
    # the other assertion of configure: contiguous checkpointing without the number of layers (another fix)
    ("AssertionError: Must specify the number of layers with contiguous memory checkpointing\n"),
    # DeepSpeed's config printed at start-up, the settings named but nothing failing in them
    ('[INFO] [config.py:1000:print]   activation_checkpointing_config  {"partition_activations": false, '
     '"contiguous_memory_optimization": true, "cpu_checkpointing": false}\n'
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"),
])
def test_near_misses_are_not_contiguous_checkpointing(text):
    assert sig(text) != "ds-contiguous-ckpt-no-partition"
