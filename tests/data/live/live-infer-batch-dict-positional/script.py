"""Generation at the end of a DeepSpeed training run: the eval DataLoader's collate returns a dict
(input_ids, attention_mask), and the script passes the whole batch to generate() as its first argument."""
import deepspeed
import torch
from torch.utils.data import DataLoader
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(cfg)
ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)


def collate(rows):
    ids = torch.stack(rows)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


for _ in range(3):
    batch = torch.randint(3, 512, (4, 32))
    engine.backward(engine(input_ids=batch, labels=batch).loss)
    engine.step()

engine.eval()
eval_loader = DataLoader(list(torch.randint(3, 512, (8, 12))), batch_size=4, collate_fn=collate)
with torch.no_grad():
    for batch in eval_loader:
        out = engine.module.generate(batch, max_new_tokens=16)  # the mistake: meant **batch
        print(out[:, batch["input_ids"].shape[1]:].tolist())
