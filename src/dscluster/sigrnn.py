"""Failure signatures of recurrent models (nn.LSTM, nn.GRU, nn.RNN) and their packed sequences, from round 205 of issue
45 (live: broken users' scripts run for real on torch 2.13 under DDP and a DeepSpeed engine): pack_padded_sequence
given lengths that are not sorted (enforce_sorted) or that hold a 0, lengths longer than the padded tensor's time
dimension (a batch-first tensor packed without batch_first=True), an RNN's PackedSequence output given to a layer
that takes a tensor, and initial hidden states of the wrong shape (laid out batch first, carried into a batch of
another size, without proj_size's features, one tensor where an LSTM takes (h0, c0)) or dtype (oneDNN's CPU LSTM).
Each pattern is the wording of the component that prints it (torch/nn/utils/rnn.py and ATen's PackedSequence.cpp,
torch/nn/modules/rnn.py's check_hidden_size and LSTM.forward, ATen's RNN.cpp), or the _VF call's frame where torch's
words are generic, never one log's. sigrounds.py places this table with the other round tables, before the exception
messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

# torch/nn/modules/rnn.py check_hidden_size: "Expected hidden size (L, B, H), got [l, b, h]" (GRU, RNN, an LSTM's
# cell state "Expected hidden[1] size") or "Expected hidden[0] size ..." (an LSTM's h0). The expected shape is
# (num_layers * num_directions, batch, hidden_size or proj_size); the numbers are captured to compare one dimension.
_EXPECTED = r"Expected hidden(?:\[[01]\])? size \((\d+), (\d+), (\d+)\), got \["

RNN_SIGNATURES: tuple[Signature, ...] = (
    # ATen's PackedSequence.cpp _pack_padded_sequence: "`lengths` array must be sorted in decreasing order when
    # `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence ...".
    _sig("rnn-pack-unsorted-lengths",
         r"`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
         "pack_padded_sequence (or pack_sequence) was given lengths that are not sorted longest first while "
         "enforce_sorted is True, its default: a shuffled loader's batch keeps its sequences in any order.",
         "Pass enforce_sorted=False to pack_padded_sequence (it sorts the batch itself and the RNN's outputs and "
         "hidden state come back in the batch's own order); or sort each batch by length, descending, in the collate "
         "function (and the labels with it). A restart fails the same way.", retry=False),
    # ATen's PackedSequence.cpp: "Length of all samples has to be greater than 0, but found an element in 'lengths'
    # that is <= 0".
    _sig("rnn-pack-zero-length",
         r"Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0",
         "pack_padded_sequence was given a length of 0 (or below): the batch holds an empty sequence (an empty "
         "recording, sentence or document, or one truncated away), and a packed sequence cannot hold a sample with "
         "no time steps.",
         "Drop empty sequences before batching (filter the dataset, or skip them in the collate function), or clamp "
         "the lengths to at least 1 (lengths.clamp(min=1)) and mask those samples' outputs and loss; check how the "
         "lengths are computed (counted before padding, after any truncation). A restart fails the same way.",
         retry=False),
    # An RNN's packed branch (torch/nn/modules/rnn.py: `result = _VF.lstm(input, batch_sizes, ...)`, likewise gru,
    # rnn_tanh, rnn_relu) slicing the packed data by batch_sizes past its end: ATen's narrow check "start (64) + length
    # (8) exceeds dimension size (64)". The padded branch never slices, so only packed lengths longer than the padded
    # tensor's time dimension get there (ATen's packing does not check them against it).
    _sig("rnn-packed-lengths-exceed",
         r"result = _VF\.(?:lstm|gru|rnn_tanh|rnn_relu)\(\n" + CARET_LINE +
         r"[^\n]*?RuntimeError: start \(\d+\) \+ length \(\d+\) exceeds dimension size \(\d+\)",
         "The RNN got a packed sequence whose lengths are longer than the padded tensor it was packed from: most "
         "often a (batch, seq, features) tensor was given to pack_padded_sequence without batch_first=True, so the "
         "batch dimension was read as time and the sequence lengths counted past it (or the lengths count tokens that "
         "padding or truncation cut off).",
         "Pack with the layout the tensor has: pack_padded_sequence(x, lengths, batch_first=True, "
         "enforce_sorted=False) for (batch, seq, features), and pad_packed_sequence(out, batch_first=True) after the "
         "RNN; and keep lengths at most the padded length (lengths.clamp(max=x.size(1)) after truncating). A restart "
         "fails the same way.", retry=False),
    # torch's argument parser on an op given a PackedSequence ("linear(): argument 'input' (position 1) must be Tensor,
    # not PackedSequence"), or a tensor method called on one.
    _sig("rnn-packed-sequence-not-tensor",
         r"must be Tensor, not PackedSequence\b|'PackedSequence' object has no attribute '(?:size|shape|view|reshape|"
         r"dim|transpose|permute|contiguous|squeeze|unsqueeze|mean|sum)'|'PackedSequence' object is not subscriptable",
         "An RNN run on a packed input returns its output as a PackedSequence, and it went on to a layer or tensor "
         "operation that takes a tensor (a Linear head, indexing out[:, -1], .view): the output was never unpacked.",
         "Unpack the RNN's output before the next layer: out, out_lengths = pad_packed_sequence(out, batch_first=True) "
         "(total_length=x.size(1) to keep the padded length); for one vector per sequence use the final hidden state "
         "h_n[-1] (an LSTM's (h_n, c_n)[0]), which is a tensor. A restart fails the same way.", retry=False),
    # check_hidden_size with the first two dimensions swapped: h0/c0 built (batch, num_layers, hidden) for a
    # batch_first RNN, whose batch_first applies to the input and output only.
    _sig("rnn-hidden-batch-first-layout", _EXPECTED + r"\2, \1, \3\]",
         "The RNN's initial hidden state was built batch first, (batch, num_layers, hidden): batch_first=True applies "
         "to the input and output only, and h0 (and an LSTM's c0) stays (num_layers * num_directions, batch, "
         "hidden) whatever batch_first is. The expected and the given shapes in the message are the same numbers "
         "with the first two swapped.",
         "Build the state as (num_layers * num_directions, batch, hidden_size): torch.zeros(num_layers, x.size(0), "
         "hidden_size, device=x.device, dtype=x.dtype), or pass no state at all (zeros are the default); a state "
         "kept batch first elsewhere goes in as h.transpose(0, 1).contiguous(). A restart fails the same way.",
         retry=False),
    # check_hidden_size with only the batch dimension different (and not the swap above): a state of another batch.
    _sig("rnn-hidden-batch-size", _EXPECTED + r"\1, (?!\2,)\d+, \3\]",
         "The RNN's hidden state was made for another batch size than this input's: the expected shape's second "
         "number is the input's batch, the given one the state's. Most often a state carried from batch to batch "
         "(stateful or truncated-BPTT training) met the loader's smaller last batch, or the state was built once for a "
         "fixed batch size; an input laid out (batch, seq) for an RNN built without batch_first=True (or the reverse) "
         "gives the same message, its sequence length read as the batch.",
         "Give each batch a state of its own size: start from None (or torch.zeros(num_layers, x.size(0), hidden)) "
         "whenever the batch size changes, or slice a carried state to it (h[:, :x.size(0)]), or drop the short batch "
         "(DataLoader(drop_last=True)); check batch_first matches the input's layout. A restart fails the same way.",
         retry=False),
    # check_hidden_size with only the last dimension different: an LSTM with proj_size takes h0 of proj_size
    # features (c0 keeps hidden_size), or the state was built for another hidden size.
    _sig("rnn-hidden-feature-size", _EXPECTED + r"\1, \2, (?!\3\])\d+\]",
         "The RNN's initial hidden state has another feature size than the RNN expects (the last number of each shape "
         "in the message). For an LSTM with proj_size, h0 has proj_size features and only c0 has hidden_size; "
         "otherwise the state was built for another hidden size than the layer's (a constant left from an older "
         "config).",
         "Build each state from the layer itself: h0 = torch.zeros(lstm.num_layers * (2 if lstm.bidirectional else "
         "1), batch, lstm.proj_size or lstm.hidden_size) and c0 with lstm.hidden_size (a GRU or RNN's h0 with "
         "hidden_size), or pass no state (zeros are the default). A restart fails the same way.", retry=False),
    # torch/nn/modules/rnn.py LSTM.forward on batched input: "For batched 3-D input, hx and cx should also be 3-D but
    # got (2-D, 2-D) tensors": the state's two parts are hx[0] and hx[1], so one 3-D tensor passed gives two 2-D ones.
    _sig("rnn-lstm-state-not-pair",
         r"For batched 3-D input, hx and cx should also be 3-D but got \(\d-D, \d-D\) tensors",
         "An LSTM got an initial state whose parts are not 3-D: most often one tensor h0 was passed (as a GRU or RNN "
         "takes it) where an LSTM takes the pair (h0, c0), and the LSTM read the tensor's first two slices as h0 and "
         "c0; or h0 and c0 were built without their (num_layers * num_directions) dimension.",
         "Pass the LSTM a tuple (h0, c0), each (num_layers * num_directions, batch, hidden_size) (h0 with proj_size "
         "features when proj_size is set), e.g. (h0, torch.zeros_like(h0)); or pass no state at all (zeros are the "
         "default). A restart fails the same way.", retry=False),
    # oneDNN's LSTM (ATen's RNN.cpp, the CPU path torch takes for float32 and bfloat16 inputs) failing to build its
    # primitive: "could not create a primitive descriptor for the LSTM forward propagation primitive" (older oneDNN:
    # "an LSTM forward propagation primitive"). ATen checks only the input's dtype before taking that path, so an
    # initial state or weights of another dtype than a bfloat16 (or float16) input reach oneDNN, which refuses them.
    _sig("rnn-onednn-lstm-dtype",
         r"could not create a primitive descriptor for (?:the|an) LSTM forward propagation primitive",
         "The CPU LSTM kernel (oneDNN) could not be built for the tensors it was given: in practice their dtypes are "
         "mixed, a bfloat16 (or float16) input beside an initial state (h0, c0) or weights in float32. Most often the "
         "model builds h0/c0 with torch.zeros(...) (float32 by default) while a bf16 DeepSpeed engine, autocast or "
         "model.to(torch.bfloat16) makes the input bfloat16, or a bf16 (mixed precision) run was meant for a GPU and "
         "ran on the CPU.",
         "Give the state the input's dtype and device: torch.zeros(num_layers, batch, hidden, dtype=x.dtype, "
         "device=x.device), or pass no state (zeros of the right dtype are the default); keep the input, the state and "
         "the LSTM's weights in one dtype (or train in float32 on the CPU). A restart fails the same way.",
         retry=False),
)
