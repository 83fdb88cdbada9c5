"""A small BERT for a quick classification experiment: the user shrinks hidden_size to 100 to save memory and leaves
num_attention_heads at BertConfig's default of 12, which 100 is not a multiple of."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import BertConfig, BertForSequenceClassification

dist.init_process_group("gloo")
config = BertConfig(vocab_size=1000, hidden_size=100, num_hidden_layers=2, intermediate_size=256, num_labels=2)
model = DDP(BertForSequenceClassification(config))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(3):
    ids = torch.randint(0, 1000, (8, 32))
    out = model(input_ids=ids, labels=torch.randint(0, 2, (8,)))
    out.loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
