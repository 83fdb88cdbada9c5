"""A small Llama built from its config for pretraining experiments; the user copies attn_implementation=
"flash_attention_2" from a GPU recipe onto the CPU nodes, where the flash_attn package is not installed (nor usable)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForCausalLM, LlamaConfig

dist.init_process_group("gloo")
config = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
model = AutoModelForCausalLM.from_config(config, attn_implementation="flash_attention_2", dtype=torch.bfloat16)
model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(3):
    ids = torch.randint(0, 1000, (4, 32))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
