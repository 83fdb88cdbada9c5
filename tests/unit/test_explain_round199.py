"""Round 199's rules (issue 45, live: numpy and pandas data feeding tensors in distributed training): float64 inputs to
a float32 model (float64-input), object arrays from mixed-type pandas columns (numpy-object-array), pandas 3's
read-only arrays written in place (numpy-read-only-write), negative-stride views made tensors (numpy-negative-stride),
np.memmap asked for more than its file holds (numpy-memmap-past-file), np.load of a pickled object array
(numpy-load-allow-pickle), a DataFrame column that is not there (pandas-column-missing), numpy's removed aliases
(numpy-alias-removed) and compact token ids given to nn.Embedding (embedding-indices-dtype). The cases' own logs,
second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("float64-input", "numpy-object-array", "numpy-read-only-write", "numpy-negative-stride",
       "numpy-memmap-past-file", "numpy-load-allow-pickle", "pandas-column-missing", "numpy-alias-removed",
       "embedding-indices-dtype")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-numpy-float64-features-double", "float64-input"),
    ("live-numpy-pandas-object-column", "numpy-object-array"),
    ("live-numpy-pandas3-readonly-inplace", "numpy-read-only-write"),
    ("live-numpy-flip-negative-stride", "numpy-negative-stride"),
    ("live-numpy-memmap-int64-over-uint16", "numpy-memmap-past-file"),
    ("live-numpy-load-object-array-allow-pickle", "numpy-load-allow-pickle"),
    ("live-numpy-read-csv-tsv-one-column", "pandas-column-missing"),
    ("live-numpy-np-float-alias-removed", "numpy-alias-removed"),
    ("live-numpy-uint16-token-ids-embedding", "embedding-indices-dtype"),
    ("live-numpy-int32-labels-cross-entropy", "loss-target-dtype"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_NP = "/usr/local/lib/python3.10/dist-packages/numpy"
_PD = "/usr/local/lib/python3.10/dist-packages/pandas"


@pytest.mark.parametrize("text, name", [
    # a Conv2d given float64 images (its bias check's words)
    (_TB + "RuntimeError: Input type (double) and bias type (float) should be the same\n", "float64-input"),
    # the CPU mm's older wording behind `x @ w`
    (_TB + "RuntimeError: expected m1 and m2 to have the same dtype, but got: double != float\n", "float64-input"),
    # torch.from_numpy of a column of None-holding values
    (_TB + "TypeError: can't convert np.ndarray of type numpy.object_. The only supported types are: float64, "
     "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.\n", "numpy-object-array"),
    # item assignment into np.frombuffer's array
    (_TB + "    arr[mask] = 0\nValueError: assignment destination is read-only\n", "numpy-read-only-write"),
    # an OpenCV BGR->RGB view given to torch.from_numpy directly
    (_TB + "ValueError: At least one stride in the given numpy array is negative, and tensors with negative strides "
     "are not currently supported. (You can probably work around this by making a copy of your array  with "
     "array.copy().)\n", "numpy-negative-stride"),
    # np.load(mmap_mode="r") of a truncated .npy: the same memmap frame
    (_TB + f'  File "{_NP}/lib/npyio.py", line 453, in load\n    return format.open_memmap(file, mode=mmap_mode)\n'
     f'  File "{_NP}/lib/format.py", line 945, in open_memmap\n    marray = numpy.memmap(filename, dtype=dtype)\n'
     f'  File "{_NP}/core/memmap.py", line 267, in __new__\n'
     "    mm = mmap.mmap(fid.fileno(), bytes, access=acc, offset=start)\n"
     "ValueError: mmap length is greater than file size\n", "numpy-memmap-past-file"),
    ("[rank1]: ValueError: Object arrays cannot be loaded when allow_pickle=False\n", "numpy-load-allow-pickle"),
    # a list of columns (pandas 2's _get_indexer_strict)
    (_TB + f'  File "{_PD}/core/frame.py", line 3899, in __getitem__\n'
     '    indexer = self.columns._get_indexer_strict(key, "columns")[1]\n'
     f'  File "{_PD}/core/indexes/base.py", line 6175, in _raise_if_missing\n'
     '    raise KeyError(f"None of [{key}] are in the [{axis_name}]")\n'
     "KeyError: \"None of [Index(['x1', 'x2'], dtype='object')] are in the [columns]\"\n", "pandas-column-missing"),
    # numpy 2.0's removed names
    (_TB + "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead.\n",
     "numpy-alias-removed"),
    # torch 1.7's wording, float ids
    (_TB + "RuntimeError: Expected tensor for argument #1 'indices' to have scalar type Long; but got "
     "torch.FloatTensor instead (while checking arguments for embedding)\n", "embedding-indices-dtype"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # half precision against float32 weights: DeepSpeed's fp16, not numpy's float64
    (_TB + "RuntimeError: mat1 and mat2 must have the same dtype, but got Half and Float\n", "float64-input"),
    # a float32 input to a model made double: the reverse direction
    (_TB + "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Double\n", "float64-input"),
    # mmap of an empty file (Python's own words, no numpy frame)
    (_TB + "ValueError: cannot mmap an empty file\n", "numpy-memmap-past-file"),
    # Python's mmap past a file's end without numpy's memmap frame
    (_TB + '  File "reader.py", line 12, in open\n    m = mmap.mmap(f.fileno(), n)\n'
     "ValueError: mmap length is greater than file size\n", "numpy-memmap-past-file"),
    # a plain dict's KeyError, no pandas frame
    (_TB + '  File "train.py", line 51, in collate\n    labels = [b["label"] for b in batch]\n'
     "KeyError: 'label'\n", "pandas-column-missing"),
    # an installed package's module has no attribute (not numpy's removed alias)
    (_TB + "AttributeError: module 'numpy' has no attribute 'typeDict'\n", "numpy-alias-removed"),
    # an out-of-range token id: the right dtype, a wrong value
    (_TB + "IndexError: index out of range in self\n", "embedding-indices-dtype"),
])
def test_near_misses(text, name):
    assert sig(text) != name
