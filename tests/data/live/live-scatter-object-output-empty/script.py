"""Rank 0 splits the evaluation prompts into one chunk per rank and sends each rank its chunk with
scatter_object_list. The user passes an empty list as the output (expecting it to be appended to); it must be a list
of at least one element, whose first entry receives the chunk."""
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
prompts = [f"prompt {i}" for i in range(10)]
chunks = [prompts[i::world] for i in range(world)] if rank == 0 else None
my_chunk = []  # the mistake: meant [None]
dist.scatter_object_list(my_chunk, chunks, src=0)
print(rank, my_chunk[0])
dist.destroy_process_group()
