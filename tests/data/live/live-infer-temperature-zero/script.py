"""Fine-tuning a small causal LM with DeepSpeed (ZeRO-1); every few steps the script samples a continuation of a
fixed prompt to watch the text. The user wanted the samples to be reproducible and set the temperature to 0 while
keeping do_sample=True."""
import argparse

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--temperature", type=float, default=0.0)
args = parser.parse_args()

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(cfg)
ds_config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
             "zero_optimization": {"stage": 1}}
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)
prompt = torch.tensor([[1, 17, 42, 99, 7]])
for step in range(1, 7):
    batch = torch.randint(3, 512, (4, 32))
    loss = engine(input_ids=batch, labels=batch).loss
    engine.backward(loss)
    engine.step()
    if step % 3 == 0:
        engine.eval()
        sample = engine.module.generate(prompt, max_new_tokens=20, do_sample=True,
                                        temperature=args.temperature)  # the mistake: 0 with do_sample=True
        engine.train()
        print(f"step {step} loss {loss.item():.3f} sample {sample[0, -20:].tolist()}")
