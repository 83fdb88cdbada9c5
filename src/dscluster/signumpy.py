"""Failure signatures of numpy and pandas data becoming tensors, from round 199 of issue 45 (live: broken users'
scripts run for real on torch 2.13, numpy 2.4 and pandas 3.1): float64 arrays fed to a float32 model, object arrays
from pandas columns of mixed types, pandas 3's read-only (copy-on-write) arrays written in place, negative-stride views
(np.flip, x[::-1]) handed to torch, np.memmap asked for more than its file holds, np.load of a pickled object array,
a DataFrame column that is not there (a file read with the wrong separator), numpy's removed type aliases, and token
ids of a compact dtype given to nn.Embedding. Each pattern is the wording of the component that prints it (numpy's
_core/memmap.py and lib/_format_impl.py, numpy's __getattr__ of expired attributes, torch's tensor_numpy.cpp and
ATen's checks, pandas/core/frame.py), and the frames where a message is not its own, never one log's. sigrounds.py
places this table just before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

NUMPY_SIGNATURES: tuple[Signature, ...] = (
    # A float64 input to float32 weights, in the direction only numpy's default makes: the input (mat1, the conv's
    # input) is the double one. ATen's addmm "mat1 and mat2 must have the same dtype, but got Double and Float" (the CPU
    # mm's "expected m1 and m2 to have the same dtype, but got: double != float"), conv's "Input type (double) and bias
    # type (float)" and the older "Input type (torch.DoubleTensor) and weight type (torch.FloatTensor)". The reverse
    # (a float input to a double model) and half precision stay dtype-mismatch's.
    _sig("float64-input",
         r"mat1 and mat2 must have the same dtype, but got Double and Float|expected (?:mat1 and mat2|m1 and m2) to "
         r"have the same dtype, but got: double != float|Input type \(double\) and bias type \(float\) should be the "
         r"same|Input type \(torch\.DoubleTensor\) and weight type \(torch\.FloatTensor\) should be the same",
         "The model's weights are float32 and its input is float64 (double): numpy makes float64 arrays by default "
         "(np.random, np.array of Python floats, arithmetic with float64 values, pandas' float columns), and "
         "torch.from_numpy, torch.as_tensor, TensorDataset and the DataLoader's default collate keep numpy's dtype.",
         "Convert to float32 where the arrays become tensors: torch.from_numpy(x).float(), torch.tensor(x, "
         "dtype=torch.float32), or x.astype(np.float32) in the dataset (model.double() would also run, at twice the "
         "memory and time). A restart fails the same way.", retry=False),
    # torch/csrc/utils/tensor_numpy.cpp's numpy_dtype_to_aten: "can't convert np.ndarray of type numpy.object_. The
    # only supported types are: ..." (torch.tensor, from_numpy, as_tensor, the default collate).
    _sig("numpy-object-array", r"can't convert np\.ndarray of type numpy\.object_?\b",
         "torch was given a numpy array of dtype object, which no tensor can hold: a pandas DataFrame's .values / "
         ".to_numpy() over columns of mixed types (a text or category column among the numbers, a numeric column "
         "read as text because of an entry such as 'n/a' or '?', pandas 3's str columns), or np.array of lists of "
         "different lengths or holding None.",
         "Give torch numbers only: select the numeric columns (df.select_dtypes('number')), encode text columns first "
         "(pd.get_dummies, .astype('category').cat.codes, a mapping), convert stray text with pd.to_numeric(col, "
         "errors='coerce') and fill or drop the NaN, then df[cols].to_numpy(dtype=np.float32); print df.dtypes to "
         "find the column. Pad ragged lists to one length. A restart fails the same way.", retry=False),
    # numpy's ufuncs writing in place ("output array is read-only") and item assignment ("assignment destination is
    # read-only") into an array whose WRITEABLE flag is off: pandas 3's copy-on-write views above all.
    _sig("numpy-read-only-write",
         r"ValueError: (?:output array is read-only|assignment destination is read-only)",
         "The script wrote into a numpy array that is read-only: under pandas 3 (copy-on-write) a DataFrame's or "
         "Series' .to_numpy() and .values are read-only views of its data; np.frombuffer of bytes, np.memmap or "
         "np.load(mmap_mode='r'), np.broadcast_to views and arrays shared from Arrow are read-only too. In-place "
         "arithmetic (x -= mean, x /= std) or assignment (x[i] = v) on it is refused.",
         "Take a writable copy before changing it (df[cols].to_numpy(copy=True), x.copy(), np.array(x)), or compute "
         "without writing in place (x = (x - x.mean(0)) / x.std(0)), or change the data in pandas (df[cols] = ...). "
         "A restart fails the same way.", retry=False),
    # torch/csrc/utils/tensor_numpy.cpp: "At least one stride in the given numpy array is negative, and tensors with
    # negative strides are not currently supported. (You can probably work around this by making a copy of your array
    # with array.copy().)" (read before refusals.py's generic "not currently supported").
    _sig("numpy-negative-stride", r"At least one stride in the given numpy array is negative",
         "A numpy array with a negative stride was made a tensor (torch.from_numpy, torch.as_tensor, the "
         "DataLoader's default collate): views made by np.flip, np.fliplr/np.flipud, x[::-1] or img[..., ::-1] "
         "(a flip augmentation, OpenCV's BGR to RGB) do not copy, and torch tensors cannot have negative strides.",
         "Copy the array before it becomes a tensor: np.flip(img, axis).copy() or np.ascontiguousarray(img) in the "
         "dataset's __getitem__ or transform, or flip the tensor instead (torch.flip). A restart fails the same way.",
         retry=False),
    # numpy/_core/memmap.py's __new__: `mm = mmap.mmap(fid.fileno(), bytes, access=acc, offset=start)` with the
    # bytes of dtype x shape beyond a read-only file's end (Python's mmap: "mmap length is greater than file size").
    # np.load(mmap_mode=...) maps through the same frame.
    _sig("numpy-memmap-past-file",
         r"memmap\.py\"?, line \d+, in __new__\n(?:[^\n]*\n){0,4}?[^\n]*?"
         r"(?P<ev>ValueError: mmap length is greater than file size)",
         "np.memmap was asked to map more bytes than the file holds (the dtype's size times the shape, plus the "
         "offset): a dtype wider than the one the file was written with (a uint16 token file opened as int32 or "
         "int64), a shape or count from elsewhere (a meta file, the config) that does not match this file, an "
         "offset past its end, or a file cut short or still being written (by another rank, an interrupted copy).",
         "Open the file with the dtype it was written with (np.memmap(path, dtype=np.uint16, mode='r')), leave the "
         "shape out to map the whole file (or compute it: os.path.getsize(path) // np.dtype(dtype).itemsize), and "
         "convert the slices you read (.astype(np.int64)); where one rank writes the file, open it on the others "
         "only after a barrier. A restart fails the same way.", retry=False),
    # numpy/lib/_format_impl.py's read_array (format.py before numpy 2): "Object arrays cannot be loaded when
    # allow_pickle=False" (np.load's default since numpy 1.16.3).
    _sig("numpy-load-allow-pickle", r"Object arrays cannot be loaded when allow_pickle=False",
         "np.load refused the file: it holds an object array (np.save pickles a list of arrays of different "
         "lengths, a dict, or values of mixed types), and np.load does not unpickle by default (allow_pickle=False "
         "since numpy 1.16.3).",
         "For a file you or your own pipeline wrote, np.load(path, allow_pickle=True) (for a dict, then .item()); "
         "better, store ragged data without pickles: one flat array and the offsets (np.concatenate(seqs), "
         "np.cumsum of the lengths), a padded 2-D array, or np.savez with one array per key. Never allow pickles "
         "from a source you do not trust. A restart fails the same way.", retry=False),
    # pandas/core/frame.py's DataFrame.__getitem__ (columns.get_loc, or _get_indexer_strict for a list: "None of
    # [Index([...])] are in the [columns]") raising KeyError for a column the frame does not have.
    _sig("pandas-column-missing",
         r"pandas[/\\]core[/\\]frame\.py\"?, line \d+, in __getitem__\n(?:[^\n]*\n){0,10}?[^\n]*?"
         r"(?P<ev>KeyError: [^\n]{1,200})",
         "The script asked a pandas DataFrame for a column it does not have (the KeyError names it): the file was "
         "read with the wrong separator (a tab- or semicolon-separated file read with read_csv's default comma has "
         "one column, named after the whole header line), the header is not the file's first line, or the name is "
         "spelled, cased or spaced differently from the file's.",
         "Print df.columns and df.shape after reading; give read_csv the file's separator (sep='\\t' for a TSV, "
         "sep=';', or sep=None with engine='python' to detect it) and header row, and strip stray spaces "
         "(df.columns = df.columns.str.strip()). A restart fails the same way.", retry=False),
    # numpy's module __getattr__ for expired names: "`np.float` was a deprecated alias for the builtin `float`..."
    # (the aliases removed in numpy 1.24: float, int, bool, object, str, complex, long, unicode) and numpy 2.0's
    # "`np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead." (np.Inf, np.float_, np.product, ...).
    _sig("numpy-alias-removed",
         r"`np\.\w+` was a deprecated alias for the builtin `\w+`|`np\.\w+` was removed in the NumPy 2\.0 release",
         "Code written for an older numpy uses a name numpy has removed: the type aliases np.float, np.int, "
         "np.bool, np.object (removed in numpy 1.24) or names numpy 2.0 removed (np.NaN, np.Inf, np.float_, "
         "np.product...); the installed numpy is newer than the code. The traceback's last frame says whose code it "
         "is: the script's own, or an installed package older than this numpy.",
         "In your own code use what numpy's message names (float, int, bool, or np.float64 / np.int64; np.nan, "
         "np.inf); for an installed package, upgrade it to a release made for this numpy, or, where the rest of the "
         "environment allows, pin numpy below the release that removed the name. A restart fails the same way.",
         retry=False),
    # ATen's checkScalarTypes for embedding's indices: "Expected tensor for argument #1 'indices' to have one of the
    # following scalar types: Long, Int; but got CPUUInt16Type instead (while checking arguments for embedding)"
    # (torch < 1.8: "to have scalar type Long; but got torch.FloatTensor instead").
    _sig("embedding-indices-dtype",
         r"Expected tensor for argument #1 'indices' to have (?:one of the following scalar types: Long, Int|"
         r"scalar type Long); but got [\w.]+ instead \(while checking arguments for embedding",
         "nn.Embedding (F.embedding) got token ids that are not int64 or int32: ids kept in a compact dtype "
         "(uint16 or uint8 from a nanoGPT-style .bin corpus read with np.fromfile or np.memmap, then "
         "torch.from_numpy), or floats (a float array, torch.Tensor(ids), ids converted with the float features).",
         "Convert the ids to int64 where the batch is made: torch.from_numpy(chunk.astype(np.int64)) or ids.long() "
         "(keep the compact dtype on disk only). A restart fails the same way.", retry=False),
)
