"""The user caches tokenized examples in a sqlite database so that a restart does not tokenize again; every rank opens
the same features.db and inserts its examples in one transaction. sqlite allows one writer at a time: the other rank
waits for the lock (sqlite3's default timeout, 5 s) and gives up."""
import sqlite3
import time

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
db = sqlite3.connect("features.db")
db.execute("CREATE TABLE IF NOT EXISTS features (idx INTEGER PRIMARY KEY, tokens TEXT)")
db.commit()
for idx in range(rank, 40, dist.get_world_size()):
    time.sleep(0.4)  # stands in for tokenizing one document
    db.execute("INSERT OR REPLACE INTO features VALUES (?, ?)", (idx, " ".join(str(t) for t in range(idx, idx + 64))))
db.commit()
n = db.execute("SELECT COUNT(*) FROM features").fetchone()[0]
print(f"rank {rank}: {n} cached examples")
db.close()
dist.destroy_process_group()
