"""Failure signatures of multi-task training and several datasets or loaders in one loop, from round 216 of issue 45
(live: broken users' scripts run for real on torch 2.13 under DDP, gloo): tasks' datasets joined with ConcatDataset
whose samples differ in structure (the default collate's refusal), task-balancing weights for WeightedRandomSampler
that are all zero or not a 1-d sequence, and a batch dict whose key the loop pops, handed out again (itertools.cycle
keeps the first pass's batches). Each pattern is the wording of the component that prints it (torch/utils/data/_utils/
collate.py, torch/utils/data/sampler.py, Python's KeyError under the source line a traceback quotes), never one log's.
sigrounds.py places this table with the other round tables, before the exception messages' (sigmessages.py) and the
generic refused-requirement answer, which would otherwise quote the collate's and the sampler's words."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

MULTITASK_SIGNATURES: tuple[Signature, ...] = (
    # torch/utils/data/_utils/collate.py, collate() on a batch of sequences (tuples, lists): `if not all(len(elem) ==
    # elem_size for elem in it): raise RuntimeError("each element in list of batch should be of equal size")`.
    _sig("collate-sample-structure-differs",
         r"(?P<ev>(?:RuntimeError: )?each element in list of batch should be of equal size)",
         "The DataLoader's default collate got a batch whose samples are sequences (tuples or lists) of different "
         "lengths: the samples of one batch do not have one structure. Datasets of several tasks joined with "
         "ConcatDataset (or one __getitem__ with several branches) return different numbers of fields, such as "
         "(x, y) for one task and (x, y, mask) for another, and a shuffled loader mixes them in one batch; or each "
         "sample holds a plain Python list of its own length (token ids, boxes), which collate zips field by field.",
         "Return the same fields from every sample (give the task without a mask a full mask, or return a dict with "
         "the same keys and a task id), or keep each batch to one task (one DataLoader per task, or a batch_sampler "
         "that draws each batch's indices from one dataset of the ConcatDataset), or pass a collate_fn that groups "
         "or pads the fields; variable-length lists become padded tensors in a collate_fn. A restart fails the same "
         "way.", retry=False),
    # torch/utils/data/sampler.py, WeightedRandomSampler.__iter__: `rand_tensor = torch.multinomial(self.weights,
    # self.num_samples, self.replacement, generator=self.generator)`; ATen's check "invalid multinomial distribution
    # (sum of probabilities <= 0)" under that source line (any other multinomial, a sampling step's, is not bound).
    _sig("weighted-sampler-zero-weights",
         r"rand_tensor = torch\.multinomial\([^\n]{0,200}\n" + CARET_LINE + r"(?P<ev>[^\n]{0,200}?invalid "
         r"multinomial distribution \(sum of probabilities <= 0\))",
         "WeightedRandomSampler drew its indices from weights that sum to zero: every sample's weight is 0 (weights "
         "computed with integer division, 1 // count, which is 0 for any count above 1; a weight per class looked "
         "up for labels or tasks that all got 0; weights multiplied by a mask that removed every sample) or the "
         "weights are empty, and torch.multinomial has no distribution to draw from.",
         "Compute the weights in floating point (1.0 / count, or torch.as_tensor(counts, dtype=torch.double) then "
         "1.0 / counts[task_ids]) and check weights.sum() > 0 and weights.numel() == len(dataset) before building "
         "the sampler. A restart fails the same way.", retry=False),
    # torch/utils/data/sampler.py, WeightedRandomSampler.__init__: `if len(weights_tensor.shape) != 1: raise
    # ValueError("weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}")`.
    _sig("weighted-sampler-weights-not-1d",
         r"(?P<ev>weights should be a 1d sequence but given weights have shape \([\d, ]{0,100}\))",
         "WeightedRandomSampler was given weights that are not one number per sample: a tensor of two dimensions or "
         "more, such as (N, 1) when the per-sample weights are looked up with an index kept as a column "
         "(class_or_task_weight[ids] where ids is (N, 1), a DataFrame column selected as df[['task']]) or a weight "
         "per sample and class.",
         "Give it a 1-d sequence of len(dataset) weights: flatten the index or the result (weights.view(-1), "
         "ids.squeeze(1), df['task'].to_numpy()), and check weights.shape == (len(dataset),). A restart fails the "
         "same way.", retry=False),
    # Python's KeyError, raised by dict.pop(key) with no default, under the source line the traceback quotes
    # (`labels = batch.pop("labels")`), for the key that line names.
    _sig("batch-dict-key-popped",
         r"\.pop\(['\"](?P<key>[\w.-]{1,100})['\"]\)[^\n]{0,200}\n" + CARET_LINE
         + r"(?P<ev>[^\n]{0,200}?KeyError: '(?P=key)')",
         "A dict had no such key when the line above the error popped it (dict.pop with no default): most often the "
         "same dict is used twice, and the first use's pop took the key out. A loader repeated with "
         "itertools.cycle keeps the batches of its first pass and hands the same dict objects out again, so the "
         "second pass finds them without the popped key; a batch reused for a second forward, an evaluation or a "
         "gradient-accumulation step does the same. Otherwise the dataset or collate never produced that key.",
         "Do not change the batch in place: read the key (labels = batch['labels']) and pass the others explicitly, "
         "or pop from a copy (batch = dict(batch)); repeat a loader by making a new iterator when it ends (for "
         "batch in loader inside a while loop, or try: next(it) except StopIteration: it = iter(loader)) instead of "
         "itertools.cycle, which also keeps every batch in memory. A restart fails the same way.", retry=False),
)
