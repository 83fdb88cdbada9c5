"""Round 120's rules (issue 45), from compilation at run time in multi-node training: Triton's kernel cache on a network
file system shared by the nodes (glibc's dlopen words, elf/dl-load.c, or Python's ESTALE OSError, on a file under
~/.triton/cache, a TRITON_CACHE_DIR named for it, or Inductor's torchinductor_<user>/triton), and Dynamo refusing a
module FSDP wrapped with use_orig_params=False (torch/_dynamo/variables/builder.py: the assert of torch 2.0-2.7, the
unimplemented() graph break of 2.8+): second wordings from other threads and releases, and near misses that must not
be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("triton-cache-nfs-stale", "dynamo-fsdp-orig-params")


@pytest.mark.parametrize("text,expected", [
    # pytorch/pytorch#173679 (a multi-node run, /root/.triton/cache on NFS): dlopen's "cannot read file data" on
    # Triton's cuda_utils module, wrapped in Inductor's InductorError
    ("[rank9]: torch._inductor.exc.InductorError: ImportError: /root/.triton/cache/XU5DT2AO5BD5AEHEYGLPP5LRDFHHCUEJT4LG"
     "DVLB4STXUGVGHFPA/cuda_utils.cpython-310-x86_64-linux-gnu.so: cannot read file data: Stale file handle\n",
     "triton-cache-nfs-stale"),
    # Python's OSError on a cache file under a TRITON_CACHE_DIR named for it (triton/runtime/cache.py reading a group)
    ("OSError: [Errno 116] Stale file handle: '/shared/triton-cache/6MQKX2H3/__grp__triton_poi_fused_add_0.json'\n",
     "triton-cache-nfs-stale"),
    # Inductor's own Triton cache under /tmp/torchinductor_<user> on a shared /tmp (dlopen's "cannot open")
    ("ImportError: /tmp/torchinductor_alice/triton/0/4T3ZQ/triton_.so: cannot open shared object file: Stale file "
     "handle\n", "triton-cache-nfs-stale"),
    # torch 2.8+: Dynamo's unimplemented() graph break for the same check (gb_type, then its explanation)
    ("torch._dynamo.exc.Unsupported: FSDP with use_orig_params=False\n"
     "  Explanation: Dynamo only supports FSDP with use_orig_params=True\n", "dynamo-fsdp-orig-params"),
    # Lightning-AI/lit-llama#62's shape with torch 2.0's assert, from Fabric's FSDPStrategy
    ("  File \"/usr/lib/python3/site-packages/torch/_dynamo/variables/builder.py\", line 345, in _wrap\n"
     "    assert getattr(\nAssertionError: Dynamo only supports FSDP with use_orig_params=True\n",
     "dynamo-fsdp-orig-params"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a checkpoint on NFS replaced by another node (the storage table's nfs-stale-handle), no Triton cache in the path
    ("OSError: [Errno 116] Stale file handle: '/nfs/runs/exp1/checkpoint-500/pytorch_model.bin'\n",
     "triton-cache-nfs-stale"),
    # Triton's own cache race on one disk (triton-lang/triton#2688): the tmp.pid file gone, no stale handle
    ("FileNotFoundError: [Errno 2] No such file or directory: '/home/u/.triton/cache/1feb415f3280ca46eea8c4407a58c23e/"
     "fused_moe_kernel.json.tmp.pid_72_c0a0033e-6147-4520-ae3a-3847d02598f8'\n", "triton-cache-nfs-stale"),
    # a torch extension's .so missing (a JIT build that did not finish): dlopen's words, no stale handle, no Triton
    ("ImportError: /home/u/.cache/torch_extensions/py310_cu118/fused_adam/fused_adam.so: cannot open shared object "
     "file: No such file or directory\n", "triton-cache-nfs-stale"),
    # a Triton cache directory that cannot be created (a read-only home): permission, not NFS (dphnAI/sonar#458)
    ("PermissionError: [Errno 13] Permission denied: '/app/aphrodite-engine/.triton'\n", "triton-cache-nfs-stale"),
    # FSDP's own refusal of a parameter change between forward and backward (pytorch/pytorch#104504): use_orig_params
    # named in the thread, not Dynamo's check
    ("AssertionError: FSDP does not support changing the parameters between forward and backward for "
     "ShardingStrategy.SHARD_GRAD_OP\n", "dynamo-fsdp-orig-params"),
    # Lightning's optimizer check after use_orig_params=True was passed (lit-llama#62's second error)
    ("ValueError: The optimizer does not seem to reference any FSDP parameters. HINT: Make sure to create the "
     "optimizer after setting up the model.\n", "dynamo-fsdp-orig-params"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
