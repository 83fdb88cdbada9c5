"""Two NCCL releases among the ranks of one failure (issue 45, round 51: NVIDIA/nccl#1267). Ranks of different NCCL
releases exchange connection handles of different layouts, and the failure then names something else: an address
"with family 0 ... neither AF_INET(2) nor AF_INET6(10)", a peer that closed its connection, a hang. Each process says
which NCCL it runs: NCCL's banner at init (`NCCL INFO NCCL version 2.19.3+cuda12.3` with NCCL_DEBUG=INFO, a bare
`NCCL version 2.14.3+cuda11.7` line in some releases) and torch's ProcessGroupNCCL errors (`..., NCCL version 2.19.3`).
Two different ones in one failure's logs are a cause in themselves: explain.py asks here before the table when no rank
has an error of its own words (a vague communication error, a kill, a hang). Read in one pass over the text."""

from __future__ import annotations

import re
from collections.abc import Iterable

# NCCL's banner (at a line's start or after its `NCCL INFO ` prefix) and torch's error suffix (`, NCCL version X`);
# never an environment dump's `NCCL version: 2.18` or a package's `nvidia-nccl-cu12 2.20.5`.
_VERSION = re.compile(r"(?:^|NCCL INFO |, )NCCL version (\d{1,3}\.\d{1,3}\.\d{1,3})\b", re.MULTILINE)

CAUSE = ("The ranks run different NCCL releases ({versions}): ranks of different NCCL versions exchange connection "
         "handles of different layouts and cannot connect, whatever the error then names (an address family that is "
         "neither AF_INET nor AF_INET6, a connection closed, a hang). A node with another torch, another CUDA build "
         "of it, or a second nvidia-nccl package (cu11 beside cu12) runs another NCCL.")
FIX = ("Install the same torch and NCCL on every node (pip list | grep -i nccl, and python -c 'import torch; "
       "print(torch.cuda.nccl.version())' on each; one node image everywhere); `dscluster doctor` compares the "
       "nodes' versions. A restart fails the same way.")


def nccl_versions(texts: Iterable[str]) -> list[str]:
    """The distinct NCCL versions the texts name, in the order they first appear."""
    seen: dict[str, None] = {}
    for text in texts:
        for m in _VERSION.finditer(text):
            seen.setdefault(m.group(1), None)
    return list(seen)
