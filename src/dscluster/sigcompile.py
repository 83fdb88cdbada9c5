"""Failure signatures of compilation in training (round 37 of issue 45): Triton, the GPU compiler behind torch.compile's
Inductor and behind hand-written kernels, TorchDynamo's recompile limit, and xFormers' attention dispatcher refusing
every kernel. Each pattern is the wording of the component that prints it, never one log's: Triton's
backends/nvidia/compiler.py ("Internal Triton PTX codegen error" with ptxas's stderr; ptxas-blackwell is the second
ptxas Triton 3.6+ ships for sm_100 and later), its runtime/cache.py (FileCacheManager.put writes
f"{filepath}.tmp.pid_{pid}_{rnd}" and os.replace()s it), its CUDA driver wrapper ("Triton Error [CUDA]: ..."), Dynamo's
convert_frame.py (FailOnRecompileLimitHit, "recompile_limit reached with fullgraph=True"; older releases
"cache_size_limit reached" and one_graph), and xFormers' ops/fmha/dispatch.py ("No operator found for
`memory_efficient_attention_forward` with inputs", then each operator's reasons) and xformers/_cpp_lib.py ("xFormers
can't load C++/CUDA extensions"); round 137: Unsloth's generated modules (unsloth_compiled_cache) imported before the
rank writing them had finished. sigmessages.py places this table with PyTorch's own, before the training stack's
and the last resorts. The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

_NO_OPERATOR = r"No operator found for `memory_efficient_attention_(?:forward|backward)\w*`"
_EXT_UNAVAILABLE = r"xFormers wasn'?t build with CUDA support|xFormers can'?t load C\+\+/CUDA extensions"
# A path inside Triton's file cache: its default ~/.triton/cache, a TRITON_CACHE_DIR named for it, Inductor's own.
_TRITON_CACHE = r"(?:\.triton[/\\]cache|triton[_-]cache|torchinductor_[\w.-]{1,64}[/\\]triton)[/\\_-]"

COMPILE_SIGNATURES: tuple[Signature, ...] = (
    # Triton's ptxas refusing the GPU's architecture: its own codegen error around ptxas's stderr, or its
    # ptxas-blackwell binary (a name only Triton's wheel uses). A CUDA toolkit's nvcc printing the same ptxas line
    # for an architecture it dropped (sm_30) is not Triton's and is left to the build's own rules.
    _sig("triton-ptxas-arch", r"ptxas-blackwell fatal\s*:\s*Value 'sm_\w+' is not defined for option 'gpu-name'|"
         + then(r"Internal Triton PTX codegen error|PTXASError",
                r"ptxas fatal\s*:\s*Value 'sm_\w+' is not defined for option 'gpu-name'", gap=r"[\s\S]"),
         "Triton compiles its kernels (torch.compile's Inductor kernels, or a library's Triton kernels) with the ptxas "
         "bundled in its own wheel, and that ptxas is older than this GPU's architecture (a Blackwell/GB10/Thor GPU "
         "under a Triton that predates it, an RTX 40xx under Triton 2.0), so no kernel can be assembled.",
         "Install a Triton (torch release) that supports this GPU, or point Triton at a newer ptxas from a CUDA "
         "toolkit that knows the architecture: TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas (and "
         "TRITON_PTXAS_BLACKWELL_PATH where the Triton has it) on every rank; or turn torch.compile off. A restart "
         "fails the same way.", retry=False),
    # Triton's FileCacheManager.put: another process wrote or replaced the same cache key at the same moment.
    _sig("triton-cache-race", r"No such file or directory: '[^'\n]*triton[^'\n]*\.tmp\.pid_\d+[^'\n]*'",
         "Several processes (the ranks of one node, or nodes sharing a home directory) compiled the same Triton "
         "kernel at once into one shared Triton cache directory, and one process's temporary cache file was moved "
         "or removed by another's write of the same key: a race in Triton's file cache.",
         "Give each rank its own cache: TRITON_CACHE_DIR=/tmp/triton-$USER-$LOCAL_RANK (not a shared network home), "
         "or a Triton release with the fixed cache writer (triton#4295); a restart usually passes, since the "
         "kernels are then cached.", retry=True),
    # A Triton cache on a network file system (round 120): glibc's dlopen (elf/dl-load.c: "cannot stat shared object",
    # "cannot read file data", "cannot open shared object file", "failed to map segment from shared object", each then
    # strerror) or Python's OSError ("[Errno 116] Stale file handle: '<path>'") on a file under Triton's cache
    # (~/.triton/cache, a TRITON_CACHE_DIR named triton_cache, Inductor's torchinductor_<user>/triton) that another
    # node replaced: NFS's ESTALE. Not the tmp.pid race above (that file is gone on one node's own disk).
    _sig("triton-cache-nfs-stale", _TRITON_CACHE + r"[^\n:']{0,400}: (?:cannot (?:stat shared object|read file "
         r"data|open shared object file)|failed to map segment from shared object): Stale (?:NFS )?file handle|"
         r"\[Errno 116\] Stale (?:NFS )?file handle: '[^'\n]{0,400}?" + _TRITON_CACHE,
         "Triton's kernel cache (~/.triton/cache by default, or TRITON_CACHE_DIR) is on a network file system shared "
         "by the nodes (an NFS home directory or volume); ranks on several nodes compile and load the same cache "
         "entries at once, and a file one node replaced is a stale file handle on another.",
         "Put Triton's cache on each node's local disk: export TRITON_CACHE_DIR=/tmp/triton-$USER (a path not "
         "on NFS; TORCHINDUCTOR_CACHE_DIR likewise if it is there) on every node before launching. Clearing "
         "the shared cache does not help: the race recurs at the next compile.", retry=False),
    # Round 137: Unsloth's generated modules in unsloth_compiled_cache (unsloth_zoo compiler.py create_new_function,
    # the module named as its class): unsloth/models/rl.py _patch_trl_rl_trainers imports Unsloth<X>Trainer.py and
    # takes `created_module.Unsloth<X>Trainer` (older `exec(f"trl.{RLTrainer_name} = created_module.Unsloth..."`,
    # today `getattr(created_module, f"Unsloth{RLTrainer_name}")`; Unsloth<X>Config the same), so Python's "module
    # 'UnslothKTOTrainer' has no attribute 'UnslothKTOTrainer'" is a file imported incomplete: several ranks of a
    # distributed launch writing it at once (unslothai/unsloth#3031; file locks since unsloth-zoo#310, Oct 2025).
    # Only a module and an attribute both named Unsloth...: not Python's words for other modules.
    _sig("unsloth-compiled-cache-race", r"module 'Unsloth\w+' has no attribute 'Unsloth\w+'",
         "Unsloth's generated trainer module in unsloth_compiled_cache (Unsloth<X>Trainer.py, written at import) was "
         "imported before it was complete: the ranks of a distributed launch (torchrun, accelerate launch) each "
         "generated the same file at the same moment and one read it while another was still writing it, a race in "
         "unsloth_zoo before its file locks (or a file left half-written by a run that was killed).",
         "Upgrade unsloth and unsloth_zoo (file locks around the compiled cache since October 2025) on every node; or "
         "write the cache once from one process before the launch (python -c \"import unsloth\" in the training "
         "directory), and delete unsloth_compiled_cache if the error comes back. A restart usually passes, since "
         "the files are then complete.", retry=True),
    # Dynamo tracing a module FSDP wrapped with flattened parameters (torch/_dynamo/variables/builder.py: its assert
    # "Dynamo only supports FSDP with use_orig_params=True"; torch 2.8+ unimplemented(gb_type="FSDP with
    # use_orig_params=False", explanation= the same words)).
    _sig("dynamo-fsdp-orig-params", r"Dynamo only supports FSDP with use_orig_params=True|"
         r"Unsupported: FSDP with use_orig_params=False",
         "torch.compile was applied to a model wrapped by FSDP (FullyShardedDataParallel) with use_orig_params=False, "
         "which flattens each unit's parameters; Dynamo can trace FSDP-wrapped modules only when the original "
         "parameters are kept (use_orig_params=True).",
         "Wrap with FSDP(..., use_orig_params=True) (accelerate: fsdp_use_orig_params: true; Lightning: "
         "FSDPStrategy(use_orig_params=True); a trainer whose FSDP wrapper does not pass it needs a release that "
         "does), or turn torch.compile off under FSDP. A restart fails the same way.", retry=False),
    # TorchDynamo under fullgraph=True: the recompile limit is an error, not a fallback to eager. Round 178 (live):
    # torch 2.7+ raises the limit as Unsupported first (convert_frame.py _compile: "Dynamo recompile limit exceeded",
    # 2.7-2.8 "Dynamo cache limit exceeded"), the cause of its FailOnRecompileLimitHit ("Hard failure due to
    # fullgraph=True"); the traceback read is that Unsupported's, taken here before the graph-break rule below.
    _sig("dynamo-recompile-limit", r"FailOnRecompileLimitHit|FailOnCacheLimitHit|"
         r"(?:recompile_limit|cache_size_limit) reached with (?:fullgraph|one_graph)=True|"
         r"Unsupported: Dynamo (?:recompile|cache) limit exceeded",
         "A function compiled with torch.compile(fullgraph=True) was recompiled each time a guard failed (a new "
         "input or parameter shape, dtype or Python value) until Dynamo's recompile limit (8 by default) was "
         "reached, which fullgraph=True makes an error instead of a fallback to eager.",
         "Read the warning's 'last reason' for what changes between calls; mark that dimension dynamic "
         "(torch._dynamo.mark_dynamic, dynamic=True, force_parameter_static_shapes=False for parameters), compile "
         "per shape, or raise torch._dynamo.config.recompile_limit (cache_size_limit in older torch). A restart "
         "fails the same way.", retry=False),
    # Round 178 (live): Dynamo's graph break raised as an error: torch._dynamo.exc.Unsupported, which reaches the user
    # only where no graph break is allowed (fullgraph=True: symbolic_convert's one_graph; torch.export; a library that
    # compiles so: Unsloth) -- torch 2.7+ prints its gb_type ("Data-dependent branching", "Failed to trace builtin
    # operator", "Module-level backwards hooks require compiled autograd.") then Explanation/Hint lines and "from user
    # code:"; earlier releases the tracer's own words ("generic_jump TensorVariable()", "call_function
    # BuiltinVariable(print) [...]", "data dependent operator: aten._local_scalar_dense.default"); torch 2.1-2.5's
    # UserError for a branch on a tensor under fullgraph or export ("Dynamic control flow is not supported at the
    # moment. Please use functorch.experimental.control_flow.cond", unslothai/unsloth#2204). Dynamo's FSDP refusal is
    # Unsupported too, with its own fix (dynamo-fsdp-orig-params, above); the recompile limit is its own (below).
    _sig("dynamo-fullgraph-graph-break", r"torch\._dynamo\.exc\.Unsupported: |"
         r"Dynamic control flow is not supported at the moment",
         "torch.compile was asked for one whole graph -- fullgraph=True (given by the script, or by the library that "
         "compiles it: Unsloth, torch.export) -- and Dynamo met code it cannot trace into a graph: a graph break, which "
         "fullgraph makes an error instead of a fallback to eager (torch 2.1-2.3 also refused a break inside a context "
         "manager it traced). The error's first line says what (a Python if on a tensor's value, print or logging, "
         ".item()/.tolist(), a module backward hook, a call Dynamo does not support) and 'from user code:' where.",
         "Rewrite that code as the Hint lines say (torch.where, torch.clamp/nan_to_num or torch.cond instead of an if "
         "on a tensor; print, logging and .item() outside the compiled module; module backward hooks removed or with "
         "compiled autograd), keep it out of the compiled region (torch.compiler.disable on that function), or drop "
         "fullgraph=True so Dynamo splits the graph there (torch._dynamo.explain(model)(inputs) lists every break). A "
         "restart fails the same way.", retry=False),
    # Round 178 (live): a dimension marked dynamic that tracing specialized: torch/fx/experimental/symbolic_shapes.py
    # (ShapeEnv.produce_guards_verbose) raises ConstraintViolationError "Constraints violated (L['x'].size()[0])!" with
    # each violation: torch 2.5+ "You marked L['x'].size()[0] as dynamic but your code specialized it to be a constant
    # (4). If you're using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're using Dim.DYNAMIC...",
    # torch 2.1-2.4 "Not all values of RelaxedUnspecConstraint(L['x'].size()[0]) are valid because
    # L['x'].size()[0] was inferred to be a constant (4)" (pytorch#141034, #141251). torch.export's violation of a Dim's
    # range ("Not all values of batch = ... in the specified range ... satisfy the generated guard") is another fix.
    _sig("dynamo-dynamic-dim-specialized", r"You marked [^\n]{1,200}? as dynamic but your code specialized it to be a "
         r"constant|Not all values of RelaxedUnspecConstraint\([^\n]{1,200}?\) are valid because [^\n]{1,200}? was "
         r"inferred to be a constant",
         "A tensor dimension marked dynamic (torch._dynamo.mark_dynamic, by the script or a library, for a batch or "
         "sequence length that varies; torch.export's Dim.DYNAMIC) was specialized to one value while Dynamo traced the model: code uses that size "
         "as a fixed number (a view or reshape with a constant, a comparison of the size with a number, a Python int "
         "computed from it), so no graph for other sizes exists and Dynamo refuses the mark.",
         "Find where it specialized (the user stack printed under the error; TORCH_LOGS=\"+dynamic\") and write that "
         "code in terms of the size (x.view(x.shape[0], -1), -1 in reshape) instead of a constant; or drop mark_dynamic "
         "for that dimension, or use torch._dynamo.maybe_mark_dynamic, which lets it specialize (Dim.AUTO or "
         "Dim.STATIC for torch.export). A restart fails the same way.", retry=False),
    # Round 178 (live): torch.compile given both a mode and an options dict: torch/__init__.py compile() ("Either mode
    # or options can be specified, but both can't be specified at the same time.", the same words since torch 2.0).
    _sig("compile-mode-and-options", r"Either mode or options can be specified, but both can'?t be specified",
         "torch.compile was given both mode= (\"max-autotune\", \"reduce-overhead\"...) and an options= dict of "
         "Inductor settings; it accepts one or the other, never both, and refuses before compiling anything.",
         "Pass only one: mode alone (\"max-autotune-no-cudagraphs\" is autotuning without CUDA graphs), or options "
         "alone with what the mode stands for written out (torch._inductor.list_mode_options() prints each mode's "
         "options); or set the options in torch._inductor.config before compiling. A restart fails the same way.",
         retry=False),
    # Round 178 (live): Dynamo's backend registry (torch/_dynamo/backends/registry.py lookup_backend raising exc.py's
    # InvalidBackend: "Invalid backend: 'ipex', see `torch._dynamo.list_backends()` for available backends.", the same
    # since torch 2.0). Only with Dynamo's hint: c10d's Backend ("Invalid backend: 'nccl2'") and a quantization
    # config's ("Invalid backend 'x'. Must be one of") are other settings.
    _sig("dynamo-backend-unknown", r"Invalid backend: '[^'\n]{0,100}', see `?torch\._dynamo\.list_backends\(\)",
         "torch.compile was given a backend name that no installed package registered with Dynamo: a backend that "
         "another package registers when it is imported (\"ipex\": intel_extension_for_pytorch; \"tensorrt\": "
         "torch_tensorrt; \"openvino\": openvino.torch), one later torch releases removed (\"nvfuser\", "
         "\"aot_nvfuser\", \"ofi\"), or a misspelled name.",
         "Use a backend torch._dynamo.list_backends() prints (\"inductor\", the default; \"eager\" or \"aot_eager\" "
         "to debug), or install that package on every node and import it before torch.compile (import "
         "intel_extension_for_pytorch for \"ipex\"). A restart fails the same way.", retry=False),
    # Round 178 (live): torch's config modules refuse a name they do not define (torch/utils/_config_module.py
    # ConfigModule.__setattr__/__getattr__; torch 2.0-2.2's torch/_dynamo/config_utils.py: f"{self.__name__}.{name} does
    # not exist"): torch._dynamo.config, torch._inductor.config with its sections (triton., cpp.), torch._functorch.config.
    # An option of another release: removed (2.0's log_level, output_code), or newer than the installed torch
    # (torch._inductor.config.fx_graph_cache under torch 2.1, meta-pytorch/gpt-fast#51). Not Python's "module
    # 'torch._inductor' has no attribute 'config'" (the submodule never imported).
    _sig("torch-compile-config-unknown", r"AttributeError: torch\.[\w.]{0,60}?config\.[\w.]{1,100} does not exist",
         "The script sets (or reads) a torch.compile setting (torch._dynamo.config, torch._inductor.config...) that "
         "the installed torch does not have: an option of another release, removed or renamed since the code was "
         "written (torch 2.0's torch._dynamo.config.log_level, replaced by TORCH_LOGS) or added after the installed "
         "one (torch._inductor.config.fx_graph_cache before torch 2.2), or a misspelled name; torch's config modules "
         "refuse names they do not define.",
         "Change or remove that line for the installed torch (its torch/_dynamo/config.py or torch/_inductor/config.py "
         "lists the options; Dynamo's logging is TORCH_LOGS=\"+dynamo\" or torch._logging.set_logs(dynamo=logging.INFO) "
         "now), or install the torch release the code was written for, on every node. A restart fails the same way.",
         retry=False),
    # xFormers' dispatcher, when the reason every operator gives is its own missing CUDA build.
    _sig("xformers-ext-unavailable", r"xFormers wasn'?t build with CUDA support|"
         + then(_NO_OPERATOR, _EXT_UNAVAILABLE, gap=r"[\s\S]") + "|" + then(_EXT_UNAVAILABLE, _NO_OPERATOR, gap=r"[\s\S]"),
         "The installed xFormers cannot use its CUDA kernels: its C++/CUDA extensions were built for another torch "
         "(or CUDA, or Python) version than the one installed, or it was installed without CUDA support, so "
         "memory_efficient_attention finds no operator for any input.",
         "Install the xFormers wheel built for the installed torch and CUDA (pip install xformers with torch's "
         "index URL, or the xformers version pinned to this torch), check with python -m xformers.info, on every "
         "node; or turn xFormers attention off. A restart fails the same way.", retry=False),
    # xFormers' dispatcher when a kernel's reason is the attention bias's alignment (dispatch's "attn_bias.stride(-2)
    # % 8 != 0" and its HINT). The dispatcher's "No operator found" alone names no cause (a build for another torch
    # gives it too), so it is left to the reasons' words.
    _sig("xformers-no-operator", r"attn_bias\.stride\(-2\) % 8 != 0|HINT: To use an `attn_bias` with a sequence length "
         r"that is not a multiple of 8",
         "No xFormers memory_efficient_attention kernel accepts these inputs: the attention bias's sequence length is "
         "not a multiple of 8, so its memory is not aligned as the CUTLASS kernel needs, and the other kernels refuse "
         "a tensor bias (the lines under the error give each kernel's reason).",
         "Allocate the bias with its last dimension padded to a multiple of 8 and slice it to the sequence length "
         "(attn_bias = torch.zeros([B, H, M, pad8(N)])[..., :N]), as xFormers' HINT says, or use torch's "
         "scaled_dot_product_attention instead. A restart fails the same way.", retry=False),
    # Triton's CUDA driver wrapper: cuModuleLoadData refused the cubin its bundled ptxas made.
    _sig("triton-image-invalid", r"Triton Error \[CUDA\]: device kernel image is invalid",
         "The node's NVIDIA driver could not load a kernel Triton compiled: Triton assembles with the ptxas bundled "
         "in its wheel (a newer CUDA than the driver supports), so its output is a kernel image this older driver "
         "calls invalid.",
         "Upgrade the NVIDIA driver to one that supports the CUDA version of Triton's ptxas, or set "
         "TRITON_PTXAS_PATH to the ptxas of a CUDA toolkit the driver supports (for example "
         "/usr/local/cuda-11.8/bin/ptxas) on every rank; or turn torch.compile off. A restart fails the same way.",
         retry=False),
)
