"""Round 19's rules (issue 45), the training stack: torch.compile refusing its environment (compile-unsupported),
Triton or Inductor without a C compiler (c-compiler-missing), the Trainer given a quantized model without adapters
(quantized-no-adapters), FSDP flattening frozen and trainable parameters together (fsdp-frozen-params), TRL's DPO given
a ref_model and a peft_config (trl-ref-model-peft), Accelerate's DeepSpeed config file beside its own DeepSpeed fields
(accelerate-ds-config-file) and its DeepSpeed without a dataloader (accelerate-ds-batch-size), a Half kernel torch
does not have (half-on-cpu); and the older families extended: an extension's setup.py without nvcc
(cuda-home-missing), DeepSpeed's ZeRO-Offload with a client optimizer (ds-config-invalid), a library class's keyword
the installed version does not take (import-name), ms-swift's leftover arguments (argparse-usage). A second wording
of each, in another version's or another caller's words than the corpus case it was written from, and near misses
that must not be read as it."""

import pytest
from explain_rounds import sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # torch 2.5's Dynamo on Python 3.13 (the cases were 3.12's words and Windows')
    ("Traceback (most recent call last):\n"
     "  File \"/opt/app/train.py\", line 40, in <module>\n"
     "    model = torch.compile(model)\n"
     "  File \"/opt/app/.venv/lib/python3.13/site-packages/torch/_dynamo/eval_frame.py\", line 798, in "
     "check_if_dynamo_supported\n"
     "    raise RuntimeError(\"Python 3.13+ not yet supported for torch.compile\")\n"
     "RuntimeError: Python 3.13+ not yet supported for torch.compile\n", "compile-unsupported"),
    # Inductor on a P100 behind a worker's log prefix (the case was a GTX 1080 Ti under nnU-Net)
    ("(VllmWorkerProcess pid=62) ERROR 12-26 16:20:28 multiproc_worker_utils.py:236] RuntimeError: Found Tesla "
     "P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton "
     "only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.0\n",
     "compile-unsupported"),
    # Inductor's C++ compiler check (the case was Triton's C compiler)
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
     "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')\n",
     "c-compiler-missing"),
    # Triton's own words from its build step, under a rank prefix
    ("[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/triton/runtime/build.py\", line 32, in _build\n"
     "[rank0]:     raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\n"
     "[rank0]: RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n",
     "c-compiler-missing"),
    # the Trainer's check reached through TRL, behind a rank prefix
    ("[rank0]: ValueError: You cannot perform fine-tuning on purely quantized models. Please attach trainable "
     "adapters on top of the quantized model to correctly perform fine-tuning. Please see: "
     "https://huggingface.co/docs/transformers/peft for more details\n", "quantized-no-adapters"),
    # newer torch's FlatParamHandle (the case was older torch's FlatParameter)
    ("[rank1]: ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`\n",
     "fsdp-frozen-params"),
    # a newer DPOTrainer, naming force_use_ref_model (the case was trl 0.7's shorter sentence)
    ("ValueError: You passed both a ref_model and a peft_config. For training PEFT adapters with DPO there is no need "
     "to pass a reference model. Please pass `ref_model=None` in case you want to train PEFT adapters, or pass a "
     "ref_model with `force_use_ref_model=True` in DPOTrainer's init. if you want to use a different ref_model.\n",
     "trl-ref-model-peft"),
    # Accelerate's check with a shorter list of fields
    ("ValueError: When using `deepspeed_config_file`, the following accelerate config variables will be ignored: "
     "['mixed_precision'].\nPlease specify them appropriately in the DeepSpeed config file.\n",
     "accelerate-ds-config-file"),
    # Accelerate's later wording: a comma and the batch_size attribute
    ("ValueError: When using DeepSpeed, `accelerate.prepare()` requires you to pass at least one of training or "
     "evaluation dataloaders with `batch_size` attribute returning an integer value or alternatively set an integer "
     "value in `train_micro_batch_size_per_gpu` in the deepspeed config file or assign integer value to "
     "`AcceleratorState().deepspeed_plugin.deepspeed_config['train_micro_batch_size_per_gpu']`.\n",
     "accelerate-ds-batch-size"),
    # another CPU kernel without Half (the case was LayerNorm's)
    ("RuntimeError: \"slow_conv2d_cpu\" not implemented for 'Half'\n", "half-on-cpu"),
    # apex's setup.py (the case was flash-attn's)
    ("RuntimeError: --cuda_ext was requested, but nvcc was not found.  Are you sure your environment has nvcc "
     "available?  If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, only images "
     "whose names contain 'devel' will provide nvcc.\n", "cuda-home-missing"),
    # DeepSpeed's exception under a rank prefix, with torch's AdamW (the case was transformers' AdamW, wrapped)
    ("[rank0]: deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided "
     "optimizer (<class 'torch.optim.adamw.AdamW'>) which in most cases will yield poor performance. Please either use "
     "deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config\n", "ds-config-invalid"),
    # transformers' renamed argument, and a TRL config's (the cases were SFTTrainer's and vLLM's EngineArgs)
    ("TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'\n",
     "hf-trainingargs-removed"),  # round 170: the rename itself (eval_strategy), no longer the generic answer
    ("[rank2]: TypeError: GRPOConfig.__init__() got an unexpected keyword argument 'vllm_mode'\n", "import-name"),
    # megatron sft's parser behind a rank prefix (the case was swift rlhf on 2.6)
    ("[rank7]:     raise ValueError(f'remaining_argv: {remaining_argv}')\n"
     "[rank7]: ValueError: remaining_argv: ['--report_to', 'wandb']\n", "argparse-usage"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # Inductor failing for another reason: not a refusal of the environment
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nNameError: name 's4' is not defined\n",
     "compile-unsupported"),
    # a compiler that exists and failed: Triton's gcc command, not a missing compiler
    ("subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpx/main.c', '-O3', '-shared', '-fPIC', '-o', "
     "'/tmp/tmpx/cuda_utils.so', '-lcuda']' returned non-zero exit status 1.\n", "c-compiler-missing"),
    # the Trainer's other refusal: a quantization method that cannot train at all, adapters or not
    ("ValueError: The model you are trying to fine-tune is quantized with QuantizationMethod.HQQ but that "
     "quantization method do not support training. Please open an issue on GitHub\n", "quantized-no-adapters"),
    # FSDP's dtype check is the mixed-dtype family
    ("ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float32\n",
     "fsdp-frozen-params"),
    # TRL's other PEFT refusal: a PeftModel together with a peft_config, no reference model involved
    ("ValueError: You passed a `PeftModel` instance together with a `peft_config` to the trainer. Please first merge "
     "and unload the existing adapter, save the resulting base model, and then pass that base model along with the "
     "new `peft_config` to the trainer.\n", "trl-ref-model-peft"),
    # Accelerate's notice of defaults at launch is no refusal
    ("The following values were not passed to `accelerate launch` and had defaults used instead:\n"
     "\t`--num_processes` was set to a value of `2`\n", "accelerate-ds-config-file"),
    # a dtype clash on the GPU, not a kernel without Half
    ("RuntimeError: expected scalar type Half but found Float\n", "half-on-cpu"),
    # later flash-attn releases only warn with the setup.py words, and a prebuilt wheel may still install
    ("  UserWarning: flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc "
     "available?\nSuccessfully installed flash-attn-2.5.8\n", "cuda-home-missing"),
    # the script's own class given a wrong keyword: no library's version
    ("TypeError: MyTrainer.__init__() got an unexpected keyword argument 'tokenizer'\n", "import-name"),
    # ms-swift told to ignore them: a warning, and the run goes on
    ("[WARNING:swift] remaining_argv: ['--foo', '1']\n[INFO:swift] Start time of running main\n", "argparse-usage"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_answers_name_what_to_turn_off_or_install():
    compile_ = explain.explain("RuntimeError: Windows not yet supported for torch.compile\n")
    assert compile_.signature == "compile-unsupported" and "TORCHDYNAMO_DISABLE=1" in compile_.fix
    cc = explain.explain("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    assert "build-essential" in cc.fix and cc.restart_can_help is False
    half = explain.explain("RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half'\n")
    assert "CPU" in half.cause and "float32" in half.fix
