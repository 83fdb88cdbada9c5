"""Round 37's rules (issue 45), from compilation in training (sigcompile.py): Triton's ptxas refusing a GPU's
architecture, Triton's file cache raced by several ranks, TorchDynamo's recompile limit under fullgraph=True,
xFormers' dispatcher when its CUDA build is missing or an attention bias is misaligned, and a Triton kernel image the
driver refuses: a second wording of each, in another version's or another caller's words than the corpus case it was
written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigcompile import COMPILE_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # Triton 3.x's RuntimeError form inside a rank's prefixed traceback, for a B200 (sm_100)
    ("[rank6]:     raise RuntimeError(f'Internal Triton PTX codegen error: \\n{log}')\n"
     "[rank6]: RuntimeError: Internal Triton PTX codegen error:\n"
     "[rank6]: ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'\n", "triton-ptxas-arch"),
    # Inductor's NoTritonConfigsError around Triton 3.6's ptxas-blackwell
    ("torch._inductor.runtime.triton_heuristics.NoTritonConfigsError: No valid triton configs. PTXASError: PTXAS error: "
     "Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'\n", "triton-ptxas-arch"),
    # a vLLM worker's cache file name with a uuid after the pid (Triton 2.3's writer)
    ("FileNotFoundError: [Errno 2] No such file or directory: '/home/vllm/.triton/cache/1feb415f3280ca46eea8c4407a58c23e/"
     "fused_moe_kernel.json.tmp.pid_72_c0a0033e-6147-4520-ae3a-3847d02598f8'\n", "triton-cache-race"),
    # torch 2.5's exception name and one_graph wording
    ("torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with one_graph=True. Excessive "
     "recompilations can degrade performance\n", "dynamo-recompile-limit"),
    # the dispatcher's reason for a CPU-only xFormers build, in the backward direction
    ("NotImplementedError: No operator found for `memory_efficient_attention_backward` with inputs:\n"
     "`cutlassB` is not supported because:\n    xFormers wasn't build with CUDA support\n", "xformers-ext-unavailable"),
    # the HINT alone, another sequence length
    ("    HINT: To use an `attn_bias` with a sequence length that is not a multiple of 8, you need to ensure memory is "
     "aligned by slicing a bigger tensor.\n", "xformers-no-operator"),
    # Triton's driver error outside Inductor (a kernel launched by a library)
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n", "triton-image-invalid"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # nvcc's own ptxas dropping an old architecture in a CMake build: not Triton's
    ("    /usr/bin/nvcc     -x cu -c main.cu -o main.cu.o\n"
     "    ptxas fatal   : Value 'sm_30' is not defined for option 'gpu-name'\n", "triton-ptxas-arch"),
    # a checkpoint's staging rename (transformers), not Triton's cache
    ("FileNotFoundError: [Errno 2] No such file or directory: 'model/tmp-checkpoint-49' -> 'model/checkpoint-49'\n",
     "triton-cache-race"),
    # Dynamo's warning alone: without fullgraph it falls back to eager and the run goes on
    ("W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit config.recompile_limit "
     "(8)\n", "dynamo-recompile-limit"),
    # xFormers' dispatcher with reasons about dtype only: no build and no bias named
    ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
     "     query       : shape=(1, 1024, 8, 128) (torch.float32)\n", "xformers-no-operator"),
    ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
     "     query       : shape=(1, 1024, 8, 128) (torch.float32)\n", "xformers-ext-unavailable"),
    # torch's own kernel-image error is another signature's
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n", "triton-image-invalid"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in COMPILE_SIGNATURES:
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH
