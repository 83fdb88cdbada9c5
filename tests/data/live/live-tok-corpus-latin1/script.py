"""The user trains a BPE tokenizer from text files with Tokenizer.train(files=...) before a plain-DDP GPT-2 run; one
file was exported from an old Windows tool in Latin-1 (cp1252), not UTF-8, and the tokenizers library reads files as
UTF-8 only. (The script writes that file itself, as the user's export step did.)"""
import os

import torch.distributed as dist
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
os.makedirs(f"corpus{rank}", exist_ok=True)
with open(f"corpus{rank}/en.txt", "w", encoding="utf-8") as f:
    f.write("the cat sat on the mat\na dog ran fast\n" * 20)
with open(f"corpus{rank}/fr.txt", "w", encoding="latin-1") as f:  # the export: Latin-1, not UTF-8
    f.write("le café est très bon\nune idée naïve à la carte\n" * 20)
tok = Tokenizer(BPE(unk_token="[UNK]"))
tok.pre_tokenizer = Whitespace()
tok.train([f"corpus{rank}/en.txt", f"corpus{rank}/fr.txt"], BpeTrainer(vocab_size=200, special_tokens=["[UNK]"]))
model = DDP(GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=tok.get_vocab_size())))
dist.destroy_process_group()
