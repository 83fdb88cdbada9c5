"""The user trains a word-level tokenizer on the training sentences (WordLevel() with no unk_token, WordLevelTrainer
with only a [PAD] special token) and trains a tiny GPT-2 with plain DDP; the validation text has words the training
text never had, and a WordLevel model without an unknown token cannot encode them."""
import torch
import torch.distributed as dist
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import WordLevelTrainer
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group(backend="gloo")
train_text = ["the cat sat on the mat", "a dog ran on the mat", "the cat ran fast"] * 4
val_text = ["the bird sat on the fence", "a dog ran home"]
tok = Tokenizer(WordLevel())  # the mistake: no unk_token
tok.pre_tokenizer = Whitespace()
tok.train_from_iterator(train_text, WordLevelTrainer(special_tokens=["[PAD]"]))
model = DDP(GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=tok.get_vocab_size(),
                                       n_positions=32)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for text in train_text[:4]:
    ids = torch.tensor([tok.encode(text).ids])
    loss = model(input_ids=ids, labels=ids).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
with torch.no_grad():
    for text in val_text:
        ids = torch.tensor([tok.encode(text).ids])
        print(f"rank {dist.get_rank()} val loss", model(input_ids=ids, labels=ids).loss.item(), flush=True)
dist.destroy_process_group()
