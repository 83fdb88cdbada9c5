"""Round 74 (issue 45): Megatron-LM's and Lightning's own refusals read from their sources (no new logs): for each
rule a second wording (another version's or caller's words of the same check), and near misses (text from the
same libraries with similar words and another meaning) that must not be read as it."""

import pytest

from dscluster import explain

TB = ('Traceback (most recent call last):\n  File "/workspace/train.py", line 12, in <module>\n    main()\n')


def sig(text: str) -> str | None:
    found = explain.explain(TB + text + "\n")
    return found.signature if found else None


SECOND = [
    # megatron/core/num_microbatches_calculator.py, the ramp-up calculator's words.
    ("megatron-global-batch", "AssertionError: current global batch size (96) is not divisible by micro_batch_size (4) "
                              "* data_parallel_size (16)"),
    # megatron/training/yaml_arguments.py and older arguments.py: sequence parallelism's wording (a RuntimeError there).
    ("megatron-cuda-max-connections", "RuntimeError: Using sequence parallelism requires setting the environment "
                                      "variable CUDA_DEVICE_MAX_CONNECTIONS to 1"),
    ("megatron-fsdp-max-connections", "AssertionError: FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large "
                                      "than one"),
    ("megatron-tp-overlap-sp", "[rank3]: AssertionError: Tensor parallel communication/GEMM overlap can happen only "
                               "when sequence parallelism is enabled"),
    ("megatron-cp-seq-length", "AssertionError: seq-length should be a multiple of 2 * context-parallel-size if "
                               "context-parallel-size > 1."),
    # yaml_arguments.py's copy of the same check.
    ("megatron-ep-experts", "[rank0]: AssertionError: Number of experts should be a multiple of expert model "
                            "parallel_size."),
    # validate_args's other requirement of the same option.
    ("megatron-overlap-param-gather", "AssertionError: Must use --overlap-param-gather with --overlap-grad-reduce"),
    ("megatron-max-position", "AssertionError: max_position_embeddings (4096) must be greater than or equal to "
                              "seq_length (8192)."),
    ("megatron-dist-ckpt-flag", "[rank0]: RuntimeError: Detected load from a distributed checkpoint, but neither "
                                "--use-dist-ckpt nor --auto-detect-ckpt-format is set."),
    # Megatron's validate_args: today's and the yaml path's world-size wording, read as the existing signature.
    ("world-size-indivisible", "AssertionError: world size (8) is not divisible by total_model_size "
                               "(total_model_size=16)"),
    ("world-size-indivisible", "AssertionError: world size (6) is not divisible by tensor parallel size (4) times "
                               "pipeline parallel size (1) times context parallel size (1)"),
    # Megatron core's TransformerConfig.__post_init__.
    ("tp-size-indivisible", "ValueError: num_attention_heads (28) must be a multiple of tensor_model_parallel_size "
                            "(8)."),
    ("tp-size-indivisible", "ValueError: num_query_groups (2) must be a multiple or divisor of "
                            "tensor_model_parallel_size (8)."),
    # Lightning's connector (pytorch/trainer and fabric), and the 1.x accelerator name.
    ("no-gpu", "lightning.fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your "
               "system since the accelerator is not available. The following accelerator(s) is available and can be "
               "passed into `accelerator` argument of `Trainer`: ['cpu']."),
    ("no-gpu", "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUAccelerator can not run on your "
               "system since the accelerator is not available. The following accelerator(s) is available and can be "
               "passed into `accelerator` argument of `Trainer`: ['cpu', 'tpu', 'ipu', 'hpu']."),
    # fabric/strategies/fsdp.py and xla_fsdp.py.
    ("lightning-fsdp-optimizer-params", "ValueError: The optimizer does not seem to reference any XLAFSDP parameters. "
                                        "HINT: Make sure to create the optimizer after setting up the model."),
    # strategies/deepspeed.py's older _init_optimizers.
    ("lightning-deepspeed-one-optimizer", "pytorch_lightning.utilities.exceptions.MisconfigurationException: DeepSpeed "
                                          "currently only supports single optimizer, single optional scheduler."),
    ("lightning-deepspeed-clip-value", "pytorch_lightning.utilities.exceptions.MisconfigurationException: DeepSpeed "
                                       "does not support clipping gradients by value."),
    ("lightning-deepspeed-cuda-only", "RuntimeError: The DeepSpeed strategy is only supported on CUDA GPUs but "
                                      "`MPSAccelerator` is used."),
    # fabric/connector.py's words.
    ("lightning-fork-platform", "ValueError: You selected `Fabric(strategy='ddp_notebook')` but process forking is not "
                                "supported on this platform. We recommend `Fabric(strategy='ddp_spawn')` instead."),
    ("lightning-fsdp-gpu-only", "ValueError: You selected the FSDP strategy but FSDP is only available on GPU. Set "
                                "`Fabric(accelerator='gpu', ...)` to continue or select a different strategy."),
]


