"""Round 119's rules (issue 45), RL post-training run across several GPUs: torch_memory_saver's CUDA out of memory
(CUresult/cudaError 2) in the rollout engine of veRL's SGLang rollout (memory-saver-cuda-oom), TRL's CLI older than its
vllm-serve command (trl-vllm-serve-missing), and DeepSpeed ZeRO-3's defragment finding parameters of more than one
dtype (zero3-defragment-mixed-dtype). A second wording of each, in another version's or caller's words than the corpus
case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("memory-saver-cuda-oom", "trl-vllm-serve-missing", "zero3-defragment-mixed-dtype")


@pytest.mark.parametrize("text,expected", [
    # torch_memory_saver's CURESULT_CHECK today (csrc/utils.h: the code, cuGetErrorString's words, file/func/line),
    # behind a Ray actor prefix, before the peers' NCCL watchdog (the case was 0.0.5's "result=2" form)
    ("(WorkerDict pid=2782, ip=22.1.42.225) [torch_memory_saver.cpp] CUresult error: 2 (out of memory)  "
     "file=csrc/core.cpp func=malloc line=93\n"
     "(WorkerDict pid=2790) [rank1]:[E414 22:59:44.101 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective "
     "operation timeout: WorkNCCL(SeqNum=88, OpType=ALLGATHER, NumelIn=1, NumelOut=4, Timeout(ms)=600000) ran for "
     "600042 milliseconds before timing out.\n", "memory-saver-cuda-oom"),
    # its CUDA_ERROR_CHECK on resume (fzyzcjy/torch_memory_saver#99's words, SGLang's KV cache resumed under veRL)
    ("[torch_memory_saver.cpp] cuMemCreate CUDA_ERROR_OUT_OF_MEMORY (may not be an issue e.g. torch allocator will "
     "free cache and retry)\n"
     "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=172\n",
     "memory-saver-cuda-oom"),
    # zhaochenyang20/Awesome-ML-SYS-Tutorial#106: the 0.0.5 form, a 32B model served with TP=1 under veRL
    ("[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103\n",
     "memory-saver-cuda-oom"),
    # TRL's CLI on Python 3.12.8+/3.13 (argparse lists the choices unquoted), after a DeepSpeed accelerator line
    ("[2025-04-02 09:14:03,511] [INFO] [real_accelerator.py:239:get_accelerator] Setting ds_accelerator to cuda "
     "(auto detect)\nusage: trl\nTRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from chat, "
     "dpo, env, grpo, kto, sft)\n", "trl-vllm-serve-missing"),
    # DeepSpeed 0.9-0.16's defragment, a static method of stage3.py, then the bare AssertionError, under a rank prefix
    ("[rank3]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py\", line 525, in "
     "defragment\n[rank3]:     assert len(set(t.dtype for t in tensors)) == 1\n[rank3]: AssertionError\n",
     "zero3-defragment-mixed-dtype"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # fzyzcjy/torch_memory_saver#35: CUresult 1 (CUDA_ERROR_INVALID_VALUE) on resume, not memory
    ("[torch_memory_saver.cpp] CUresult error  result=1 file=csrc/torch_memory_saver.cpp func=resume line=214\n"
     "Child process unexpectedly failed with an exit code 256. pid=97721\n", "memory-saver-cuda-oom"),
    # its warning alone: torch's caching allocator frees its cache and retries (csrc/utils.h cu_mem_create)
    ("[torch_memory_saver.cpp] cuMemCreate CUDA_ERROR_OUT_OF_MEMORY (may not be an issue e.g. torch allocator will "
     "free cache and retry)\n", "memory-saver-cuda-oom"),
    # fzyzcjy/torch_memory_saver#9 (MI300, ROCm): hipError_t 2 from cu_mem_create was HIP's VMM size limit
    # (chunk-wise allocation, PR #14), not a full GPU
    ("[torch_memory_saver.cpp] hipError_t error  result=2 file=csrc/torch_memory_saver_hip.cpp func=cu_mem_create "
     "line=103\n", "memory-saver-cuda-oom"),
    # TRL's CLI refusing another command (a typo of a trainer's name): not the missing vllm-serve
    ("usage: trl\nTRL CLI: error: argument command: invalid choice: 'ppo' (choose from 'chat', 'dpo', 'env', "
     "'grpo', 'kto', 'sft', 'vllm-serve')\n", "trl-vllm-serve-missing"),
    # torchtune's CLI (argparse with prog "tune") refusing a subcommand
    ("usage: tune [-h] {download,ls,cp,run,validate,cat} ...\ntune: error: argument command: invalid choice: "
     "'vllm-serve' (choose from 'download', 'ls', 'cp', 'run', 'validate', 'cat')\n", "trl-vllm-serve-missing"),
    # defragment's next assert: the partitions on more than one device
    ("  File \"/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/zero/utils.py\", line 211, in defragment\n"
     "    assert len(set(t.device for t in tensors)) == 1\nAssertionError\n", "zero3-defragment-mixed-dtype"),
    # ZeRO-3's Init gathering a quantized module's parameters (runtime/utils.py get_only_unique_item): zero3-quantized-params
    ("RuntimeError: expected there to be only one unique element in <generator object "
     "Init._convert_to_deepspeed_param.<locals>.all_gather_coalesced.<locals>.<genexpr> at 0x7f3d2c1a5e40>\n",
     "zero3-defragment-mixed-dtype"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
