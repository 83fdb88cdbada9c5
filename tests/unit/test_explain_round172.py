"""Live round 172's rules (issue 45), from DataLoader, Dataset and Sampler mistakes in users' DDP scripts: torch's
DataLoader refusing its sampling arguments (a sampler with shuffle, a batch_sampler with batch_size..., an
IterableDataset given shuffle or a sampler) as dataloader-sampler-conflict, its worker options with num_workers=0 as
dataloader-workers-option, a sampler taking len() of a dataset with no __len__ as dataset-no-len, a None sample in the
default collate as collate-none-sample and numpy's legacy seed range (a worker_init_fn's torch.initial_seed()) as
numpy-seed-range (all sigdata.py); second wordings (other versions' and callers' words than the live cases) and near
misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dataloader-sampler-conflict", "dataloader-workers-option", "dataset-no-len", "collate-none-sample",
       "numpy-seed-range")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "name"), [
    # an IterableDataset given a sampler (torch 1.x-2.x, the sampler's repr after it)
    ("ValueError: DataLoader with IterableDataset: expected unspecified sampler option, but got "
     "sampler=<torch.utils.data.distributed.DistributedSampler object at 0x7f3a2c1d5e50>\n",
     "dataloader-sampler-conflict"),
    ("ValueError: DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
     "batch_sampler=<torch.utils.data.sampler.BatchSampler object at 0x7f00>\n", "dataloader-sampler-conflict"),
    # the batch_sampler refusal as torch 1.x printed it
    ("ValueError: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last\n",
     "dataloader-sampler-conflict"),
    # torch 1.7-1.13's assertion for prefetch_factor
    ('  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 236, in __init__\n'
     "    assert prefetch_factor == 2, ('prefetch_factor option could only be specified in multiprocessing.'\n"
     "AssertionError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
     "enable multiprocessing.\n", "dataloader-workers-option"),
    ("[rank3]: ValueError: persistent_workers option needs num_workers > 0\n", "dataloader-workers-option"),
    # the DataLoader's own RandomSampler (shuffle=True) on a dataset without __len__ (sampler.py num_samples)
    ('  File "/usr/lib/python3/dist-packages/torch/utils/data/sampler.py", line 143, in num_samples\n'
     "    return len(self.data_source)\n"
     "TypeError: object of type 'ShardStream' has no len()\n", "dataset-no-len"),
    # the size check of collate when the batch's first sample is a tuple and a later one is None
    ('  File "/venv/lib/python3.12/site-packages/torch/utils/data/_utils/collate.py", line 207, in <genexpr>\n'
     "    if not all(len(elem) == elem_size for elem in it):\n"
     "TypeError: object of type 'NoneType' has no len()\n", "collate-none-sample"),
    # older torch's default_collate (no "numpy arrays" in the list)
    ("TypeError: batch must contain tensors, numbers, dicts or lists; found <class 'NoneType'>\n",
     "collate-none-sample"),
    # numpy's seed from a plain script, a negative seed
    ('  File "_mt19937.pyx", line 180, in numpy.random._mt19937.MT19937._legacy_seeding\n'
     "ValueError: Seed must be between 0 and 2**32 - 1\n", "numpy-seed-range"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # batch_size=None with drop_last: another of DataLoader's refusals, not a sampler conflict
    ("ValueError: batch_size=None option disables auto-batching and is mutually exclusive with drop_last\n",
     "dataloader-sampler-conflict"),
    # argparse's mutually exclusive group
    ("error: argument --shuffle: not allowed with argument --sampler\n", "dataloader-sampler-conflict"),
    # a negative prefetch_factor with workers: another value, not the num_workers=0 mistake
    ("ValueError: prefetch_factor option should be non-negative\n", "dataloader-workers-option"),
    # len() of a None outside a sampler or collate (a user's own helper)
    ('  File "/w/train.py", line 30, in count\n'
     "    return len(self.items)\n"
     "TypeError: object of type 'NoneType' has no len()\n", "collate-none-sample"),
    ('  File "/w/train.py", line 30, in count\n'
     "    return len(self.items)\n"
     "TypeError: object of type 'generator' has no len()\n", "dataset-no-len"),
    # default_collate refusing another type (a PIL image): a missing transform, not a None sample
    ("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class 'PIL.Image.Image'>\n", "collate-none-sample"),
    # numpy's Generator seed refusal (SeedSequence): other words
    ("ValueError: expected non-negative integer\n", "numpy-seed-range"),
])
def test_near_misses(text, name):
    assert sig(text) != name
