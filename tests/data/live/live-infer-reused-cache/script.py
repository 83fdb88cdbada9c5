"""Batched generation over the evaluation prompts after deepspeed.init_inference: to 'save allocations' the script
makes one DynamicCache before the loop and passes it to every generate() call. 10 prompts in batches of 4 per rank."""
from datetime import timedelta

import deepspeed
import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
rank = torch.distributed.get_rank()
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
engine = deepspeed.init_inference(LlamaForCausalLM(cfg).eval(), dtype=torch.float32)
prompts = torch.randint(3, 512, (20, 16))[rank::2]
cache = DynamicCache()  # the mistake: one cache for every batch
for i in range(0, len(prompts), 4):
    batch = prompts[i:i + 4]
    out = engine.module.generate(batch, attention_mask=torch.ones_like(batch), max_new_tokens=8,
                                 past_key_values=cache)
    print(f"rank {rank} batch {i // 4}: {out.shape}")
