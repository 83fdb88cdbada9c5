"""Fine-tuning a small BERT classifier (built from a BertConfig) with DeepSpeed on a pre-tokenized dataset padded to 64
tokens. To save compute the user crops each batch's input_ids to the longest real length, but leaves the
attention_mask at its padded 64 columns."""
import deepspeed
import torch
from transformers import BertConfig, BertForSequenceClassification

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
PAD_TO = 64

config = BertConfig(vocab_size=3000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=128, num_labels=3)
model = BertForSequenceClassification(config)
ds_config = {"train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "AdamW", "params": {"lr": 2e-5, "torch_adam": True}}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)


def pretokenized_batch(n):
    lengths = torch.randint(10, 40, (n,))
    ids = torch.zeros(n, PAD_TO, dtype=torch.long)
    mask = torch.zeros(n, PAD_TO, dtype=torch.long)
    for i, ln in enumerate(lengths):
        ids[i, :ln] = torch.randint(100, 3000, (int(ln),))
        mask[i, :ln] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": torch.randint(0, 3, (n,))}


for step in range(3):  # noqa: B007 - kept as captured
    batch = pretokenized_batch(4)
    longest = int(batch["attention_mask"].sum(1).max())
    batch["input_ids"] = batch["input_ids"][:, :longest]  # the mistake: attention_mask keeps its 64 columns
    loss = engine(**batch).loss
    engine.backward(loss)
    engine.step()
