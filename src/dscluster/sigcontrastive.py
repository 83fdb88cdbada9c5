"""Failure signatures of contrastive and retrieval training across ranks, from round 211 of issue 45 (live: broken
users' scripts run for real on torch 2.13 under DDP and gloo): in-batch negatives gathered from every rank, through
torch.distributed.nn.functional's autograd collectives. Most of that round's failures were already read by the
general tables (loss-no-grad, loss-target-out-of-bounds, loss-target-batch-mismatch, collective-mismatch, whose
causes name the contrastive forms); this one holds what only the autograd collectives print. Each pattern is the
wording of the component that prints it with the frame that makes it its own (torch/distributed/nn/functional.py),
never one log's. sigrounds.py places this table with the other round tables, before the exception messages'
(sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

CONTRASTIVE_SIGNATURES: tuple[Signature, ...] = (
    # torch/distributed/nn/functional.py: all_gather(tensor, group=...) (and its other autograd collectives) call
    # tensor.contiguous() in their autograd Function's forward; called as c10d's all_gather(tensor_list, tensor) the
    # list arrives where the tensor goes (and the tensor as the group).
    _sig("dist-nn-all-gather-list-arg",
         r"torch/distributed/nn/functional\.py\", line \d+, in forward\n(?:[^\n]*\n){0,3}?[^\n]*"
         r"AttributeError: '(?:list|tuple)' object has no attribute 'contiguous'",
         "torch.distributed.nn.functional.all_gather (the autograd all_gather, used so that gathered embeddings "
         "keep their gradient for in-batch negatives) was called like torch.distributed.all_gather, with an output "
         "list first: the autograd version takes only the tensor (and a group) and returns a tuple with every "
         "rank's tensor, so the list arrived where the tensor goes.",
         "Call it with the tensor alone and use what it returns: all_d = torch.cat(torch.distributed.nn.functional."
         "all_gather(d)) (every rank's slice keeps its gradient, so no need to put the local tensor back at its "
         "rank's index); every rank must pass a tensor of one shape (pad or drop the uneven last batch). A restart "
         "fails the same way.", retry=False),
)
