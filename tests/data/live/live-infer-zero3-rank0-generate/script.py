"""ZeRO-3 fine-tuning of a small causal LM; every 3 steps rank 0 alone prints a sample continuation with
engine.module.generate(), inside 'if rank == 0', while rank 1 goes on training."""
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
ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)
prompt = torch.tensor([[1, 17, 42, 99, 7]])
for step in range(1, 10):
    batch = torch.randint(3, 32000, (4, 32))
    loss = engine(input_ids=batch, labels=batch).loss
    engine.backward(loss)
    engine.step()
    if step % 3 == 0 and rank == 0:  # the mistake: the ZeRO-3 parameters are gathered from every rank
        engine.eval()
        with torch.no_grad():
            sample = engine.module.generate(prompt, max_new_tokens=16, do_sample=False)
        engine.train()
        print(f"step {step} loss {loss.item():.3f} sample {sample[0, -16:].tolist()}")
