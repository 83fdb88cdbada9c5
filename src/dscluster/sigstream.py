"""Failure signatures of iterable and streaming datasets, from round 209 of issue 45 (live: broken users' scripts run
for real on torch 2.13, transformers 5.23 and accelerate 1.15 under DDP): a stream's length asked for (len() of a
DataLoader over an IterableDataset, a Trainer given a stream and no max_steps), a stream indexed (dataset[i]) or joined
with ConcatDataset, get_worker_info() read with no worker processes, a generator held by a dataset that spawn workers
must pickle, next() on a DataLoader iterator already finished, and accelerate's dispatch of batches of different
shapes. Each pattern is the wording of the component that prints it (torch/utils/data's dataloader.py, dataset.py and
_utils/fetch.py, transformers' Trainer, accelerate's data_loader.py) or the frames where the message is Python's own,
never one log's. sigrounds.py places this table with the round tables, before the exception messages' (sigmessages.py:
its DataLoader signatures, dataloader-unpicklable among them, and dataset-no-len)."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

STREAM_SIGNATURES: tuple[Signature, ...] = (
    # DataLoader.__len__ (torch/utils/data/dataloader.py) for an IterableDataset: `length =
    # self._IterableDataset_len_called = len(self.dataset)`, then Python's "object of type 'X' has no len()". Only
    # under that frame: a sampler's len() of a dataset is dataset-no-len's.
    _sig("iterable-dataset-len",
         r"\bdataloader\.py\"?, line \d+, in __len__\n[^\n]*len\(self\.dataset\)[^\n]*\n" + CARET_LINE +
         r"[^\n]*?(?P<ev>TypeError: object of type '[\w.]+' has no len\(\))",
         "len() was taken of a DataLoader over an IterableDataset (a stream), which asks the dataset for its length, "
         "and the stream defines no __len__: how many batches a stream gives is not known in advance. Most often "
         "len(loader) sizes a learning-rate schedule (total_steps, num_training_steps), a progress bar or the steps "
         "of an epoch, as in a recipe written for a map-style dataset.",
         "Count the steps yourself: samples this rank reads // batch size (the shard's size, when it is known) or a "
         "fixed max_steps, and size the schedule with that; or give the IterableDataset a __len__ returning the "
         "number of samples this rank's stream yields (then len(loader) is that // batch size). A restart fails the "
         "same way.", retry=False),
    # transformers' Trainer: _validate_args (5.x) "The train_dataset does not implement __len__, so the number of
    # training steps cannot be inferred; max_steps has to be specified." and its training loop's older words
    # "args.max_steps must be set to a positive value if dataloader does not have a length, was -1".
    _sig("trainer-iterable-max-steps",
         r"\btrain_dataset does not implement __len__, so the number of training steps cannot be inferred|"
         r"\bmax_steps must be set to a positive value if dataloader does not have a length",
         "The transformers Trainer was given a train_dataset with no length (an IterableDataset, a stream) and no "
         "max_steps: it turns num_train_epochs into a number of optimizer steps through the dataset's length, which "
         "a stream does not have.",
         "Set TrainingArguments(max_steps=N), N = the samples to train on // (per_device_train_batch_size x "
         "gradient_accumulation_steps x the number of processes); the Trainer then starts the stream again as often "
         "as it needs and num_train_epochs is not used. Or give it a map-style dataset with __len__. A restart fails "
         "the same way.", retry=False),
    # torch.utils.data.get_worker_info() returns None outside a DataLoader worker process (num_workers=0, or the
    # dataset iterated directly): an IterableDataset's __iter__ reading its num_workers (or, on a line naming the
    # worker info, its id or seed) fails with Python's "'NoneType' object has no attribute ...".
    _sig("worker-info-none",
         r", in __iter__\n(?=[^\n]*(?:info|worker)[^\n]*\n|(?:[^\n]*\n){1,2}[^\n]*'num_workers')[^\n]*\n" +
         CARET_LINE + r"[^\n]*?(?P<ev>AttributeError: 'NoneType' object has no attribute '(?:num_workers|id|seed)')",
         "The IterableDataset splits its stream between the DataLoader's worker processes with get_worker_info(), "
         "and that returns None where no worker runs it: the DataLoader has num_workers=0 (set to debug, or from a "
         "config) or the dataset is iterated directly, so reading .num_workers or .id of the result fails.",
         "Handle the main-process case: info = get_worker_info(); worker, workers = (info.id, info.num_workers) if "
         "info is not None else (0, 1), then split by rank * workers + worker of world_size * workers. A restart "
         "fails the same way.", retry=False),
    # The DataLoader's worker start (dataloader.py, _MultiProcessingDataLoaderIter.__init__, `w.start()`) under spawn
    # or forkserver pickles the dataset: "TypeError: cannot pickle 'generator' object" (typeobject.c) when it holds
    # a generator. Before dataloader-unpicklable (sigdata.py), whose fix (open handles in the worker, or fork) does
    # not make a one-pass generator a stream each worker can read its own part of.
    _sig("dataloader-generator-unpicklable",
         r"dataloader\.py\"?,? line \d+,? in __init__\s*\n[^\n]*\bw\.start\(\)"
         r"(?:[^\n]*\n){1,40}?[^\n]*?(?P<ev>TypeError: cannot pickle 'generator' object)",
         "The DataLoader's worker processes are started with spawn (or forkserver), which pickles the dataset for "
         "each worker, and the dataset holds a generator object (made once, e.g. in __init__: self.records = "
         "read_records()), which cannot be pickled. A generator held that way is also a one-pass stream: it would "
         "be used up after the first epoch, and forked workers would each replay the same records.",
         "Keep in the dataset only what makes the stream (file paths, rank, world size) and call the generator "
         "function inside __iter__ (def __iter__(self): yield from read_records(...)), splitting the records "
         "between workers with get_worker_info() so that they do not repeat each other's. A restart fails the same "
         "way.", retry=False),
    # A DataLoader iterator asked for more after its last batch: the bare StopIteration raised in torch/utils/data's
    # _utils/fetch.py (an IterableDataset's fetcher) or dataloader.py (_next_data, _next_index, __next__), reaching
    # the script because it called next() itself (a for loop ends quietly on it).
    _sig("dataloader-iterator-exhausted",
         r"(?:_utils[\\/]fetch\.py\"?, line \d+, in fetch|dataloader\.py\"?, line \d+, in "
         r"(?:_next_data|_next_index|__next__))\n[^\n]*\n" + CARET_LINE +
         r"(?:[^\n]*\]:?[ \t])?(?P<ev>StopIteration)[ \t]*(?:\n|$)",
         "next() was called on a DataLoader iterator that had already given all its batches: an iterator made once "
         "with iter(loader) and used across epochs or for a fixed number of steps larger than the batches it holds "
         "(a sharded stream gives this rank fewer batches than computed, or an IterableDataset whose stream is not "
         "started again ends after the first epoch).",
         "Make a new iterator for each epoch (for batch in loader:, or iter(loader) at each epoch's start), or "
         "start it again when it ends: try: batch = next(it) except StopIteration: it = iter(loader); batch = "
         "next(it). Count steps from the batches this rank's shard really gives, and make an IterableDataset's "
         "__iter__ open its stream anew on each call. A restart fails the same way.", retry=False),
    # torch/utils/data/dataset.py, ConcatDataset.__init__: "ConcatDataset does not support IterableDataset".
    _sig("concat-iterable-dataset", r"\bConcatDataset does not support IterableDataset\b",
         "ConcatDataset was given an IterableDataset (a stream): it joins map-style datasets by their lengths and "
         "indices, which a stream does not have.",
         "Chain streams with torch.utils.data.ChainDataset([a, b]) (one after the other), or write an "
         "IterableDataset whose __iter__ yields from each (interleaving them at the mixing ratio wanted); keep "
         "ConcatDataset for map-style datasets. A restart fails the same way.", retry=False),
    # torch/utils/data/dataset.py, Dataset.__getitem__: "Subclasses of Dataset should implement __getitem__." An
    # IterableDataset indexed, or a Dataset subclass without its own __getitem__.
    _sig("iterable-dataset-getitem", r"\bSubclasses of Dataset should implement __getitem__\b",
         "A dataset was indexed (dataset[i], or by code that indexes it: Subset, random_split, a sampler) whose "
         "class defines no __getitem__: most often an IterableDataset, a stream that is read only by iterating it; "
         "or a map-style Dataset whose __getitem__ is misspelt.",
         "Read a stream by iterating it: sample = next(iter(dataset)) for the first sample (a new pass through the "
         "stream), and give it only to a DataLoader with no sampler; for a map-style Dataset define "
         "__getitem__(self, index) and __len__. A restart fails the same way.", retry=False),
    # accelerate/data_loader.py, DataLoaderDispatcher._fetch_batches: the main process concatenates one batch per
    # process (torch.cat) before it splits them: "You can't use batches of different size with `dispatch_batches=True`
    # or when using an `IterableDataset`."
    _sig("accelerate-dispatch-batch-sizes",
         r"\bYou can't use batches of different size with `?dispatch_batches=True`? or when using an `?IterableDataset",
         "accelerate dispatches the batches of a DataLoader over an IterableDataset (dispatch_batches is on by "
         "default for one): the main process reads one batch per process and concatenates them before splitting "
         "them between the ranks, and the batches differ in a dimension other than the first: a collate_fn padding "
         "each batch to its own longest sequence (dynamic padding), or samples of different shapes.",
         "Pad every batch to one fixed length (tokenizer(..., padding=\"max_length\", max_length=N), or a collate_fn "
         "padding to N), or let each rank read its own part of the stream: Accelerator(dataloader_config="
         "DataLoaderConfiguration(dispatch_batches=False)) with the stream split by rank in __iter__; or "
         "split_batches=True (the main process reads one whole batch and slices it). A restart fails the same way.",
         retry=False),
)