@pytest.mark.parametrize(("name", "text"), SECOND)
def test_second_wording(name, text):
    assert sig(text) == name


NEAR = [
    # megatron/core/tensor_parallel/layers.py: a warning advising the same variable, not a refusal.
    ("megatron-cuda-max-connections", "UserWarning: When using sequence parallelism it is recommended to set the "
                                      "environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1 for maximum speedup"),
    # arguments.py validate_args's MoE overlap warning ("... requires setting ... to 1 to maximize the performance").
    ("megatron-cuda-max-connections", "WARNING: Using tensor/context model parallelism requires setting the environment "
                                      "variable CUDA_DEVICE_MAX_CONNECTIONS to 1 to maximize the performance."),
    # arguments.py: the eval batch's own check, another option.
    ("megatron-global-batch", "AssertionError: eval_global_batch_size (10) must be divisible by eval_micro_batch_size "
                              "(4) * data_parallel_size (2) * gtp_weight_remat_size (1)"),
    # arguments.py: --overlap-param-gather-with-optimizer-step's checks, another option.
    ("megatron-overlap-param-gather", "AssertionError: --overlap-param-gather-with-optimizer-step only supported with "
                                      "distributed optimizer"),
    ("megatron-overlap-param-gather", "AssertionError: Must use --overlap-param-gather-with-optimizer-step with "
                                      "--overlap-param-gather"),
    # transformer_config.py: gated delta net's head counts, not the tensor-parallel size.
    ("tp-size-indivisible", "AssertionError: linear_num_value_heads (12) must be a multiple of linear_num_key_heads "
                            "(8)."),
    # Lightning's connector for an MPS or TPU accelerator: not a missing GPU.
    ("no-gpu", "lightning.fabric.utilities.exceptions.MisconfigurationException: `MPSAccelerator` can not run on your "
               "system since the accelerator is not available."),
    # strategies/deepspeed.py's checkpoint refusal: another DeepSpeed refusal.
    ("lightning-deepspeed-one-optimizer", "lightning.fabric.utilities.exceptions.MisconfigurationException: DeepSpeed "
                                          "was unable to load the checkpoint. Ensure you passed in a DeepSpeed "
                                          "compatible checkpoint"),
    # the connector's MPS refusal of the DDP family: not FSDP, not forking.
    ("lightning-fsdp-gpu-only", "ValueError: You set `strategy=ddp` but strategies from the DDP family are not "
                                "supported on the MPS accelerator. Either explicitly set `accelerator='cpu'` or change "
                                "the strategy."),
]


@pytest.mark.parametrize(("name", "text"), NEAR)
def test_near_miss(name, text):
    assert sig(text) != name


@pytest.mark.parametrize("name", sorted({n for n, _ in SECOND} - {"world-size-indivisible", "tp-size-indivisible",
                                                                   "no-gpu"}))
def test_no_restart(name):
    text = next(t for n, t in SECOND if n == name)
    assert explain.explain(TB + text + "\n").retry is False
