"""A small grouped-query-attention Llama built from its config: the user sets num_key_value_heads=3 for
num_attention_heads=4 (the query heads must be a multiple of the key/value heads), and the first forward fails."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import LlamaConfig, LlamaForCausalLM

dist.init_process_group("gloo")
config = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=3, max_position_embeddings=128)
model = DDP(LlamaForCausalLM(config))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(3):
    ids = torch.randint(0, 1000, (4, 32))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
