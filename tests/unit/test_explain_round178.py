"""Round 178's rules (issue 45, live: torch.compile in distributed training): Dynamo's graph break raised under
fullgraph=True (dynamo-fullgraph-graph-break), a dimension marked dynamic that tracing specialized
(dynamo-dynamic-dim-specialized), torch.compile given both mode and options (compile-mode-and-options), a backend no
package registered (dynamo-backend-unknown), a torch.compile config option this torch does not have
(torch-compile-config-unknown), torch.compile's `_orig_mod.` prefix on one side of a load_state_dict
(compiled-state-dict-prefix), DeepSpeed's "compile" section with fields its CompileConfig no longer takes
(ds-compile-config-fields); and dynamo-recompile-limit widened to torch 2.7+'s Unsupported words. Second wordings
(other versions' and callers' words than the live logs) and near misses, other components' text with like words that
must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dynamo-fullgraph-graph-break", "dynamo-dynamic-dim-specialized", "compile-mode-and-options",
       "dynamo-backend-unknown", "torch-compile-config-unknown", "compiled-state-dict-prefix",
       "ds-compile-config-fields")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torchdynamo's export of a branch on a tensor, before gb_type names (pytorch/torchdynamo#1767)
    ("  File \"/usr/lib/python3.10/site-packages/torch/_dynamo/symbolic_convert.py\", line 330, in generic_jump\n"
     "    unimplemented(\"generic_jump \" + typestr(value))\n"
     "torch._dynamo.exc.Unsupported: generic_jump TensorVariable()\n"),
    # torch 2.1-2.5 under fullgraph inside Unsloth's compiled module (unslothai/unsloth#2204)
    ("torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment. Please use "
     "functorch.experimental.control_flow.cond to explicitly capture the control flow. For more information about "
     "this error, see: https://pytorch.org/docs/main/generated/exportdb/index.html#cond-operands\n"),
    # torch 2.2's print inside a fullgraph region, with torchrun's rank prefix
    ("[rank1]: torch._dynamo.exc.Unsupported: call_function BuiltinVariable(print) [ConstantVariable(str), "
     "TensorVariable()] {}\n"
     "[rank1]: from user code:\n"
     "[rank1]:    File \"train.py\", line 41, in forward\n"
     "[rank1]:     print(\"x norm\", x.norm())\n"),
    # torch 2.13's builtin print, gb_type words
    ("torch._dynamo.exc.Unsupported: Failed to trace builtin operator\n"
     "  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str', 'Tensor'] "
     "(has_kwargs False)\n"),
])
def test_fullgraph_graph_break(text):
    assert sig(text) == "dynamo-fullgraph-graph-break"


@pytest.mark.parametrize("text,other", [
    # Dynamo's refusal of FSDP's flat parameters is Unsupported too, with its own fix
    ("torch._dynamo.exc.Unsupported: FSDP with use_orig_params=False\n"
     "  Explanation: Dynamo only supports FSDP with use_orig_params=True\n", "dynamo-fsdp-orig-params"),
    # the recompile limit's Unsupported under fullgraph=True (torch 2.13, then its FailOnRecompileLimitHit)
    ("torch._dynamo.exc.Unsupported: Dynamo recompile limit exceeded\n"
     "  Explanation: Dynamo attempted to recompile the code object too many times, exceeding the recompile_limit "
     "cache size limit (currently set to 8).\n", "dynamo-recompile-limit"),
    # torch 2.7-2.8's name of the same limit
    ("torch._dynamo.exc.Unsupported: Dynamo cache limit exceeded\n"
     "  Explanation: Dynamo attempted to recompile the code object too many times, exceeding the cache_size_limit "
     "cache size limit (currently set to 8).\n", "dynamo-recompile-limit"),
])
def test_other_dynamo_refusals_keep_their_families(text, other):
    assert sig(text) == other


@pytest.mark.parametrize("text", [
    # TorchScript's refusal of a construct (torch/jit/frontend.py): another compiler
    "torch.jit.frontend.UnsupportedNodeError: GeneratorExp aren't supported:\n",
    # the ONNX exporter's missing symbolic (torch/onnx/errors.py)
    ("torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::scaled_dot_product_attention' to ONNX "
     "opset version 13 is not supported.\n"),
])
def test_near_misses_are_not_fullgraph_graph_break(text):
    assert sig(text) != "dynamo-fullgraph-graph-break"


@pytest.mark.parametrize("text", [
    # torch 2.1-2.4's RelaxedUnspecConstraint words (pytorch/pytorch#141251)
    ("torch._dynamo.exc.UserError: Constraints violated (L['old_my_residual_1'].size()[0])! For more information, run "
     "with TORCH_LOGS=\"+dynamic\".\n"
     "  - Not all values of RelaxedUnspecConstraint(L['old_my_residual_1'].size()[0]) are valid because "
     "L['old_my_residual_1'].size()[0] was inferred to be a constant (256).\n"),
    # torch 2.5+ under torchrun, a sequence dimension
    ("[rank0]: torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints violated "
     "(L['input_ids'].size()[1])! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
     "[rank0]:   - You marked L['input_ids'].size()[1] as dynamic but your code specialized it to be a constant (512). "
     "If you're using mark_dynamic, either remove it or use maybe_mark_dynamic.\n"),
])
def test_dynamic_dim_specialized(text):
    assert sig(text) == "dynamo-dynamic-dim-specialized"


@pytest.mark.parametrize("text", [
    # torch.export's Dim whose range the code narrowed: the Dim's range is the fix, not mark_dynamic
    ("torch._dynamo.exc.UserError: Constraints violated (batch)! For more information, run with "
     "TORCH_LOGS=\"+dynamic\".\n"
     "  - Not all values of batch = L['x'].size()[0] in the specified range batch <= 1024 satisfy the generated guard "
     "Ne(L['x'].size()[0], 1).\n"),
    # a data-dependent size Dynamo could not guard (symbolic_shapes.py): no mark involved
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression "
     "Eq(u0, 1) (unhinted: Eq(u0, 1)).  (Size-like symbols: u0)\n"),
])
def test_near_misses_are_not_dynamic_dim_specialized(text):
    assert sig(text) != "dynamo-dynamic-dim-specialized"


@pytest.mark.parametrize("text", [
    # torch 2.1's compile() frame, under torchrun's prefix
    ("[rank3]:   File \"/opt/conda/lib/python3.10/site-packages/torch/__init__.py\", line 1723, in compile\n"
     "[rank3]:     raise RuntimeError(\"Either mode or options can be specified, but both can't be specified at the "
     "same time.\")\n"
     "[rank3]: RuntimeError: Either mode or options can be specified, but both can't be specified at the same time.\n"),
])
def test_compile_mode_and_options(text):
    assert sig(text) == "compile-mode-and-options"


@pytest.mark.parametrize("text", [
    # a mode torch does not know (torch/__init__.py _TorchCompileInductorWrapper.apply_mode)
    ("RuntimeError: Unrecognized mode=max-autotune-gpu, should be one of: default, reduce-overhead, max-autotune, "
     "max-autotune-no-cudagraphs\n"),
    # an option Inductor does not know (apply_options)
    "RuntimeError: Unexpected optimization option triton.cudagraph, known options are ['debug', 'disable_progress']\n",
])
def test_near_misses_are_not_compile_mode_and_options(text):
    assert sig(text) != "compile-mode-and-options"


@pytest.mark.parametrize("text", [
    # torch 2.1 after nvfuser's backend was removed
    ("  File \"/usr/local/lib/python3.10/dist-packages/torch/_dynamo/backends/registry.py\", line 61, in "
     "lookup_backend\n"
     "    raise InvalidBackend(name=compiler_fn)\n"
     "torch._dynamo.exc.InvalidBackend: Invalid backend: 'nvfuser', see `torch._dynamo.list_backends()` for available "
     "backends.\n"),
    # a TensorRT backend without torch_tensorrt imported, torchrun's prefix
    ("[rank0]: torch._dynamo.exc.InvalidBackend: Invalid backend: 'tensorrt', see `torch._dynamo.list_backends()` for "
     "available backends.\n"),
])
def test_dynamo_backend_unknown(text):
    assert sig(text) == "dynamo-backend-unknown"


@pytest.mark.parametrize("text", [
    # c10d's Backend for a process group (torch/distributed/distributed_c10d.py)
    "ValueError: Invalid backend: 'nccl2'\n",
    # transformers' AWQ config (utils/quantization_config.py)
    "ValueError: Invalid backend 'exllama3'. Must be one of: ['auto', 'gemm', 'gemv', 'exllama', 'ipex']\n",
    # Accelerate's DynamoBackend enum for a name it does not list
    "ValueError: 'IPEX2' is not a valid DynamoBackend\n",
])
def test_near_misses_are_not_dynamo_backend_unknown(text):
    assert sig(text) != "dynamo-backend-unknown"


@pytest.mark.parametrize("text", [
    # torch 2.1's config_utils.py refusing an option newer than it (meta-pytorch/gpt-fast#51)
    ("  File \"/opt/conda/lib/python3.10/site-packages/torch/_dynamo/config_utils.py\", line 72, in __setattr__\n"
     "    raise AttributeError(f\"{self.__name__}.{name} does not exist\")\n"
     "AttributeError: torch._inductor.config.fx_graph_cache does not exist\n"),
    # a section of Inductor's config (triton.), under torchrun's prefix
    "[rank1]: AttributeError: torch._inductor.config.triton.mm does not exist\n",
])
def test_torch_compile_config_unknown(text):
    assert sig(text) == "torch-compile-config-unknown"


@pytest.mark.parametrize("text", [
    # the submodule never imported (facebookresearch/sapiens#141): not an option's name
    "AttributeError: module 'torch._inductor' has no attribute 'config'\n",
    # mmengine's check_file_exist, a config file's path
    "FileNotFoundError: file \"/work/configs/torch.config.py\" does not exist\n",
])
def test_near_misses_are_not_torch_compile_config_unknown(text):
    assert sig(text) != "torch-compile-config-unknown"


@pytest.mark.parametrize("text", [
    # nanoGPT's compiled checkpoint into the plain model (the reason its train.py strips '_orig_mod.')
    ("RuntimeError: Error(s) in loading state_dict for GPT:\n"
     "\tMissing key(s) in state_dict: \"transformer.wte.weight\", \"transformer.wpe.weight\", \"lm_head.weight\". \n"
     "\tUnexpected key(s) in state_dict: \"_orig_mod.transformer.wte.weight\", \"_orig_mod.transformer.wpe.weight\", "
     "\"_orig_mod.lm_head.weight\". \n"),
    # saved from DDP(torch.compile(model)), loaded into the plain model, torchrun's prefix
    ("[rank0]: RuntimeError: Error(s) in loading state_dict for Net:\n"
     "[rank0]: \tMissing key(s) in state_dict: \"fc.weight\", \"fc.bias\". \n"
     "[rank0]: \tUnexpected key(s) in state_dict: \"module._orig_mod.fc.weight\", \"module._orig_mod.fc.bias\". \n"),
    # safetensors' load_model, Python lists
    ("RuntimeError: Error(s) in loading state_dict for OptimizedModule:\n"
     "    Missing key(s) in state_dict: ['_orig_mod.fc.bias', '_orig_mod.fc.weight']\n"
     "    Unexpected key(s) in state_dict: ['fc.bias', 'fc.weight']\n"),
])
def test_compiled_state_dict_prefix(text):
    assert sig(text) == "compiled-state-dict-prefix"


@pytest.mark.parametrize("text", [
    # both sides compiled, the model changed: the prefix is not the cause
    ("RuntimeError: Error(s) in loading state_dict for OptimizedModule:\n"
     "\tMissing key(s) in state_dict: \"_orig_mod.head.weight\", \"_orig_mod.head.bias\". \n"
     "\tUnexpected key(s) in state_dict: \"_orig_mod.classifier.weight\", \"_orig_mod.classifier.bias\". \n"),
    # the keys match, a size differs
    ("RuntimeError: Error(s) in loading state_dict for OptimizedModule:\n"
     "\tsize mismatch for _orig_mod.fc.weight: copying a param with shape torch.Size([10, 32]) from checkpoint, the "
     "shape in current model is torch.Size([100, 32]).\n"),
    # DDP's `module.` prefix alone
    ("RuntimeError: Error(s) in loading state_dict for Sequential:\n"
     "\tMissing key(s) in state_dict: \"0.weight\", \"0.bias\". \n"
     "\tUnexpected key(s) in state_dict: \"module.0.weight\", \"module.0.bias\". \n"),
])
def test_near_misses_are_not_compiled_state_dict_prefix(text):
    assert sig(text) != "compiled-state-dict-prefix"


@pytest.mark.parametrize("text", [
    # DeepSpeed 0.14-0.16's pydantic 1 (deepspeed.pydantic_v1), torchrun's prefix
    ("[rank0]: pydantic.error_wrappers.ValidationError: 1 validation error for CompileConfig\n"
     "[rank0]: enabled\n"
     "[rank0]:   extra fields not permitted (type=value_error.extra)\n"),
    # a misspelled DeepCompile field, pydantic 2
    ("pydantic_core._pydantic_core.ValidationError: 1 validation error for CompileConfig\n"
     "deep_compile\n"
     "  Extra inputs are not permitted [type=extra_forbidden, input_value=True, input_type=bool]\n"),
])
def test_ds_compile_config_fields(text):
    assert sig(text) == "ds-compile-config-fields"


@pytest.mark.parametrize("text", [
    # a known field with a value it does not take
    ("pydantic_core._pydantic_core.ValidationError: 1 validation error for CompileConfig\n"
     "passes.0\n"
     "  Input should be 'z1', 'z3', 'autosp' or 'autotp' [type=literal_error, input_value='z2', input_type=str]\n"),
    # another DeepSpeed section's unknown key
    ("pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
     "overlap_comms\n"
     "  Extra inputs are not permitted [type=extra_forbidden, input_value=True, input_type=bool]\n"),
])
def test_near_misses_are_not_ds_compile_config_fields(text):
    assert sig(text) != "ds-compile-config-fields"
