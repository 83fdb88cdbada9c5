"""Round 216's rules (issue 45, live: multi-task training and several datasets or loaders in one loop): tasks' datasets
joined with ConcatDataset whose samples differ in structure (collate-sample-structure-differs), WeightedRandomSampler
task weights that are all zero (weighted-sampler-zero-weights) or a (N, 1) column (weighted-sampler-weights-not-1d),
and a batch dict popped, then handed out again by itertools.cycle (batch-dict-key-popped); loss-target-out-of-bounds
and embedding-index now name one task's labels given to another task's head and ids numbered from 1. The cases' own
logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("collate-sample-structure-differs", "weighted-sampler-zero-weights", "weighted-sampler-weights-not-1d",
       "batch-dict-key-popped")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("loss-target-out-of-bounds", "embedding-index"))
    assert "another task's head" in by_name["loss-target-out-of-bounds"].cause
    assert "numbered from 1" in by_name["embedding-index"].cause


@pytest.mark.parametrize("case, name", [
    ("live-multitask-zip-uneven-shards", "rank-left-early"),
    ("live-multitask-random-task-gather", "collective-mismatch"),
    ("live-multitask-heads-swapped-labels", "loss-target-out-of-bounds"),
    ("live-multitask-concat-mixed-samples", "collate-sample-structure-differs"),
    ("live-multitask-weighted-int-weights", "weighted-sampler-zero-weights"),
    ("live-multitask-weighted-2d-weights", "weighted-sampler-weights-not-1d"),
    ("live-multitask-aux-iterator-exhausted", "dataloader-iterator-exhausted"),
    ("live-multitask-cycle-batch-pop", "batch-dict-key-popped"),
    ("live-multitask-task-embedding-one-based", "embedding-index"),
    ("live-multitask-ds-backward-per-task", "backward-twice"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # the same refusal in a DataLoader worker, re-raised in the main process
    (_TB + "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
     "last):\n  File \"/opt/torch/utils/data/_utils/collate.py\", line 208, in collate\n    raise RuntimeError(\"each "
     "element in list of batch should be of equal size\")\nRuntimeError: each element in list of batch should be of "
     "equal size\n", "collate-sample-structure-differs"),
    # Python 3.10 (no caret line) and the sampler's call on one line
    (_TB + '  File "/opt/torch/utils/data/sampler.py", line 203, in __iter__\n'
     "    rand_tensor = torch.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)\n"
     "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)\n", "weighted-sampler-zero-weights"),
    # a weight per sample and class
    (_TB + "ValueError: weights should be a 1d sequence but given weights have shape (1200, 3)\n",
     "weighted-sampler-weights-not-1d"),
    # the key in double quotes, popped inside a helper
    (_TB + '  File "train.py", line 12, in step\n    y = inputs.pop("label_ids")\n'
     "KeyError: 'label_ids'\n", "batch-dict-key-popped"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a sampling step's multinomial (generate-style), not the sampler's
    (_TB + "    next_token = torch.multinomial(probs, num_samples=1)\n"
     "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)\n", "weighted-sampler-zero-weights"),
    # tensors of unequal size stacked by collate: another refusal (collate-unequal-size's)
    (_TB + "RuntimeError: stack expects each tensor to be equal size, but got [12] at entry 0 and [9] at entry 1\n",
     "collate-sample-structure-differs"),
    # a KeyError for another key than the one the line pops; a plain lookup, no pop
    (_TB + "    labels = batch.pop(\"labels\")\n      ^^^^^^^^^^^^^^^^^^^\nKeyError: 'input_ids'\n",
     "batch-dict-key-popped"),
    (_TB + "    labels = batch[\"labels\"]\n             ~~~~~^^^^^^^^^^\nKeyError: 'labels'\n",
     "batch-dict-key-popped"),
])
def test_near_misses(text, name):
    assert sig(text) != name
