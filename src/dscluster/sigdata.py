"""Failure signatures from the data side of multi-GPU runs (round 36 of issue 45): the data-loading libraries that
refuse a distributed run's configuration in their own words. webdataset's pipeline, started in a run of several
processes with no rule for splitting its shards across them; mosaicml streaming's StreamingDataset, whose local
cache directory another dataset on the machine already holds. Each pattern is the wording of the library that
prints it (webdataset's shardlists.py, streaming's shared/prefix.py), never one log's. sigmessages.py places this
table with the storage one (sigstorage.py), before the training stack's and the last resorts: a library's own
ValueError is more specific than a Python error's type. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

DATA_SIGNATURES: tuple[Signature, ...] = (
    # webdataset's shardlists.py, single_node_only (the default nodesplitter of wds.WebDataset since v2): with
    # world_size > 1 it raises ValueError("you need to add an explicit nodesplitter to your input pipeline for
    # multi-node training"); 0.2.x before the maintainer's rewording said "input pipeline needs to be reconfigured for
    # multinode training". Not webdataset 0.1, which split shards implicitly.
    _sig("wds-nodesplitter", r"you need to add an explicit nodesplitter to your input pipeline|"
         r"input pipeline needs to be reconfigured for multi-?node training",
         "webdataset's WebDataset pipeline runs in a job of several processes (DDP, FSDP, DeepSpeed: world size > 1) "
         "but says nothing of how its shards are split across them; since webdataset 0.2 there is no default, and its "
         "default nodesplitter (single_node_only) refuses a multi-process run rather than let every rank read the "
         "same shards.",
         "Choose the split when building the dataset: wds.WebDataset(urls, nodesplitter=wds.split_by_node) (each rank "
         "its own shards; give at least as many shards as ranks x workers), or resampled=True with .with_epoch(N) for "
         "an endless resampled stream; in a wds.DataPipeline put wds.split_by_node and wds.split_by_worker after the "
         "shard list. Code written for webdataset 0.1 needs this change, or 0.1 itself. A restart fails the same way.",
         retry=False),
    # mosaicml streaming's shared/prefix.py (get_shm_prefix; shared.py in 0.4-0.5): every StreamingDataset registers
    # its local directories in shared memory and refuses one that another registered dataset holds:
    # ValueError(f'Reused local directory: {...} vs {...}. Provide a different one.') (later versions add "If using a
    # unique local directory, try deleting the local directory and call clean_stale_shared_memory()").
    # The two lists are printed with Python's repr (['/path']): a bracket closes each, so neither part runs past it
    # (`\[.*\] vs \[.*\]` backtracked over every `] vs [` of a long line: cubic, review 53).
    _sig("streaming-local-reused", r"Reused local directory: \[(?:(?!Reused local directory: )[^\]\n])*\] vs "
         r"\[(?:(?!Reused local directory: )[^\]\n])*\]\. Provide a different one",
         "mosaicml streaming refused the dataset's local directory: another StreamingDataset on this machine has "
         "registered the same local path in shared memory: a second run (or a second dataset in this run) given the "
         "same local=, or the stale shared memory of an earlier run that crashed or was killed.",
         "Give each concurrent run, and each dataset or split in a run, its own local directory; if no other run uses "
         "it, clear the stale registration before starting: call streaming.base.util.clean_stale_shared_memory() "
         "once (or remove streaming's leftover files in /dev/shm). A restart alone hits the same registration.",
         retry=False),
)
