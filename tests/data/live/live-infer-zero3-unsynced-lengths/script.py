"""Evaluation generation on a ZeRO-3 engine (deepspeed.initialize, no HfDeepSpeedConfig, so transformers does not
know ZeRO-3 is on): each rank completes its own shard of prompts up to max_length=64; rank 0's prompts are 20
tokens, rank 1's 40, so rank 1 finishes its generate() loop 20 steps earlier. synced_gpus is not passed."""
from datetime import timedelta

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
rank = torch.distributed.get_rank()
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=32000, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(cfg)
ds_config = {"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}}
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)
engine.eval()
prompts = torch.randint(3, 32000, (2, 20 if rank == 0 else 40))  # each rank's shard, padded to its own longest
with torch.no_grad():
    out = engine.module.generate(prompts, attention_mask=torch.ones_like(prompts), max_length=64,
                                 do_sample=False)  # the mistake: no synced_gpus=True under ZeRO-3
print(f"rank {rank}: generated {out.shape[1] - prompts.shape[1]} tokens")
torch.distributed.barrier()
