"""Round 205's rules (issue 45, live: recurrent models and their packed sequences under DDP and a DeepSpeed engine):
pack_padded_sequence given unsorted lengths with enforce_sorted (rnn-pack-unsorted-lengths) or a length of 0
(rnn-pack-zero-length), a batch-first tensor packed without batch_first=True (rnn-packed-lengths-exceed), an RNN's
PackedSequence output given to a Linear (rnn-packed-sequence-not-tensor), initial hidden states laid out batch first
(rnn-hidden-batch-first-layout), of another batch (rnn-hidden-batch-size) or feature size (rnn-hidden-feature-size),
one tensor where an LSTM takes (h0, c0) (rnn-lstm-state-not-pair) and a float32 state beside a bf16 input
(rnn-onednn-lstm-dtype). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("rnn-pack-unsorted-lengths", "rnn-pack-zero-length", "rnn-packed-lengths-exceed", "rnn-packed-sequence-not-tensor",
       "rnn-hidden-batch-first-layout", "rnn-hidden-batch-size", "rnn-hidden-feature-size", "rnn-lstm-state-not-pair",
       "rnn-onednn-lstm-dtype")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-rnn-pack-unsorted-lengths", "rnn-pack-unsorted-lengths"),
    ("live-rnn-pack-zero-length", "rnn-pack-zero-length"),
    ("live-rnn-h0-batch-first-layout", "rnn-hidden-batch-first-layout"),
    ("live-rnn-hidden-last-batch-smaller", "rnn-hidden-batch-size"),
    ("live-rnn-lstm-hx-not-tuple", "rnn-lstm-state-not-pair"),
    ("live-rnn-packed-into-linear", "rnn-packed-sequence-not-tensor"),
    ("live-rnn-pack-missing-batch-first", "rnn-packed-lengths-exceed"),
    ("live-rnn-bidirectional-head-size", "linear-shape-mismatch"),
    ("live-rnn-lstm-proj-size-h0", "rnn-hidden-feature-size"),
    ("live-rnn-ds-bf16-h0-float32", "rnn-onednn-lstm-dtype"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_RNN = '  File "/usr/lib/python3/dist-packages/torch/nn/modules/rnn.py", line 1124, in forward\n'


@pytest.mark.parametrize("text, name", [
    # pack_sequence (no padding) of an unsorted list
    (_TB + "RuntimeError: `lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
     "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do "
     "not need ONNX exportability.\n", "rnn-pack-unsorted-lengths"),
    # an LSTM's packed branch on an older torch
    (_TB + _RNN + "    result = _VF.lstm(\n"
     "RuntimeError: start (120) + length (16) exceeds dimension size (120).\n", "rnn-packed-lengths-exceed"),
    # out[:, -1] on a GRU's packed output
    (_TB + "TypeError: 'PackedSequence' object is not subscriptable\n", "rnn-packed-sequence-not-tensor"),
    (_TB + "AttributeError: 'PackedSequence' object has no attribute 'view'\n", "rnn-packed-sequence-not-tensor"),
    # a GRU's h0 built (batch, layers, hidden) for a 3-layer batch_first GRU
    (_TB + _RNN + "RuntimeError: Expected hidden size (3, 32, 128), got [32, 3, 128]\n", "rnn-hidden-batch-first-layout"),
    # an LSTM's cell state of a fixed batch size
    (_TB + _RNN + "RuntimeError: Expected hidden[1] size (1, 7, 256), got [1, 64, 256]\n", "rnn-hidden-batch-size"),
    # a GRU's state of an older hidden size
    (_TB + _RNN + "RuntimeError: Expected hidden size (2, 16, 128), got [2, 16, 64]\n", "rnn-hidden-feature-size"),
    (_TB + _RNN + "RuntimeError: For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors\n",
     "rnn-lstm-state-not-pair"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a bidirectional LSTM's h0 without the directions' factor: the first dimension, none of the three above
    (_TB + _RNN + "RuntimeError: Expected hidden size (4, 8, 32), got [2, 8, 32]\n", "rnn-hidden-batch-first-layout"),
    (_TB + _RNN + "RuntimeError: Expected hidden size (4, 8, 32), got [2, 8, 32]\n", "rnn-hidden-batch-size"),
    (_TB + _RNN + "RuntimeError: Expected hidden size (4, 8, 32), got [2, 8, 32]\n", "rnn-hidden-feature-size"),
    # the batch dimension differing by a digit's prefix only (16 against 160) is still another batch, not the layout
    (_TB + _RNN + "RuntimeError: Expected hidden size (1, 16, 32), got [1, 160, 32]\n", "rnn-hidden-batch-first-layout"),
    # an unbatched input given a batched state: not a missing c0
    (_TB + _RNN + "RuntimeError: For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors\n",
     "rnn-lstm-state-not-pair"),
    # the same narrow error from a user's own slicing, not an RNN's packed branch
    (_TB + '  File "model.py", line 12, in forward\n    x = x.narrow(1, start, n)\n'
     "RuntimeError: start (64) + length (8) exceeds dimension size (64).\n", "rnn-packed-lengths-exceed"),
    # a Linear given a tuple (an RNN's (output, h_n) unsplit): not a PackedSequence
    (_TB + "TypeError: linear(): argument 'input' (position 1) must be Tensor, not tuple\n",
     "rnn-packed-sequence-not-tensor"),
])
def test_near_misses(text, name):
    assert sig(text) != name
