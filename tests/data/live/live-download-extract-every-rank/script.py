"""The user downloads the dataset archive when it is not there yet, then extracts it; every rank runs this step. Rank
1 finds the archive rank 0 is still downloading (the file exists, half written) and extracts it."""
import os
import pathlib
import tarfile
import time
import urllib.request

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
URL = pathlib.Path("mirror/corpus.tar.gz").resolve().as_uri()  # the lab's dataset mirror (a file:// URL here)
archive = "corpus.tar.gz"


def progress(blocks, block_size, total):
    time.sleep(0.15)  # stands in for the network
    if blocks % 10 == 0:
        print(f"rank {rank}: downloaded {blocks * block_size}/{total} bytes")


time.sleep(rank)
if not os.path.exists(archive):
    urllib.request.urlretrieve(URL, archive, reporthook=progress)
with tarfile.open(archive) as tar:
    tar.extractall("data", filter="data")
print(f"rank {rank}: {len(os.listdir('data'))} files")
dist.barrier()
dist.destroy_process_group()
