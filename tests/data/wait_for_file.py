"""A rank that waits for a file (no torch): the cluster tests of leases, owners and people end a run by
creating the file its first argument names. It prints its rank and the UID it runs under."""
import os
import sys
import time

path = [a for a in sys.argv[1:] if not a.startswith("--")][0]  # DeepSpeed adds --local_rank=N
print(f"rank {os.environ.get('RANK')} uid {os.getuid()} waits for {path}", flush=True)
while not os.path.exists(path):
    time.sleep(0.2)
print("done", flush=True)
