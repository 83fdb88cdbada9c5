"""Round 127's rules (issue 45), from threads of pipeline-parallel training (DeepSpeed's PipelineEngine, ColossalAI's
pipeline schedules, torch's pipelining and its older Pipe, Megatron's interleaved schedule): a pipeline engine's
backward given a gradient in another shape than its output (torch autograd's `Mismatch in shape` under the engine's
frame), DeepSpeed's pipeline engine refusing batch inputs that are no tuple, torch's Pipe without an RPC agent, the
interleaved schedule with fewer micro-batches than stages, and torch's `Pipeline group size N cannot be larger than`
read from the words up to "than". Each: a second wording (another version's or caller's words than the corpus case it
was written from) and near misses, other components' text with like words that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("pipeline-activation-shape-changed", "pipe-batch-inputs-list", "pipe-rpc-not-initialized",
       "pipeline-microbatches-below-stages")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW + ("pipeline-stages",))


@pytest.mark.parametrize("text", [
    # torch.distributed.pipelining's backward (torch/distributed/pipelining/_backward.py stage_backward calls
    # torch.autograd.backward(stage_output_tensors, grad_tensors=output_grad_tensors)), torch 2.x under rank prefixes
    ('[rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/pipelining/stage.py", line 769, in '
     'backward_maybe_with_nosync\n'
     '[rank1]:     result = stage_backward(\n'
     '[rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/pipelining/_backward.py", line 364, in '
     'stage_backward\n'
     '[rank1]:     torch.autograd.backward(\n'
     '[rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 340, in backward\n'
     '[rank1]:     grad_tensors_ = _make_grads(\n'
     '[rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 175, in _make_grads\n'
     '[rank1]:     raise RuntimeError(\n'
     '[rank1]: RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([2, 512, 4096]) and '
     'output[0] has a shape of torch.Size([2, 640, 4096]).\n'),
    # DeepSpeed's engine (runtime/pipe/engine.py _exec_backward_pass), a smaller last batch (the batch dimension)
    ('  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/pipe/engine.py", line 863, in '
     '_exec_backward_pass\n'
     '    torch.autograd.backward(tensors=out_tensors, grad_tensors=grad_tensors)\n'
     '  File "/usr/local/lib/python3.10/dist-packages/torch/autograd/__init__.py", line 251, in backward\n'
     '    grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)\n'
     '  File "/usr/local/lib/python3.10/dist-packages/torch/autograd/__init__.py", line 88, in _make_grads\n'
     '    raise RuntimeError(\n'
     'RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([4, 1024, 2048]) and output[0] has '
     'a shape of torch.Size([3, 1024, 2048]).\n'),
])
def test_a_pipeline_gradient_of_another_shape(text):
    assert sig(text) == "pipeline-activation-shape-changed"


@pytest.mark.parametrize("text,expected", [
    # the same autograd words from a script's own backward with explicit gradients: no pipeline engine's frame
    ('  File "train.py", line 88, in train_step\n'
     '    torch.autograd.backward(outputs, grad_tensors=grads)\n'
     '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 244, in backward\n'
     '    grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)\n'
     '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 88, in _make_grads\n'
     '    raise RuntimeError(\n'
     'RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([]) and output[0] has a shape of '
     'torch.Size([2, 10]).\n', "python-error"),
    # the line alone, as a post quotes it: nothing shows a pipeline engine (MPP-LLaVA#25's case stays generic)
    ("RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([4, 2361, 6144]) and output[0] has a "
     "shape of torch.Size([4, 2481, 6144])\n", "python-error"),
])
def test_autograd_shape_words_without_a_pipeline_engine(text, expected):
    assert sig(text) != "pipeline-activation-shape-changed"
    assert sig(text) == expected


def test_another_error_under_the_pipeline_backward_is_not_a_shape_change():
    # DeepSpeed's _exec_backward_pass meeting outputs that need no gradient (deepspeedai/DeepSpeed#7270, #4479)
    text = ('  File "/home/u/lib/python3.8/site-packages/deepspeed/runtime/pipe/engine.py", line 863, in '
            '_exec_backward_pass\n'
            '    torch.autograd.backward(tensors=out_tensors, grad_tensors=grad_tensors)\n'
            'RuntimeError: element 1 of tensors does not require grad and does not have a grad_fn\n')
    assert sig(text) != "pipeline-activation-shape-changed"


@pytest.mark.parametrize("text", [
    # DeepSpeed 0.9.0+ (PR 3042): a tuple or a list, so what fails is another type (a dict)
    ('[rank0]:   File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/pipe/engine.py", line 803, in '
     '_exec_load_micro_batch\n'
     '[rank0]:     assert isinstance(batch[0], (tuple, list))\n'
     '[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     '[rank0]: AssertionError\n'),
    # before 0.9.0, under deepspeed's per-host prefix
    ('10.0.0.2:   File "/usr/lib/python3/dist-packages/deepspeed/runtime/pipe/engine.py", line 785, in '
     '_exec_load_micro_batch\n'
     '10.0.0.2:     assert isinstance(batch[0], tuple)\n'
     '10.0.0.2: AssertionError\n'),
])
def test_pipeline_batch_inputs_of_another_type(text):
    assert sig(text) == "pipe-batch-inputs-list"


def test_a_non_tensor_element_is_not_the_container_type():
    # the same method's check of each element (an input that is no tensor: a string, a number)
    text = ('  File "/usr/lib/python3/dist-packages/deepspeed/runtime/pipe/engine.py", line 809, in '
            '_exec_load_micro_batch\n'
            '    assert torch.is_tensor(x)\n'
            'AssertionError\n')
    assert sig(text) != "pipe-batch-inputs-list"


def test_pipe_without_rpc_in_later_releases():
    # torch 1.9+ Pipe.__init__ (pytorch PR 55187) checks for the agent itself
    text = ('  File "/opt/venv/lib/python3.9/site-packages/torch/distributed/pipeline/sync/pipe.py", line 283, in '
            '__init__\n'
            "    raise RuntimeError(\n"
            "RuntimeError: Please initialize RPC framework for Pipe using torch.distributed.rpc.init_rpc\n")
    assert sig(text) == "pipe-rpc-not-initialized"


@pytest.mark.parametrize("text", [
    # TensorPipe's agent failing once it runs (pytorch/pytorch#85607): the agent is set
    "[W tensorpipe_agent.cpp:726] RPC agent for 0 encountered error when reading incoming request from 27: sendmsg: "
    "Broken pipe (this error originated at tensorpipe/common/socket.h:105)\n",
    # TensorPipe's InfiniBand transport on a fabric without it (pytorch/pytorch#65022)
    'RuntimeError: In operator() at tensorpipe/common/ibv.h:172 "": Operation not supported\n',
])
def test_rpc_agent_errors_are_not_a_missing_agent(text):
    assert sig(text) != "pipe-rpc-not-initialized"


@pytest.mark.parametrize("text", [
    # Megatron 2022 (schedules.py get_forward_backward_func)
    ("    assert get_num_microbatches() % \\\n"
     "AssertionError: number of microbatches (6) is not divisible by pipeline-model-parallel-size (4) when using "
     "interleaved schedule\n"),
    # Megatron 2021 (training.py, then schedules.py), without the numbers
    "AssertionError: number of microbatches is not divisible by pipeline-parallel size when using interleaved schedule\n",
    # Megatron-core now, under rank prefixes, another PP and M
    ("[rank3]:     raise ValueError(msg)\n"
     "[rank3]: ValueError: The number of contiguous micro-batches in a virtual pipeline stageshould range in [PP=8 , "
     "M=4]\n"),
])
def test_interleaved_schedule_with_too_few_micro_batches(text):
    assert sig(text) == "pipeline-microbatches-below-stages"


@pytest.mark.parametrize("text", [
    # the check after it in the same function: M not a whole number of groups (another setting fixes it)
    ("RuntimeError: The remainder of M (the total micro-batches) divided by N (number of contiguous micro-batches in a "
     "virtual pipeline stage) should be 0, or larger than or equal to the pipeline-parallel size, but it is 2. "
     "Otherwise, it introduces dependency bubbles in the pipeline and reduces throughput.\n"),
    # parallel_state.py: an interleaved schedule asked of one pipeline stage
    "AssertionError: pipeline-model-parallel size should be greater than 1 with interleaved schedule\n",
])
def test_other_interleaved_schedule_checks(text):
    assert sig(text) != "pipeline-microbatches-below-stages"


def test_pipeline_group_size_cut_short():
    # a post's excerpt cut after "than" (pytorch/PiPPy#1143): torch's words up to there are its own
    assert sig("[rank2]: RuntimeError: Pipeline group size 2 cannot be larger than\n") == "pipeline-stages"
