"""Round 165's rules (issue 45), from a live round of mistakes users make with torch 2.x's own parallel APIs launched
by dscluster launch --local 2 on CPU with gloo: a full plain state_dict loaded into an FSDP2-sharded model
(nn.Module.load_state_dict's "While copying the parameter named ..." around DTensor's "aten.copy_.default got mixed
torch.Tensor and DTensor"), an optimizer created before fully_shard (torch.distributed.checkpoint.state_dict's
`fqn = fqn_pid_mapping[key]` KeyError), FSDP1 without device_id on a machine without an accelerator
(fsdp/_init_utils.py), DistributedSampler's rank outside num_replicas (utils/data/distributed.py), a tensor-parallel
plan whose layouts do not chain (DTensor's sharding propagation of a matmul whose shapes do not meet), torch.cuda in a
build without CUDA (`module 'torch._C' has no attribute '_cuda_setDevice'`, read as no-gpu), dcp.load's "Size mismatch
between saved ... and current" (read as ckpt-model-mismatch), and DCP's CheckpointException read as the first failed
rank's own error; second wordings (other versions' and callers' words than the live cases) and near misses, other
components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import rankerror

NEW = ("fsdp2-load-full-state-dict", "optimizer-not-model-params", "fsdp-no-accelerator", "sampler-rank-out-of-range",
       "tp-plan-layout-mismatch")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW + ("no-gpu", "ckpt-model-mismatch"))


def _tb(frames: str, last: str) -> str:
    return "Traceback (most recent call last):\n" + frames + last + "\n"


_LOAD = ('  File "train.py", line 41, in main\n'
         "    model.load_state_dict(sd)\n"
         '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 2153, in load_state_dict\n'
         "    raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(\n")


@pytest.mark.parametrize("text", [
    # torch 2.4-2.6's DTensor words ("aten.copy_.default: got mixed ..."), a tensor-parallel Llama's embedding
    _tb(_LOAD, "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
               '\tWhile copying the parameter named "model.embed_tokens.weight", whose dimensions in the model are '
               "torch.Size([32000, 4096]) and whose dimensions in the checkpoint are torch.Size([32000, 4096]), an "
               "exception occurred : ('aten.copy_.default: got mixed torch.Tensor and DTensor, need to convert all "
               "torch.Tensor to DTensor before calling distributed operators!',)."),
    # a rank's prefixed lines (torchrun's [rankN]:), FSDP2 over a transformer block
    ("[rank1]: RuntimeError: Error(s) in loading state_dict for Transformer:\n"
     '[rank1]: \tWhile copying the parameter named "layers.0.attention.wq.weight", whose dimensions in the model are '
     "torch.Size([256, 256]) and whose dimensions in the checkpoint are torch.Size([256, 256]), an exception occurred : "
     "('aten.copy_.default got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before "
     "calling distributed operators!',).\n"),
])
def test_full_state_dict_into_a_sharded_model(text):
    assert sig(text) == "fsdp2-load-full-state-dict"


@pytest.mark.parametrize("text", [
    # the same DTensor words in a user's own op, not in load_state_dict (dtensor-mixed-tensor's)
    ("[rank0]:     emb = tok + pos\n"
     "[rank0]: RuntimeError: aten.add.Tensor got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
     "DTensor before calling distributed operators!\n"),
    # load_state_dict's copy refused for another reason (an inference tensor), and a plain size mismatch
    _tb(_LOAD, "RuntimeError: Error(s) in loading state_dict for Net:\n"
               '\tWhile copying the parameter named "fc.weight", whose dimensions in the model are torch.Size([10, 4]) '
               "and whose dimensions in the checkpoint are torch.Size([10, 4]), an exception occurred : ('Inplace "
               "update to inference tensor outside InferenceMode is not allowed.',)."),
    _tb(_LOAD, "RuntimeError: Error(s) in loading state_dict for Net:\n"
               "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 8]) from checkpoint, the "
               "shape in current model is torch.Size([10, 4])."),
])
def test_near_misses_are_not_fsdp2_load_full_state_dict(text):
    assert sig(text) != "fsdp2-load-full-state-dict"


_OPTIM = ('  File "train.py", line 77, in save\n'
          "    model_sd, optim_sd = get_state_dict(model, optimizer)\n"
          '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/checkpoint/state_dict.py", line 1012, '
          "in get_state_dict\n"
          "    optim_state_dict = _get_optim_state_dict(model, optimizers, info)\n"
          '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/checkpoint/state_dict.py", line 691, '
          "in _get_optim_state_dict\n")


@pytest.mark.parametrize("text", [
    # Python 3.10 (no caret line), torch 2.3's state_dict.py
    _tb(_OPTIM, "    fqn = fqn_pid_mapping[key]\nKeyError: 3"),
    # the param groups' line, where the optimizer has no state yet
    _tb(_OPTIM, "    group[_PARAMS] = [fqn_pid_mapping[pid] for pid in group[_PARAMS]]\n"
                "                      ~~~~~~~~~~~~~~~^^^^^\nKeyError: 0"),
])
def test_optimizer_of_other_parameters(text):
    assert sig(text) == "optimizer-not-model-params"


@pytest.mark.parametrize("text", [
    # the optimizer's own load_state_dict given a state_dict without its keys
    _tb('  File "/opt/conda/lib/python3.10/site-packages/torch/optim/optimizer.py", line 762, in load_state_dict\n'
        '    groups = self.param_groups\n    saved_groups = deepcopy(state_dict["param_groups"])\n',
        "KeyError: 'param_groups'"),
    # a user's own mapping of the same name
    _tb('  File "train.py", line 12, in rename\n    fqn = fqn_pid_mapping[key]\n', "KeyError: 'layer.weight'"),
])
def test_near_misses_are_not_optimizer_not_model_params(text):
    assert sig(text) != "optimizer-not-model-params"


@pytest.mark.parametrize("text", [
    # accelerate's FSDP plugin (FSDP1) on a CPU machine: the same refusal, raised under Accelerator.prepare
    _tb('  File "/usr/lib/python3/dist-packages/accelerate/accelerator.py", line 1553, in prepare_model\n'
        "    model = FSDP(model, **kwargs)\n"
        '  File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_init_utils.py", line 373, in '
        "_init_device_handle\n    raise RuntimeError(\n",
        "RuntimeError: FSDP needs a non-CPU accelerator device, but no accelerator device is detected."),
    "[rank0]: RuntimeError: FSDP needs a non-CPU accelerator device, but no accelerator device is detected.\n",
])
def test_fsdp1_without_an_accelerator(text):
    assert sig(text) == "fsdp-no-accelerator"


@pytest.mark.parametrize("text", [
    # the same function's other refusal: parameters on two device types
    "RuntimeError: FSDP does not support modules with different device types but got params on cuda and cpu\n",
    # Lightning's FSDP strategy on the CPU (lightning-fsdp-gpu-only's)
    "ValueError: The strategy `fsdp` requires a GPU accelerator, but got: CPUAccelerator\n",
])
def test_near_misses_are_not_fsdp_no_accelerator(text):
    assert sig(text) != "fsdp-no-accelerator"


@pytest.mark.parametrize("text", [
    # rank=args.local_rank left at -1 (not launched by a launcher that sets it)
    _tb('  File "train.py", line 30, in <module>\n    sampler = DistributedSampler(ds, rank=args.local_rank)\n'
        '  File "/usr/lib/python3/dist-packages/torch/utils/data/distributed.py", line 74, in __init__\n'
        "    raise ValueError(\n", "ValueError: Invalid rank -1, rank should be in the interval [0, 1]"),
    # a second node's rank 9 against num_replicas = GPUs of one node
    "ValueError: Invalid rank 9, rank should be in the interval [0, 7]\n",
])
def test_sampler_rank_out_of_range(text):
    assert sig(text) == "sampler-rank-out-of-range"


@pytest.mark.parametrize("text", [
    # DistributedSampler without an initialised process group
    _tb('  File "/usr/lib/python3/dist-packages/torch/utils/data/distributed.py", line 68, in __init__\n'
        "    num_replicas = dist.get_world_size()\n",
        "ValueError: Default process group has not been initialized, please make sure to call init_process_group."),
    # c10d's own rank check at init_process_group
    "RuntimeError: Invalid rank 2 for world size 2\n",
])
def test_near_misses_are_not_sampler_rank_out_of_range(text):
    assert sig(text) != "sampler-rank-out-of-range"


@pytest.mark.parametrize("text", [
    # torch 2.4's words: the op first, the shape error after "Error:"
    ("RuntimeError: Sharding propagation failed on op aten.mm.default.\n"
     "Input schema: OpSchema(op=aten.mm.default, args_schema=(Spec(R on (8, 32)), Spec(S(1) on (64, 16))), "
     "kwargs_schema={}).\n"
     "Error: a and b must have same reduction dim, but got [8, 32] X [64, 16].\n"),
    # the meta check's other wording, on the current dispatcher's line
    ("[rank1]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x2048 and 4096x11008)\n"
     "[rank1]: Sharding propagation failed for aten.mm.default(Spec(bf16[4, 2048](R)), Spec(bf16[4096, 11008](S(1)))) "
     "on DeviceMesh((4,), 'cuda', stride=(1,)))\n"),
])
def test_tensor_parallel_layouts_that_do_not_chain(text):
    assert sig(text) == "tp-plan-layout-mismatch"


@pytest.mark.parametrize("text", [
    # the same shape error in a plain (not DTensor) model: the model's own sizes
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x32 and 64x16)\n",
    # sharding propagation of another op (a placement it has no strategy for)
    ("RuntimeError: aten.copy_.default: in-place operations that require placement changes are not supported.\n\n"
     "Sharding propagation failed for aten.copy_.default(Spec(f32[1](S(0))), Spec(f32[1](R))) on DeviceMesh((2,), "
     "'cpu', stride=(1,)))\n"),
])
def test_near_misses_are_not_tp_plan_layout_mismatch(text):
    assert sig(text) != "tp-plan-layout-mismatch"


@pytest.mark.parametrize("text", [
    # torch.cuda.set_device in torch's CPU wheel (a Mac, a CPU node)
    _tb('  File "train.py", line 20, in <module>\n    torch.cuda.set_device(args.local_rank)\n'
        '  File "/opt/homebrew/lib/python3.11/site-packages/torch/cuda/__init__.py", line 399, in set_device\n'
        "    torch._C._cuda_setDevice(device)\n", "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'"),
    "AttributeError: module 'torch._C' has no attribute '_cuda_getDeviceCount'\n",
])
def test_torch_cuda_in_a_build_without_cuda(text):
    assert sig(text) == "no-gpu"


def test_other_private_names_of_torch_C_stay_another_version():
    # an attribute of torch._C that a newer or older torch lacks, not a CUDA function: another version's
    assert sig("AttributeError: module 'torch._C' has no attribute '_set_print_stack_traces_on_fatal_signal'\n") \
        != "no-gpu"


_DCP = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 33, in <module>\n'
    "    dcp.load(state, checkpoint_id=args.ckpt)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line 221, in '
    "reduce_scatter\n"
    "    raise result\n"
    "torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0, 1, 2, 3])\n"
    "Traceback (most recent call last): (RANK 0)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line 193, in '
    "reduce_scatter\n"
    "    local_data = map_fun()\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/default_planner.py", line 505, in '
    "create_default_local_load_plan\n"
    "    raise ValueError(\n")


def test_dcp_load_into_a_model_of_another_shape():
    # older torch: "Size mismatch between saved torch.Size([4096, 4096]) and current: ..." under the same exception
    text = _DCP + ("ValueError: Size mismatch between saved torch.Size([4096, 4096]) and current: torch.Size([5120, "
                   "5120]) for model.layers.0.attn.wq.weight\n")
    assert sig(text) == "ckpt-model-mismatch"


def test_a_checkpoint_exception_is_read_as_the_first_ranks_error():
    text = _DCP + "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/step100/.metadata'\n"
    err = rankerror.first_failure(e for st in rankerror.streams(text, None, None, None, order=0)
                                  for e in rankerror.errors(st))
    assert err.type == "FileNotFoundError" and err.file == "train.py" and err.line == 33


def test_a_checkpoint_exception_without_a_ranks_traceback_stays_itself():
    # the next traceback is another error's (no "(RANK n)"), not the exception's own rank failure
    text = (_DCP.split("Traceback (most recent call last): (RANK 0)")[0] +
            "Traceback (most recent call last):\n"
            '  File "train.py", line 9, in <module>\n    main()\n'
            "RuntimeError: boom\n")
    errs = [e for st in rankerror.streams(text, None, None, None, order=0) for e in rankerror.errors(st)]
    assert errs[0].type.endswith("CheckpointException") and errs[1].type == "RuntimeError"
