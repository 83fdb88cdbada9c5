"""The user trains a word-level tokenizer on rank 0 and has the other ranks load tokenizer.json; they put the barrier
before rank 0's training instead of after its save, so rank 1 loads the file before it is written."""
import os
import time

import torch.distributed as dist
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

dist.init_process_group("gloo")
rank = dist.get_rank()
path = "tokenizer.json"
dist.barrier()
if rank == 0 and not os.path.exists(path):
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    time.sleep(3)  # stands in for reading the corpus
    tok.train_from_iterator(["the cat sat on the mat", "a dog sat on a log"] * 100,
                            trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"]))
    tok.save(path)
tokenizer = Tokenizer.from_file(path)
print(f"rank {rank}: vocabulary of {tokenizer.get_vocab_size()}")
dist.destroy_process_group()
