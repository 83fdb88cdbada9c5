"""Round 209's rules (issue 45, live: iterable and streaming datasets, sharded by hand): len() of a DataLoader over an
IterableDataset (iterable-dataset-len), a Trainer given a stream and no max_steps (trainer-iterable-max-steps),
get_worker_info() read with num_workers=0 (worker-info-none), a generator held by a dataset that spawn workers pickle
(dataloader-generator-unpicklable), next() on a finished DataLoader iterator (dataloader-iterator-exhausted), streams
joined with ConcatDataset (concat-iterable-dataset), a stream indexed (iterable-dataset-getitem) and accelerate's
dispatch of batches of different shapes (accelerate-dispatch-batch-sizes). The cases' own logs, second wordings and
near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("iterable-dataset-len", "trainer-iterable-max-steps", "worker-info-none", "dataloader-generator-unpicklable",
       "dataloader-iterator-exhausted", "concat-iterable-dataset", "iterable-dataset-getitem",
       "accelerate-dispatch-batch-sizes")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-stream-len-for-scheduler", "iterable-dataset-len"),
    ("live-stream-trainer-no-max-steps", "trainer-iterable-max-steps"),
    ("live-stream-worker-info-none", "worker-info-none"),
    ("live-stream-generator-spawn-pickle", "dataloader-generator-unpicklable"),
    ("live-stream-next-after-exhausted", "dataloader-iterator-exhausted"),
    ("live-stream-concat-iterable", "concat-iterable-dataset"),
    ("live-stream-index-peek", "iterable-dataset-getitem"),
    ("live-stream-generator-as-dataset", "dataset-no-len"),
    ("live-stream-accelerate-dynamic-padding", "accelerate-dispatch-batch-sizes"),
    ("live-stream-byte-range-uneven", "collective-mismatch"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_DATA = "/usr/local/lib/python3.10/dist-packages/torch/utils/data"


@pytest.mark.parametrize("text, name", [
    # an older torch's DataLoader.__len__, tqdm asking for the length
    (_TB + f'  File "{_DATA}/dataloader.py", line 487, in __len__\n'
     "    length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[assignment, arg-type]\n"
     "TypeError: object of type 'ShardedStream' has no len()\n", "iterable-dataset-len"),
    # transformers 4.x's training loop
    (_TB + "ValueError: args.max_steps must be set to a positive value if dataloader does not have a length, was -1\n",
     "trainer-iterable-max-steps"),
    # the worker id read first, on a line naming the worker info
    (_TB + '  File "data.py", line 31, in __iter__\n    start = worker_info.id * per_worker\n'
     "AttributeError: 'NoneType' object has no attribute 'id'\n", "worker-info-none"),
    # the multi-process iterator's own StopIteration after its last batch
    (_TB + f'  File "{_DATA}/dataloader.py", line 1448, in _next_data\n    raise StopIteration\n'
     "StopIteration\n", "dataloader-iterator-exhausted"),
    # accelerate's message without the backticks
    ("[rank0]: RuntimeError: You can't use batches of different size with dispatch_batches=True or when using an "
     "IterableDataset.either pass dispatch_batches=False\n", "accelerate-dispatch-batch-sizes"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a sampler's len() of a dataset (dataset-no-len's), not DataLoader.__len__
    (_TB + f'  File "{_DATA}/distributed.py", line 91, in __init__\n'
     "    self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)  # type: ignore[arg-type]\n"
     "TypeError: object of type 'Stream' has no len()\n", "iterable-dataset-len"),
    # a record that is None in the user's own __iter__, not the worker info
    (_TB + '  File "data.py", line 31, in __iter__\n    yield record.id, record.text\n'
     "AttributeError: 'NoneType' object has no attribute 'id'\n", "worker-info-none"),
    # a generator broadcast with broadcast_object_list: no DataLoader worker start
    (_TB + '  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2958, in '
     "_object_to_tensor\n    _pickler(f).dump(obj)\nTypeError: cannot pickle 'generator' object\n",
     "dataloader-generator-unpicklable"),
    # StopIteration from the user's own next() of a plain iterator
    (_TB + '  File "train.py", line 52, in main\n    x = next(it)\n           ^^^^^^^^\nStopIteration\n',
     "dataloader-iterator-exhausted"),
    # PEP 479's RuntimeError naming StopIteration, after a DataLoader frame
    (_TB + f'  File "{_DATA}/_utils/fetch.py", line 33, in fetch\n    data.append(next(self.dataset_iter))\n'
     "RuntimeError: generator raised StopIteration\n", "dataloader-iterator-exhausted"),
])
def test_near_misses(text, name):
    assert sig(text) != name
