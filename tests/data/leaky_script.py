"""A user's program that prints the secret it was given (as a debug print of the environment would), in two
writes with a pause between them, on stdout and stderr: dscluster must mask the value in every log it writes."""

import os
import sys
import time

value = os.environ["HF_TOKEN"]
rank = os.environ.get("RANK", "?")
sys.stdout.write(f"rank {rank} token: {value[:6]}")
sys.stdout.flush()
time.sleep(0.3)
sys.stdout.write(value[6:] + " (printed in two writes)\n")
sys.stdout.flush()
print(f"rank {rank} environ HF_TOKEN={value!r}", file=sys.stderr, flush=True)
print(f"rank {rank} done", flush=True)
