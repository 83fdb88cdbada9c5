"""Near misses of the rule tables, second review (session 25 of issue 45, src/dscluster/sigwords.py): rules the first
review (test_explain_nearmisses.py) did not cover whose words another component, or the script's own code, prints
with another meaning. Each must not get the rule's cause; the words of the component whose check names the cause
still do."""

import pytest
from explain_rounds import sig

from dscluster import explain

# What the corpus scores as generic (test_failure_corpus.GENERIC): the rank's own words, a signal, what others saw.
_GENERIC = explain.GENERIC | {"aborted", "segfault"}
_TB = "Traceback (most recent call last):\n"
_FATAL = ("fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n"
          "and the repository exists.\n")
# torch.utils.cpp_extension's warning before every JIT build that is given no arch list
_ARCH_WARNING = ("/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py:1967: UserWarning: "
                 "TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation. \n"
                 "If this is not desired, please set os.environ['TORCH_CUDA_ARCH_LIST'].\n  warnings.warn(\n")

NEAR_MISSES = [
    # ssh as git's transport (pip's git+ssh://, a clone in a setup script): no node's key, host key or address
    ("Collecting peft@ git+ssh://git@github.com/huggingface/peft.git\n  Running command git clone --filter=blob:none "
     "--quiet 'ssh://****@github.com/huggingface/peft.git' /tmp/pip-install-x/peft\n  git@github.com: Permission "
     "denied (publickey).\n  fatal: Could not read from remote repository.\n  error: subprocess-exited-with-error\n",
     "ssh-publickey"),
    ("Cloning into 'Megatron-LM'...\nHost key verification failed.\n" + _FATAL, "ssh-host-key"),
    # GitHub's RSA host key rotation (March 2023): ssh's banner for github.com, then git's fatal line
    ("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS "
     "CHANGED!     @\n@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\nIT IS POSSIBLE THAT SOMEONE IS "
     "DOING SOMETHING NASTY!\nOffending RSA key in /root/.ssh/known_hosts:1\nHost key for github.com has changed and "
     "you have requested strict checking.\nHost key verification failed.\n" + _FATAL, "ssh-host-key"),
    ("Cloning into 'LLaMA-Factory'...\nssh: connect to host github.com port 22: Connection timed out\n" + _FATAL,
     "ssh-unreachable"),
    ("+ git clone git@github.com:NVIDIA/apex.git\nCloning into 'apex'...\nssh: Could not resolve hostname github.com: "
     "Temporary failure in name resolution\nfatal: Could not read from remote repository.\n", "ssh-unreachable"),
    # torch's warning that no arch list is set, before a failure of another cause (a kill, a crash)
    (_ARCH_WARNING + "Building extension module fused_adam...\n[2024-05-02 10:00:00,000] [ERROR] [launch.py:321:"
     "sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with return code = -9\n", "cuda-arch-list"),
    (_ARCH_WARNING + "Segmentation fault (core dumped)\n", "cuda-arch-list"),
    # a package's own minimum version, not the host compiler's
    (_TB + '  File "/work/train.py", line 3, in <module>\n    import bitsandbytes\nImportError: The installed version '
     "of bitsandbytes (0.39.0) is less than the minimum required version (0.43.1)\n", "compiler-unsupported"),
    # the script's own `cd` (bash names the script), not the remote shell of a launcher
    ("run_pretrain.sh: line 12: cd: ../Megatron-LM: No such file or directory\n", "workdir-missing"),
    # the script's own torch.addmm of a 3-D tensor, not F.linear's under ZeRO-3
    (_TB + '  File "/work/mymodel.py", line 41, in forward\n    out = torch.addmm(self.bias, x, self.weight.t())\n'
     "RuntimeError: tensors must be 2-D\n", "zero3-param-partitioned"),
    # an array library without the dtype (CuPy's from_dlpack), not the GPU
    (_TB + '  File "/work/eval.py", line 52, in <module>\n    arr = cp.from_dlpack(logits)\n  File "cupy/_core/'
     'dlpack.pyx", line 333, in cupy._core.dlpack.from_dlpack\nNotImplementedError: CuPy does not support bfloat16 '
     "yet\n", "precision-unsupported"),
    # SageMaker's estimator: a launcher's two distribution modes, no ds_config
    (_TB + '  File "/work/launch_job.py", line 30, in <module>\n    est.fit(inputs)\nValueError: \'ddp\' and '
     "'horovod' cannot be simultaneously enabled.\n", "ds-config-invalid"),
]


@pytest.mark.parametrize("text,not_expected", NEAR_MISSES)
def test_a_near_miss_gets_no_specific_wrong_cause(text, not_expected):
    found = sig(text)
    assert found != not_expected
    assert found in _GENERIC, found


@pytest.mark.parametrize("text,expected", [
    # pdsh's ssh to a node (its prefix), ssh's own lines without git's
    ("pdsh@node0: node1: ssh exited with exit code 255\nnode1: trainer@node1: Permission denied (publickey,password).\n",
     "ssh-publickey"),
    ("gpu2: Host key verification failed.\npdsh@gpu1: gpu2: ssh exited with exit code 255\n", "ssh-host-key"),
    ("@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key for 10.0.0.12 has changed and you have "
     "requested strict checking.\nHost key verification failed.\n", "ssh-host-key"),
    ("pdsh@node1: node3: ssh: connect to host node3 port 22: No route to host\n", "ssh-unreachable"),
    ("ssh: Could not resolve hostname gpu-07: Name or service not known\n", "ssh-unreachable"),
    # DeepSpeed's op builder given an arch with a suffix
    ("[rank0]: ValueError: invalid literal for int() with base 10: '0a'\n", "cuda-arch-list"),
    ("export TORCH_CUDA_ARCH_LIST='8.0;9.0a'\n" + _TB + '  File "/opt/venv/lib/python3.11/site-packages/deepspeed/ops/'
     'op_builder/builder.py", line 612, in compute_capability_args\n    cc_major, cc_minor = int(cc[0]), int(cc[1])\n'
     "ValueError: invalid literal for int() with base 10: '0a'\n", "cuda-arch-list"),
    # torch's check of the host compiler against CUDA (clang++ absent reads 0.0.0)
    ("RuntimeError: The current installed version of clang++ (0.0.0) is less than the minimum required version by "
     "CUDA 13.0 (7.0). Please make sure to use an adequate version of clang++ (>=7.0, <21.0).\n",
     "compiler-unsupported"),
    # the remote shell of a launcher: bash before 5.1 (line 0) and after (line 1)
    ("10.0.0.13: bash: line 1: cd: /home/u/proj: No such file or directory\n", "workdir-missing"),
    # F.linear under ZeRO-3 with rank prefixes, and the bare line
    ("[rank1]:   File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 1848, in linear\n"
     "[rank1]:     ret = torch.addmm(bias, input, weight.t())\n[rank1]: RuntimeError: tensors must be 2-D\n",
     "zero3-param-partitioned"),
    ("RuntimeError: tensors must be 2-D\n", "zero3-param-partitioned"),
    # torch's autocast on a GPU without bf16, and a script's own check of the device
    ("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n",
     "precision-unsupported"),
    ("ValueError: GPU does not support bfloat16, please use a GPU that supports bfloat16.\n", "precision-unsupported"),
    # DeepSpeed's config check of both precisions
    ("AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled\n", "ds-config-invalid"),
])
def test_the_components_own_words_still_name_the_cause(text, expected):
    assert sig(text) == expected
