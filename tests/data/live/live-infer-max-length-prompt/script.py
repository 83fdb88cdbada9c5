"""Batch completion server: each rank takes its half of the requests (prompts of 48 tokens), runs them through
deepspeed.init_inference and generates up to 32 tokens of completion. The user passes max_length=32, meaning the
completion's length."""
from datetime import timedelta

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
rank = torch.distributed.get_rank()
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
engine = deepspeed.init_inference(LlamaForCausalLM(cfg).eval(), dtype=torch.float32)
requests = torch.randint(3, 512, (8, 48))
mine = requests[rank::2]
completions = engine.module.generate(mine, attention_mask=torch.ones_like(mine), max_length=32)  # the mistake
print(f"rank {rank}: {completions.shape[0]} completions of {completions.shape[1] - mine.shape[1]} tokens")
