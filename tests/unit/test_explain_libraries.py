"""The libraries' own user-facing messages (siglibs.py, issue 45), written from their sources before a log showed
them: for each family a realistic log in another wording or version than tests/data/explain/<name>.log, and a near
miss (a message that shares words with it but names another cause) that must not be read as it."""

import pytest

from dscluster import explain
from dscluster.sigaccelerate import ACCELERATE_SIGNATURES
from dscluster.siglibs import LIBRARY_SIGNATURES
from dscluster.sigprocess import PROCESS_SIGNATURES

TB = ("Traceback (most recent call last):\n  File \"/home/u/train.py\", line 120, in <module>\n    main()\n"
      "  File \"/home/u/train.py\", line 88, in main\n    trainer.train()\n")
KILL = "[2024-05-01 10:00:00,000] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 1234\n"


def sig(text: str) -> str | None:
    found = explain.explain(text)
    return found.signature if found else None


MATCH = {
    "pg-not-initialized": "AssertionError: Default process group is not initialized\n",
    "pg-initialized-twice": "RuntimeError: trying to initialize the default process group twice!\n",
    "all-gather-list-length": ("ValueError: Tensor list input to scatter/gather must match number of collective "
                               "participants but got 2 inputs with world_size 4 and 1 devices.\n"),
    "collective-cpu-tensor": "[rank0]: RuntimeError: Tensors must be CUDA and dense\n",
    "dtype-mismatch": "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should "
                      "be the same\n",
    # older torch's lerp_cuda (aten/src/ATen/native/cuda/Lerp.cu): a float64 state against a float32 gradient
    "optimizer-state-dtype": "RuntimeError: expected dtype double for `end` but got dtype float\n",
    "ckpt-weights-only": "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` "
                         "set to `False` will likely succeed.\n WeightsUnpickler error: Unsupported global: GLOBAL "
                         "numpy.core.multiarray._reconstruct was not an allowed global by default.\n",
    "cuda-fork": "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
                 "must use the 'spawn' start method\n",
    "loss-no-grad": "[rank1]: RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n",
    "autograd-inplace": "RuntimeError: one of the variables needed for gradient computation has been modified by an "
                        "inplace operation: [torch.cuda.FloatTensor [1, 4096]], which is output 0 of AsStridedBackward0,"
                        " is at version 2; expected version 1 instead.\n",
    "backward-twice": "RuntimeError: Trying to backward through the graph a second time, but the saved intermediate "
                      "results have already been freed. Specify retain_graph=True when calling backward the first "
                      "time.\n",
    "quantized-model-placement": "ValueError: You can't train a model that has been loaded with `device_map='auto'` in any "
                            "distributed mode. Please rerun your script specifying `--num_processes=1`.\n",
    "pad-token-missing": "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a "
                         "token to use as `pad_token`\n",
    "batch-unpadded": "ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
                      "'padding=True' 'truncation=True' to have batched tensors with the same length.\n",
    "optimizer-empty-params": "  File \"/x/torch/optim/optimizer.py\", line 261, in __init__\n"
                              "    raise ValueError(\"optimizer got an empty parameter list\")\n"
                              "ValueError: optimizer got an empty parameter list\n",
    "zero-grad-twice": "AssertionError: The parameter 255 has already been reduced. Gradient computed twice for this "
                       "partition. Multiple gradient reduction is currently not supported\n",
    "meta-tensor": "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
                   "instead of torch.nn.Module.to() when moving module from meta to a different device.\n",
    "trainer-no-loss": "ValueError: The model did not return a loss from the inputs, only the following keys: logits. "
                       "For reference, the inputs it received are input_ids,attention_mask.\n",
    "zero3-param-partitioned": "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
                               "RuntimeError: 'weight' must be 2-D\n",
    "best-model-strategy": "ValueError: --load_best_model_at_end requires the saving steps to be a round multiple of "
                           "the evaluation steps, but found 500, which is not a round multiple of 200.\n",
    "flash-attn-dtype": "RuntimeError: FlashAttention only support fp16 and bf16 data type\n",
    "flash-varlen-cu-seqlens": "RuntimeError: cu_seqlens_k must have shape (batch_size + 1)\n",
    "collective-mismatch": "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective:"
                           " CollectiveFingerPrint(SequenceNumber=12, OpType=BARRIER)\n",
    "zero-ckpt-dir": "FileNotFoundError: can't find *_optim_states.pt files in directory "
                     "'/ckpt/checkpoint-500/global_step500'\n",
    "lora-target-modules": "ValueError: Target modules {'c_attn'} not found in the base model. Please check the target "
                           "modules and try again.\n",
    "ckpt-cuda-on-cpu": "RuntimeError: Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() "
                        "is 1. Please use torch.load with map_location to map your storages to an existing device.\n",
    "embedding-index": "  File \"/x/torch/nn/functional.py\", line 2233, in embedding\n"
                       "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
                       "IndexError: index out of range in self\n",
    # round 162 (transformers 4.x words): a speech model's input under another key; 4.x's gradient checkpointing
    "trainer-columns-removed": ('  File "/opt/venv/lib/python3.10/site-packages/transformers/trainer.py", line 3612, '
                                "in compute_loss\n    outputs = model(**inputs)\n"
                                '  File "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1553, '
                                "in _call_impl\n    return forward_call(*args, **kwargs)\n"
                                "TypeError: forward() missing 1 required positional argument: 'input_values'\n"),
    "gradient-checkpointing-unsupported": "ValueError: MPTForCausalLM does not support gradient checkpointing.\n",
    "resume-no-checkpoint": "ValueError: No valid checkpoint found in output directory (/scratch/out)\n",
    "accelerate-resume-no-checkpoint": "ValueError: Tried to find ~/runs/ckpt/best but folder does not exist\n",
    "accelerate-state-reinit": ("ValueError: AcceleratorState has already been initialized and cannot be changed, restart "
                                "your runtime completely and pass `mixed_precision='fp16'` to `Accelerator()`.\n"),
    # round 188: accelerate 0.20's words (no backticks around the names) as a multi-GPU launch prints them
    "accelerate-accumulation-steps-and-plugin": ("[rank2]: ValueError: You can only pass one of gradient_accumulation_steps "
                                                 "and gradient_accumulation_plugin. Please only pass in the created "
                                                 "GradientAccumulationPlugin object.\n"),
    "accelerate-world-of-one": ('  File "/opt/venv/lib/python3.11/site-packages/accelerate/accelerator.py", line 2154, in '
                                "_prepare_deepspeed\n    engine, optimizer, _, lr_scheduler = ds_initialize(**kwargs)\n"
                                "AssertionError: Check batch related parameters. train_batch_size is not equal to "
                                "micro_batch_per_gpu * gradient_acc_step * world_size 24 != 8 * 3 * 8\n"),
    # round 167 (test_explain_round167.py has more): a transformer block's projection, torch 2.x; a 2-D (segmentation)
    # target; torch 2.x's older CPU words under nll_loss's frame; a worker's collate of images
    "linear-shape-mismatch": "RuntimeError: mat1 and mat2 shapes cannot be multiplied (512x1024 and 768x3072)\n",
    "loss-target-out-of-bounds": "IndexError: Target 21 is out of bounds.\n",
    "loss-target-dtype": ('  File "/env/lib/python3.9/site-packages/torch/nn/functional.py", line 2671, in nll_loss\n'
                          "    return torch._C._nn.nll_loss_nd(input, target, weight, _Reduction.get_enum(reduction), "
                          "ignore_index)\nRuntimeError: expected scalar type Long but found Double\n"),
    "collate-unequal-size": ('  File "/env/lib/python3.9/site-packages/torch/utils/data/_utils/collate.py", line 56, '
                             "in default_collate\n    return torch.stack(batch, 0, out=out)\nRuntimeError: stack "
                             "expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [3, 256, 256] "
                             "at entry 5\n"),
    # round 175: CPython's multiprocessing and concurrent.futures, other versions' frames
    "mp-start-method-twice": "  File \"/usr/lib/python3.9/multiprocessing/context.py\", line 243, in set_start_method\n"
                             "RuntimeError: context has already been set\n",
    "process-pool-broken": ("concurrent.futures.process.BrokenProcessPool: A child process terminated abruptly, the "
                            "process pool is not usable anymore\n"),
    "pool-unpicklable": ('  File "/usr/lib/python3.9/multiprocessing/reduction.py", line 51, in dumps\n'
                         "    cls(buf, protocol).dump(obj)\n_pickle.PicklingError: Can't pickle <function <lambda> at "
                         "0x7f00>: attribute lookup <lambda> on __main__ failed\n"),
    # round 186: a queued tensor whose producer had exited, torch 2.1's frame and Python 3.10's words
    "mp-queue-producer-exited": ('  File "/env/lib/python3.10/site-packages/torch/multiprocessing/reductions.py", line '
                                 "307, in rebuild_storage_fd\n    fd = df.detach()\n"
                                 '  File "/usr/lib/python3.10/multiprocessing/resource_sharer.py", line 86, in '
                                 "get_connection\n    c = Client(address, authkey=process.current_process().authkey)\n"
                                 "ConnectionRefusedError: [Errno 111] Connection refused\n"),
    # round 183: CPython's import system in other versions' words; transformers' and Python 3.10's
    "module-shadowed": ('  File "/home/u/copy.py", line 1, in <module>\n    import copy\n'
                        '  File "/home/u/copy.py", line 4, in <module>\n    cfg2 = copy.deepcopy(cfg)\n'
                        "AttributeError: partially initialized module 'copy' has no attribute 'deepcopy' (most likely "
                        "due to a circular import)\n"),
    "circular-import": ("ImportError: cannot import name 'Block' from partially initialized module 'models.layers' "
                        "(most likely due to a circular import) (C:\\Users\\u\\proj\\models\\layers.py)\n"),
    "import-unknown-location": "ImportError: cannot import name 'load_dataset' from 'datasets' (unknown location)\n",
    "optional-dependency-missing": ("ImportError: \nBertJapaneseTokenizer requires the fugashi library but it was not "
                                    "found in your environment. You can install it with pip\n"),
    "fstring-newer-python": ('  File "/home/u/log.py", line 3\n    print(f\'{row[\'loss\']:.3f}\')\n'
                             "                  ^\nSyntaxError: f-string: unmatched '['\n"),  # Python 3.9's one caret
}

