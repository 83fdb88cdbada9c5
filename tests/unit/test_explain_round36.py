"""Round 36's rules (issue 45), from the data side of multi-GPU runs (sigdata.py, sigwords.py): webdataset's refusal of
a multi-process run whose shards have no nodesplitter, mosaicml streaming's refusal of a local directory another
StreamingDataset holds, and torch's shared-memory files, which are /dev/shm and not a disk: a second wording of each,
in another version's or another caller's words than the corpus case it was written from, and near misses that must
not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigdata import DATA_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # webdataset's ValueError raised in a DataLoader worker, re-raised by torch with the worker's traceback, per rank
    ("[rank3]: ValueError: Caught ValueError in DataLoader worker process 0.\n"
     "[rank3]: Original Traceback (most recent call last):\n"
     "[rank3]:   File \"/opt/conda/lib/python3.11/site-packages/webdataset/shardlists.py\", line 94, in "
     "single_node_only\n"
     "[rank3]:     raise ValueError(\n"
     "[rank3]: ValueError: you need to add an explicit nodesplitter to your input pipeline for multi-node training\n",
     "wds-nodesplitter"),
    # the 0.2.x wording, spelled with the hyphen
    ("  File \"webdataset/shardlists.py\", line 61, in single_node_only\n"
     "ValueError: input pipeline needs to be reconfigured for multi-node training\n", "wds-nodesplitter"),
    # streaming's later wording, with its advice about stale shared memory, from a Composer run's rank
    ("[rank1]: ValueError: Reused local directory: ['/tmp/streaming/train'] vs ['/tmp/streaming/train']. Provide a "
     "different one. If using a unique local directory, try deleting the local directory and call "
     "`streaming.base.util.clean_stale_shared_memory()` only once in your script to clean up the stale shared memory "
     "before instantiation of `StreamingDataset`.\n", "streaming-local-reused"),
    # torch's shared-memory file filled, in the file-descriptor strategy's words of an older release
    ("  File \"/usr/lib/python3/dist-packages/torch/multiprocessing/reductions.py\", line 333, in reduce_storage\n"
     "    fd, size = storage._share_fd_()\n"
     "RuntimeError: unable to write to file </torch_1394_2747491098>: No space left on device (28)\n",
     "dev-shm-full"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # webdataset's own advice in a docstring or a log line, with no refusal
    ("INFO: using nodesplitter=wds.split_by_node for 8 ranks\n", "wds-nodesplitter"),
    ("ValueError: you need to add a shard list to your input pipeline\n", "wds-nodesplitter"),
    # a directory reused in another library's words
    ("ValueError: Reused output directory /data/run1; pass --overwrite\n", "streaming-local-reused"),
    ("FileExistsError: [Errno 17] File exists: '/000002_locals'\n", "streaming-local-reused"),
    # a write to an ordinary file on a full disk stays a disk, though torch wrote it
    ("RuntimeError: unable to write to file </data/ckpt/model.pt>: No space left on device (28)\n", "dev-shm-full"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("OSError: [Errno 28] No space left on device\n") == "disk-full"
    assert sig("RuntimeError: unable to write to file </data/ckpt/model.pt>: No space left on device (28)\n") == \
        "disk-full"
    assert sig("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
               "(shm).\n") == "dev-shm-full"
    zh = FAILURES_ZH
    for s in DATA_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("ValueError: you need to add an explicit nodesplitter to your input pipeline for "
                           "multi-node training\n").retry is False
