"""The user makes a subgroup of the "evaluation" ranks (rank 0 only in this 2-rank run) and gathers the eval scores
over it with all_gather_object, but calls it on every rank: on a rank outside the group torch only warns and
returns, leaving the output list untouched (None), and the script then reads it."""
import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
eval_ranks = list(range(max(1, world // 2)))
eval_group = dist.new_group(ranks=eval_ranks)
score = {"rank": rank, "acc": float(torch.rand(1))}
scores = [None] * len(eval_ranks)
dist.all_gather_object(scores, score, group=eval_group)  # the mistake: called on ranks outside eval_group too
mean_acc = sum(s["acc"] for s in scores) / len(scores)
print(rank, "mean acc", mean_acc)
dist.destroy_process_group()
