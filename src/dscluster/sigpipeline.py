"""Failure signatures of pipeline parallelism, split from sigparallel.py's table (which splices them in this place, so
the order of the whole table is unchanged): torch.distributed.pipelining with more ranks than stages, and round 127's
a pipeline engine's backward given a gradient shaped unlike its output, DeepSpeed's PipelineEngine refusing batch
inputs that are not a tensor or a tuple, torch's Pipe without RPC, Megatron's interleaved schedule with fewer
micro-batches than stages. Each pattern is the wording of the component that prints it (cited at each), never one
log's. The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

PIPELINE_SIGNATURES: tuple[Signature, ...] = (
    # torch.distributed.pipelining (torch/distributed/pipelining/stage.py, _PipelineStageBase.__init__): more ranks in
    # the pipeline group than stages the model was split into. Round 127: the words up to "than" suffice (a post cut
    # at "...cannot be larger than numb"); nothing else in torch says "Pipeline group size N cannot be larger than".
    _sig("pipeline-stages", r"Pipeline group size \d+ cannot be larger than\b",
         "torch.distributed.pipelining has more ranks in the pipeline group than stages the model was split into: "
         "pipeline() got no split points (no split_spec or pipe_split(), so the whole model is one stage) or fewer "
         "than the processes launched.",
         "Split the model into as many stages as the pipeline group has ranks (split_spec or pipe_split() points), "
         "or launch as many processes per pipeline as there are stages (torchrun --nproc-per-node N); a restart "
         "fails the same way.", retry=False),
    # Round 127 (pipeline parallelism). A pipeline engine's backward given a gradient in another shape than its output:
    # torch's autograd (torch/autograd/__init__.py _make_grads: "Mismatch in shape: grad_output[i] has a shape of ...
    # and output[i] has a shape of ...") under the frame of an engine that calls torch.autograd.backward(outputs,
    # grad_tensors) with the gradient it received: DeepSpeed's pipe/engine.py _exec_backward_pass, ColossalAI's
    # backward_by_grad (its pipeline schedules' backward step), Megatron-core's schedules.py backward_step, torch's
    # pipelining/_backward.py stage_backward; each sizes its receive buffers from shapes exchanged once (DeepSpeed PR
    # 5481; ColossalAI's enable_metadata_cache, schedule/one_f_one_b.py). The same words under no such frame (a
    # script's own backward(grad_tensors=...), activation checkpointing) are not read here.
    _sig("pipeline-activation-shape-changed",
         r"(?:deepspeed[/\\]runtime[/\\]pipe[/\\]engine\.py\", line \d+, in _exec_backward_pass|\bin backward_by_grad|"
         r"pipeline_parallel[/\\]schedules\.py\", line \d+, in backward_step|"
         r"pipelining[/\\]_backward\.py\", line \d+, in stage_backward)\n(?:.*\n){0,16}?"
         r"(?P<ev>.*Mismatch in shape: grad_output\[\d+\] has a shape of)",
         "A pipeline-parallel engine's backward got, from the next stage, a gradient of another shape than its own "
         "output: the inputs change shape between batches (a sequence length set by a collate that pads to each "
         "batch's longest sample, a smaller last batch) while the engine sizes the buffers it receives activations "
         "and gradients into from shapes it exchanged once (DeepSpeed's PipelineEngine from the first micro-batch, "
         "ColossalAI's pipeline schedule from its metadata cache, Megatron from --seq-length, "
         "torch.distributed.pipelining from its first step).",
         "Give every micro-batch the same shape (pad to one fixed sequence length; drop_last=True for a smaller last "
         "batch), or have the engine exchange shapes every step: DeepSpeed 0.15+ PipelineModule(..., "
         "dynamic_shape=True) (or engine.reset_activation_shape() before a batch of another shape), ColossalAI "
         "HybridParallelPlugin(enable_metadata_cache=False), Megatron variable_seq_lengths=True; a restart fails the "
         "same way.", retry=False),
    # DeepSpeed's pipeline engine (runtime/pipe/engine.py PipelineEngine._exec_load_micro_batch): the first stage takes
    # batch[0], the inputs, as a tensor or a tuple (`assert isinstance(batch[0], tuple)`), since 0.9.0 (PR 3042, "Allow
    # lists") a tuple or a list (`assert isinstance(batch[0], (tuple, list))`). Not its `assert torch.is_tensor(x)` (an
    # element of the inputs that is no tensor).
    _sig("pipe-batch-inputs-list",
         r"in _exec_load_micro_batch\n(?:.*\n){0,3}?(?P<ev>.*assert isinstance\(batch\[0\], "
         r"(?:tuple|\(tuple, list\))\))",
         "DeepSpeed's pipeline engine takes the first stage's inputs, batch[0] of each (inputs, labels) batch the data "
         "iterator yields, as one tensor or a tuple of tensors, and they came as another type: a list (what the "
         "DataLoader's default collate makes of a sample holding several inputs), which DeepSpeed before 0.9.0 "
         "refuses, or a dict (a tokenizer's output), which no release takes.",
         "Have the data iterator yield (inputs, labels) with the inputs a tensor or a tuple of tensors (a collate_fn "
         "returning (tuple(inputs), labels)), or upgrade DeepSpeed to 0.9.0 or later, which accepts a list; a "
         "restart fails the same way.", retry=False),
    # torch.distributed.pipeline.sync.Pipe (torch 1.8-2.3) returns an RRef and needs an RPC agent: torch 1.8 reached
    # rpc_agent.cpp's RpcAgent::getCurrentRpcAgent assert, later releases check in Pipe.__init__ (pytorch PR 55187).
    # Not TensorPipe's agent's own errors ("RPC agent for N encountered error when reading incoming request ...").
    _sig("pipe-rpc-not-initialized", r"Current RPC agent is not set!|Please initialize RPC framework for Pipe using "
         r"torch\.distributed\.rpc\.init_rpc",
         "torch.distributed.rpc was used with no RPC agent started in the process: torch.distributed.rpc.init_rpc "
         "was never called, or the use came before it or after rpc.shutdown(). torch.distributed.pipeline.sync.Pipe "
         "needs it even in one process (it returns its output as an RRef), and a script like the documentation's first "
         "example never calls it; any other RPC use fails the same way without it: an RRef (DistributedOptimizer's "
         "RRef(param) list), an rpc_sync/rpc_async call, distributed autograd.",
         "Call torch.distributed.rpc.init_rpc(name, rank=..., world_size=...) in every process before building Pipe "
         "or using RPC (in one process: MASTER_ADDR and MASTER_PORT set, init_rpc(\"worker\", rank=0, "
         "world_size=1)); on torch 2.4 and later, where Pipe is gone, use torch.distributed.pipelining, which needs "
         "no RPC; a restart fails the same way.", retry=False),
    # Megatron's interleaved (virtual pipeline) schedule: core/pipeline_parallel/schedules.py
    # forward_backward_pipelining_with_interleaving, "The number of contiguous micro-batches in a virtual pipeline
    # stage" + "should range in [PP=P , M=M]" (two literals joined without a space) when microbatch_group_size_per_
    # vp_stage (default: the pipeline size) lies outside [PP, M]; before 2023 get_forward_backward_func's "number of
    # microbatches (M) is not divisible by pipeline-model-parallel-size (P) when using interleaved schedule" (2021:
    # without the numbers, "pipeline-parallel size"). Not the remainder check after it ("The remainder of M ..."), nor
    # parallel_state's "pipeline-model-parallel size should be greater than 1 with interleaved schedule".
    _sig("pipeline-microbatches-below-stages",
         r"number of contiguous micro-batches in a virtual pipeline stage ?should range in \[PP=\d+ ?, ?M=\d+\]|"
         r"number of microbatches (?:\(\d+\) )?is not divisible by pipeline-(?:model-)?parallel[- ]size (?:\(\d+\) )?"
         r"when using interleaved schedule",
         "Megatron's interleaved (virtual pipeline) schedule runs a step's micro-batches in groups of "
         "microbatch_group_size_per_vp_stage (by default the pipeline size PP), which must lie between PP and the "
         "step's number of micro-batches M (global batch / (micro batch x data-parallel size)): with fewer "
         "micro-batches than pipeline stages (M below PP in the message) no group fits. Megatron before 2023 wanted M "
         "a multiple of PP.",
         "Raise the global batch size (or lower the micro batch size) so that a step has at least PP micro-batches "
         "(a multiple of PP for older Megatron), or lower the pipeline size or turn the virtual pipeline off "
         "(--num-layers-per-virtual-pipeline-stage, virtual_pipeline_model_parallel_size); where M is already PP or "
         "more, set microbatch_group_size_per_vp_stage within [PP, M]; a restart fails the same way.", retry=False),
)
