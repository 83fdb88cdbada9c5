"""The user trains a tiny GPT-2 with plain DDP on their own BPE tokenizer (trained here from a few sentences). The
DataLoader's collate_fn tokenizes each batch of raw sentences with return_tensors="pt" but without padding=True, so
sentences of different lengths cannot become one tensor. The corpus was tokenized once in the main process (to count
tokens) before two DataLoader workers forked; the error is raised in a worker and re-raised in the main process."""
import os  # noqa: F401 - kept as captured (log.txt line numbers)

import torch
import torch.distributed as dist
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

dist.init_process_group(backend="gloo")
corpus = ["the cat sat on the mat", "a dog ran fast", "the quick brown fox jumps over the lazy dog",
          "birds sing in the morning", "we train small language models", "tokenizers split text into pieces"] * 8
raw = Tokenizer(BPE(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(corpus, BpeTrainer(vocab_size=200, special_tokens=["[UNK]", "<|endoftext|>"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>")
n_tokens = sum(len(ids) for ids in tok(corpus)["input_ids"])  # batch encoding: the Rust thread pool is used here
print(f"rank {dist.get_rank()}: corpus has {n_tokens} tokens", flush=True)


def collate(texts):
    enc = tok(texts, return_tensors="pt")  # the mistake: no padding=True for sentences of different lengths
    enc["labels"] = enc["input_ids"].clone()
    return enc


sampler = torch.utils.data.distributed.DistributedSampler(corpus)
loader = torch.utils.data.DataLoader(corpus, batch_size=4, sampler=sampler, collate_fn=collate, num_workers=2)
model = DDP(GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tok), n_positions=64)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for batch in loader:
    loss = model(**batch).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
