"""Review 145: broad signatures whose answer misled on unseen logs this session (cuda-oom for an out-of-memory at the
save, undefined-symbol for an op built without its sources, ds-incompatible for a single-GPU library), and where a
traceback shows *where* an out-of-memory happened in a way that changes the cause and the fix.
- The Hugging Face Trainer's evaluation: an out-of-memory raised in transformers' trainer_pt_utils.py nested_concat /
  torch_pad_and_concatenate (the predictions of every evaluation batch kept on the GPU, huggingface/transformers#17089
  "CUDA out of memory in evaluation_loop", #7158) is read as hf-eval-preds-gpu-oom (sigmemory.py): its fix is
  eval_accumulation_steps / preprocess_logits_for_metrics, not a smaller training batch. The evaluation's other frames
  (accelerate's pad_across_processes of one batch, modelscope/ms-swift#3399; the batch's own forward) stay cuda-oom.
- The save: the FSDP clone warning already has its rule (round 135). A bare traceback in state_dict / save_model does
  not tell a gather of whole weights on the GPU from bitsandbytes 0.38's 8-bit state_dict (bitsandbytes#324,
  huggingface/peft#335, Facico/Chinese-Vicuna#147: an older bitsandbytes fixed it), so no narrower rule was written;
  cuda-oom's text now names both, and its fix the CPU gather. An out-of-memory in ZeRO-3's optimizer step in a thread
  about saving (hiyouga/LlamaFactory#7532) is no save: the frames, not the thread's title, decide.
No corpus case or explain log changed its answer."""

from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

# Second wording: transformers 4.41+'s EvalLoopContainer.add -> nested_concat -> torch_pad_and_concatenate's torch.cat
# (trainer_pt_utils.py's own lines), a torchrun rank's prefix, torch 2.4+'s OutOfMemoryError wording.
_EVAL_CONTAINER = (
    '[rank0]:   File "/usr/lib/python3.10/site-packages/transformers/trainer.py", line 4198, in evaluation_loop\n'
    "[rank0]:     all_preds.add(logits)\n"
    '[rank0]:   File "/usr/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 322, in add\n'
    "[rank0]:     self.tensors = nested_concat(self.tensors, tensors, padding_index=self.padding_index)\n"
    '[rank0]:   File "/usr/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 131, in nested_concat\n'
    "[rank0]:     return torch_pad_and_concatenate(tensors, new_tensors, padding_index=padding_index)\n"
    '[rank0]:   File "/usr/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 90, in '
    "torch_pad_and_concatenate\n"
    "[rank0]:     return torch.cat((tensor1, tensor2), dim=0)\n"
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.69 GiB. GPU 0 has a total capacity of "
    "79.10 GiB of which 3.12 GiB is free.\n")


def test_eval_prediction_concat_oom_is_the_accumulated_predictions():
    exp = explain.explain(_EVAL_CONTAINER)
    assert exp.signature == "hf-eval-preds-gpu-oom" and not exp.retry
    assert "eval_accumulation_steps" in exp.fix and "preprocess_logits_for_metrics" in exp.fix
    assert exp.cause in FAILURES_ZH and exp.fix in FAILURES_ZH


