"""Sequence log-probabilities for scoring (a DPO-style reference pass) from a small GPT-2 under DDP: the per-token
log-probs are picked with gather from the labels DataCollatorForLanguageModeling(mlm=False) made, whose padded
positions hold -100."""
from datetime import timedelta

import torch
import torch.distributed as dist
from tokenizers import Tokenizer, models, pre_tokenizers
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import DataCollatorForLanguageModeling, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

words = "the cat sat on a mat and dog ran to park in sun".split()
tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["<pad>", "<unk>", *words])}, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>")
model = DDP(GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=32, n_embd=32, n_layer=2, n_head=2,
                                       pad_token_id=0)))
collate = DataCollatorForLanguageModeling(tokenizer, mlm=False)
texts = ["the cat sat on a mat", "a dog ran to the park in the sun", "the sun", "a cat and a dog sat in the park"]
batch = collate([tokenizer(t) for t in texts[rank * 2:rank * 2 + 2]])

opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logp = logits[:, :-1].log_softmax(-1)
    labels = batch["labels"][:, 1:]
    token_logp = logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    seq_logp = (token_logp * (labels != -100)).sum(-1)
    loss = -seq_logp.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.3f}")
dist.destroy_process_group()