NEAR = {
    # another distributed error that names the launcher's variables, not a missing init call
    "pg-initialized-twice": "ValueError: Default process group has not been initialized, please make sure to call "
                            "init_process_group.\n",
    "all-gather-list-length": ("RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected "
                               "CPUFloatType, got CPULongType)\n"),
    "pg-not-initialized": "ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
                          "variable RANK expected, but not set\n",
    # a device mismatch between the CPU and a GPU is no dtype mismatch (and no collective on a CPU tensor)
    "dtype-mismatch": "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be "
                      "the same or input should be a MKLDNN tensor and weight is a dense tensor\n",
    "optimizer-state-dtype": "RuntimeError: expected dtype float for `weights` but got dtype c10::Half\n",
    "collective-cpu-tensor": "RuntimeError: Expected all tensors to be on the same device, but found at least two "
                             "devices, cuda:0 and cpu!\n",
    # a corrupt file read by the weights-only loader is no refused global
    "ckpt-weights-only": "_pickle.UnpicklingError: invalid load key, 'v'.\n",
    "cuda-fork": "RuntimeError: CUDA error: initialization error\n",
    "loss-no-grad": "RuntimeError: element 0 of tensors is not a Tensor\n",
    "autograd-inplace": "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n",
    "backward-twice": "RuntimeError: Expected to mark a variable ready only once.\n",
    "quantized-model-placement": "ValueError: You can't pass `load_in_4bit`or `load_in_8bit` as a kwarg when passing "
                            "`quantization_config` argument at the same time.\n",
    "pad-token-missing": "Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.\n"
                         "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    "batch-unpadded": "ValueError: Unable to create tensor returning overflowing tokens of different lengths. Please "
                      "see if a fast version of this tokenizer is available.\n",
    "optimizer-empty-params": "ValueError: some parameters appear in more than one parameter group\n",
    "zero-grad-twice": "AssertionError: The parameter 10 has not been reduced\n",
    "meta-tensor": "RuntimeError: Tensor on device meta is not on the expected device cuda:0!\n",
    "trainer-no-loss": "ValueError: The model did not return a logits from the inputs\n",
    "zero3-param-partitioned": "RuntimeError: 'weight' must be 4-dimensional\n",
    "best-model-strategy": "ValueError: --metric_for_best_model must be set when --load_best_model_at_end\n",
    "flash-varlen-cu-seqlens": "RuntimeError: cu_seqlens_q must have dtype int32\n",
    "flash-attn-dtype": "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following "
                        "error: the package flash_attn seems to be not installed.\n",
    "collective-mismatch": "RuntimeError: Detected mismatch between the loaded state dict and the model\n",
    "zero-ckpt-dir": "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/latest'\n",
    "lora-target-modules": "ValueError: Please specify `target_modules` in `peft_config`\n",
    "ckpt-cuda-on-cpu": "RuntimeError: Attempting to deserialize object on CPU but the file was saved on a GPU\n",
    "embedding-index": "IndexError: list index out of range\n",
    # round 162: the script's own call of its model (no Trainer compute_loss frame); mmagic's assertion; a named
    # checkpoint missing its trainer_state.json (not get_last_checkpoint)
    "trainer-columns-removed": "TypeError: forward() missing 1 required positional argument: 'x'\n",
    "gradient-checkpointing-unsupported": "AssertionError: KandinskyV3 does not support gradient checkpointing.\n",
    "resume-no-checkpoint": "FileNotFoundError: [Errno 2] No such file or directory: "
                            "'out/checkpoint-500/trainer_state.json'\n",
    # accelerate's own save_state(): a checkpoint folder left by an earlier run, not a missing one
    "accelerate-resume-no-checkpoint": ("ValueError: Checkpoint directory runs/x/checkpoints/checkpoint_0 (0) already "
                                        "exists. Please manually override `self.save_iteration` with what iteration to "
                                        "start with.\n"),
    "accelerate-state-reinit": ("NotImplementedError: You cannot pass in a `deepspeed_plugin` when creating a second "
                                "`Accelerator`. Please make sure the first `Accelerator` is initialized with all the "
                                "plugins you want to use.\n"),
    # round 188: Lightning's refusal of the accumulation steps in a ds_config: the steps given twice, not to Accelerate
    "accelerate-accumulation-steps-and-plugin": ("lightning_fabric.utilities.exceptions.MisconfigurationException: Do not "
                                                 "set `gradient_accumulation_steps` in the DeepSpeed config as this will "
                                                 "be set with the `accumulate_grad_batches` argument passed via the "
                                                 "Lightning Trainer.\n"),
    # the batch numbers that do not add up without accelerate in the traceback: DeepSpeed's own check
    "accelerate-world-of-one": ("AssertionError: Check batch related parameters. train_batch_size is not equal to "
                                "micro_batch_per_gpu * gradient_acc_step * world_size 24 != 8 * 3 * 8\n"),
    # round 167: a broadcast's shapes; a plain index; half-precision inputs under a Linear; the script's own stack
    "linear-shape-mismatch": "RuntimeError: The size of tensor a (1024) must match the size of tensor b (768) at "
                             "non-singleton dimension 2\n",
    "loss-target-out-of-bounds": "IndexError: index 21 is out of bounds for dimension 1 with size 21\n",
    "loss-target-dtype": ('  File "/env/lib/python3.9/site-packages/torch/nn/modules/linear.py", line 114, in forward\n'
                          "    return F.linear(input, self.weight, self.bias)\n"
                          "RuntimeError: expected scalar type BFloat16 but found Float\n"),
    "collate-unequal-size": ('  File "/home/u/model.py", line 40, in forward\n    x = torch.stack(feats)\n'
                             "RuntimeError: stack expects each tensor to be equal size, but got [8, 3] at entry 0 and "
                             "[8, 4] at entry 1\n"),
    # round 175: a context of another component; loky's own worker death; torch.save pickling a lambda
    "mp-start-method-twice": "ValueError: the global context has already been set for this run\n",
    "process-pool-broken": "concurrent.futures.process.BrokenProcessPool: A process in the initializer failed\n",
    "pool-unpicklable": ('  File "/env/lib/python3.11/site-packages/torch/serialization.py", line 881, in _save\n'
                         "    pickler.dump(obj)\nAttributeError: Can't pickle local object 'f.<locals>.<lambda>'\n"),
    # round 186: a Queue's descriptor exchange refused under the sending side (reduction.py's DupFd), not a rebuild
    "mp-queue-producer-exited": ('  File "/usr/lib/python3.10/multiprocessing/resource_sharer.py", line 86, in '
                                 "get_connection\n    c = Client(address, authkey=process.current_process().authkey)\n"
                                 "FileNotFoundError: [Errno 2] No such file or directory\n"),
    # round 183: an installed package's own names, a genuine f-string typo, a version too old
    "module-shadowed": "AttributeError: module 'torch' has no attribute 'compiler'\n",
    "circular-import": ('  File "/opt/conda/lib/python3.10/site-packages/cv2/__init__.py", line 181, in <module>\n'
                        "    bootstrap()\nAttributeError: partially initialized module 'cv2' has no attribute "
                        "'_registerMatType' (most likely due to a circular import)\n"),
    "import-unknown-location": "ImportError: cannot import name 'pairwise' from 'itertools' (unknown location)\n",
    "optional-dependency-missing": ("ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
                                    "`pip install 'accelerate>=0.26.0'`\n"),
    "fstring-newer-python": ('  File "/home/u/log.py", line 3\n    print(f"{row[0}")\n'
                             "                    ^\nSyntaxError: f-string: closing parenthesis '}' does not match "
                             "opening parenthesis '['\n"),
}