# IPython's frame form (File PATH:LINE, in FUNC(ARGS)), as a notebook's trainer.evaluate() prints it.
_EVAL_NOTEBOOK = (
    "File /usr/local/lib/python3.8/dist-packages/transformers/trainer_pt_utils.py:84, in torch_pad_and_concatenate"
    "(tensor1, tensor2, padding_index)\n"
    "     81 new_shape = (tensor1.shape[0] + tensor2.shape[0], max(tensor1.shape[1], tensor2.shape[1])) + "
    "tensor1.shape[2:]\n"
    "     83 # Now let's fill the result tensor\n"
    "---> 84 result = tensor1.new_full(new_shape, padding_index)\n"
    "     85 result[: tensor1.shape[0], : tensor1.shape[1]] = tensor1\n"
    "\n"
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 9.18 GiB (GPU 0; 22.20 GiB total capacity; 12.01 GiB "
    "already allocated; 8.61 GiB free; 12.07 GiB reserved in total by PyTorch)\n")


def test_eval_prediction_concat_oom_in_a_notebook():
    assert sig(_EVAL_NOTEBOOK) == "hf-eval-preds-gpu-oom"


# modelscope/ms-swift#3399 (its traceback's last frames as posted; the error line its title's words): the Trainer's
# evaluation padding one batch's logits across processes (accelerate), no accumulated predictions: a smaller
# per_device_eval_batch_size is the remedy there, so it stays cuda-oom.
_SWIFT_3399 = (
    '  File "/root/miniconda3/envs/Finetune/lib/python3.10/site-packages/transformers/trainer.py", line 4327, in '
    "evaluation_loop\n"
    "    logits = self.accelerator.pad_across_processes(logits, dim=1, pad_index=-100)\n"
    '  File "/root/miniconda3/envs/Finetune/lib/python3.10/site-packages/accelerate/accelerator.py", line 2683, in '
    "pad_across_processes\n"
    "    return pad_across_processes(tensor, dim=dim, pad_index=pad_index, pad_first=pad_first)\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory.\n")


def test_eval_padding_of_one_batch_stays_cuda_oom():
    assert sig(_SWIFT_3399) == "cuda-oom"


# A nested_concat frame followed by another file's frame: the out-of-memory is not in the concatenation (a frame of the
# model's forward after it, as a custom prediction_step calling the model from inside a patched nested_concat would
# show): must not be read as the accumulated predictions.
_CONCAT_THEN_FORWARD = (
    '  File "/venv/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 97, in nested_concat\n'
    "    return type(tensors)(nested_concat(t, n, padding_index=padding_index) for t, n in zip(tensors, new_tensors))\n"
    '  File "/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    "    return forward_call(*args, **kwargs)\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity)\n")


def test_another_frame_after_the_concat_is_not_the_concat():
    assert sig(_CONCAT_THEN_FORWARD) == "cuda-oom"


# mhamilton723/STEGO#1 (verbatim): an evaluation script's own torch.cat of its outputs running out of *host* memory
# (the CPU allocator): neither the Trainer's frames nor a GPU.
_STEGO_1 = (
    "Traceback (most recent call last):\n"
    '  File "eval_segmentation.py", line 144, in my_app\n'
    "    outputs = {k: torch.cat(v, dim=0) for k, v in outputs.items()}\n"
    '  File "eval_segmentation.py", line 144, in <dictcomp>\n'
    "    outputs = {k: torch.cat(v, dim=0) for k, v in outputs.items()}\n"
    "RuntimeError: [enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate memory: you tried to "
    "allocate 24053760000 bytes. Error code 12 (Cannot allocate memory)\n")


def test_host_memory_concat_is_no_gpu_eval_oom():
    assert sig(_STEGO_1) not in {"hf-eval-preds-gpu-oom", "cuda-oom"}


# hiyouga/LlamaFactory#7532 (verbatim lines): a thread titled "... saving checkpoint fails", whose traceback ends in
# ZeRO-3's optimizer step: the frames say training, so the plain out-of-memory, not a save.
_LLAMAFACTORY_7532 = (
    '  File "/root/anaconda3/envs/llama-factory/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line '
    "947, in _optimizer_step\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.39 GiB. GPU 1 has a total capacity of 79.32 "
    "GiB of which 2.40 GiB is free. Process 105400 has 76.92 GiB memory in use. Of the allocated memory 73.28 GiB is "
    "allocated by PyTorch, and 1.59 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
    "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
    "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


def test_optimizer_step_oom_in_a_save_thread_stays_cuda_oom():
    assert sig(_LLAMAFACTORY_7532) == "cuda-oom"


# huggingface/peft#335 (verbatim): an out-of-memory at the save after training, caused by bitsandbytes 0.38's 8-bit
# state_dict (pacman100; an older bitsandbytes fixed it): the text cannot tell it from a gather on the GPU, so the
# plain out-of-memory, whose text now names both the save's gather and bitsandbytes 0.38.
_PEFT_335 = (
    "2023-04-18 20:39:29.054 | INFO     | __main__:savemodel:34 - Error saving model: CUDA out of memory. Tried to "
    "allocate 16.00 MiB (GPU 0; 10.00 GiB total capacity; 9.03 GiB already allocated; 0 bytes free; 9.27 GiB reserved "
    "in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
    "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n")


def test_save_oom_names_the_gather_and_bitsandbytes():
    exp = explain.explain(_PEFT_335)
    assert exp.signature == "cuda-oom"
    assert "save" in exp.cause and "bitsandbytes 0.38" in exp.cause
    assert "offload_to_cpu=True" in exp.fix and "stage3_gather_16bit_weights_on_model_save" in exp.fix
    assert exp.cause in FAILURES_ZH and exp.fix in FAILURES_ZH
