"""Rank 0 reads the list of training shards and broadcasts it to the other ranks with broadcast_object_list. The user
builds it as a generator expression (lazy, to save memory) instead of a list, and a generator cannot be pickled."""
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
if rank == 0:
    shards = (f"shard-{i:05d}.jsonl" for i in range(64))  # the mistake: meant a list [...]
    payload = [shards]
else:
    payload = [None]
dist.broadcast_object_list(payload, src=0)
my_shards = list(payload[0])[rank::dist.get_world_size()]
print(rank, len(my_shards))
dist.destroy_process_group()