def test_every_family_has_a_second_wording_and_a_near_miss():
    # Three of these families were written from round 15's logs first (sigtraining.py): tested here with these wordings too.
    names = {s.name for s in (*LIBRARY_SIGNATURES, *PROCESS_SIGNATURES, *ACCELERATE_SIGNATURES)} | {"cuda-fork", "collective-mismatch", "quantized-model-placement"}
    assert set(MATCH) == names and set(NEAR) == names


@pytest.mark.parametrize("name", sorted(MATCH))
def test_the_librarys_own_words_name_the_cause(name):
    found = explain.explain(TB + MATCH[name] + KILL)
    assert found is not None and found.signature == name, found
    assert found.retry is False and found.cause and found.fix


@pytest.mark.parametrize("name", sorted(NEAR))
def test_a_near_miss_is_not_read_as_it(name):
    assert sig(TB + NEAR[name] + KILL) != name


def test_precedence_is_kept():
    # a ZeRO combination DeepSpeed refuses stays ds-incompatible; a CPU/GPU mix stays device-mismatch
    assert sig(TB + "ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing a "
               "`device_map`.\n") == "ds-incompatible"
    assert sig(TB + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
               "cuda:0 and cpu!\n") == "device-mismatch"
    # the out-of-memory of the first failing rank wins over what another rank printed later
    assert sig("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
               "[rank0]: RuntimeError: Tensors must be CUDA and dense\n") == "cuda-oom"


@pytest.mark.parametrize("message", [
    "ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
    "(`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices (with IPEX).",
    "ValueError: Mixed precision training with AMP or APEX (`--fp16` or `--bf16`) and half precision evaluation "
    "(`--fp16_full_eval` or `--bf16_full_eval`) can only be used on CUDA devices.",
    "ValueError: fp16 mixed precision requires a GPU (not 'mps').",
])
def test_fp16_asked_of_a_process_without_a_gpu_is_no_gpu(message):
    # transformers' TrainingArguments and accelerate check the device before any kernel runs
    found = explain.explain(TB + message + "\n")
    assert found is not None and found.signature == "no-gpu" and found.retry is False
