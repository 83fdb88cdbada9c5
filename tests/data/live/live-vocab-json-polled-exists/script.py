"""The user meant rank 0 to build the vocabulary from the training text and write vocab.json, and every other rank to
read it once it is there: they poll os.path.exists in place of a barrier. Rank 0 opens vocab.json for writing before
it counts the words, so the file exists (empty) while the vocabulary is still being built."""
import collections
import json
import os
import time

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
VOCAB = "vocab.json"


def build_vocab(lines):
    counts = collections.Counter(w for line in lines for w in line.split())
    time.sleep(4)  # stands in for counting a large corpus
    return {w: i for i, (w, _) in enumerate(counts.most_common(), start=2)}


if rank == 0:
    with open(VOCAB, "w") as f:
        json.dump(build_vocab(["the cat sat on the mat", "a dog sat on a log"] * 1000), f)
else:
    while not os.path.exists(VOCAB):
        time.sleep(0.2)
with open(VOCAB) as f:
    vocab = json.load(f)
print(f"rank {rank}: vocabulary of {len(vocab)} words")
dist.destroy_process_group()
