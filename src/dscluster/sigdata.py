"""Failure signatures from the data side of multi-GPU runs (round 36 of issue 45): the data-loading libraries that
refuse a distributed run's configuration in their own words. webdataset's pipeline, started in a run of several
processes with no rule for splitting its shards across them; mosaicml streaming's StreamingDataset, whose local
cache directory another dataset on the machine already holds. Round 99: a Hugging Face datasets cache file that
another process was still writing, or that vanished under it (ranks, nodes or runs preparing the same cache at
once), and Megatron's sample-index files that one rank built where the other nodes cannot read them. Each pattern
is the wording of the library that prints it (webdataset's shardlists.py, streaming's shared/prefix.py, the cache
layout datasets' builder.py and arrow_dataset.py name, Megatron's gpt_dataset.py file names), never one log's. sigmessages.py places this
table with the storage one (sigstorage.py), before the training stack's and the last resorts: a library's own
ValueError is more specific than a Python error's type. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigseeding import SEEDING_SIGNATURES
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import _PICKLE_REFUSED

# A path inside a Hugging Face datasets cache, as datasets names its parts: builder.py's incomplete_dir (the directory
# being written, "<dir>.incomplete"), arrow_dataset.py's _get_cache_file_path ("cache-" + a 16-hex-digit fingerprint
# + ".arrow", with "_00000_of_00008" per shard of a map(num_proc=N)), and a packaged builder's directory
# "<builder>/default[-<id>]/<version>/" (_relative_data_dir; json/csv/parquet/... data_files). The quoted path is
# read lazily up to the first such part, within the line. Review 115: not huggingface_hub's own download files, which
# it names "<etag>.incomplete" too: a blob of its cache (hub/models--<org>--<name>/blobs/<etag>[.<8 hex>].incomplete,
# file_download.py) or a file downloaded into a local_dir (<dir>/.cache/huggingface/download/, .huggingface/download/
# before 0.24; _local_folder.py): a model's download, whatever cut it short (Windows' 260-character path limit,
# huggingface/huggingface_hub#2374 and #3245), not the datasets cache.
_HUB_DOWNLOAD = r"(?:[/\\]blobs[/\\]|huggingface[/\\]+download[/\\])"
_HF_CACHE_PATH = (r"(?![^'\"\n]{0,400}?" + _HUB_DOWNLOAD + r")"
                  r"[^'\"\n]{0,400}?(?:\.incomplete(?=['\"/\\])|[/\\]cache-[0-9a-f]{16}(?:_\d{5}_of_\d{5})?\.arrow|"
                  r"[/\\](?:json|csv|parquet|text|arrow|pandas|generator|imagefolder|audiofolder|videofolder|"
                  r"webdataset|sql|xml)[/\\]default(?:-[0-9a-z]{8,20})?[/\\]\d+\.\d+\.\d+[/\\])")

DATA_SIGNATURES: tuple[Signature, ...] = (
    *SEEDING_SIGNATURES,  # round 190 (determinism and seeding), sigseeding.py
    # webdataset's shardlists.py, single_node_only (the default nodesplitter of wds.WebDataset since v2): with
    # world_size > 1 it raises ValueError("you need to add an explicit nodesplitter to your input pipeline for
    # multi-node training"); 0.2.x before the maintainer's rewording said "input pipeline needs to be reconfigured for
    # multinode training". Not webdataset 0.1, which split shards implicitly.
    _sig("wds-nodesplitter", r"you need to add an explicit nodesplitter to your input pipeline|"
         r"input pipeline needs to be reconfigured for multi-?node training",
         "webdataset's WebDataset pipeline runs in a job of several processes (DDP, FSDP, DeepSpeed: world size > 1) "
         "but says nothing of how its shards are split across them; since webdataset 0.2 there is no default, and its "
         "default nodesplitter (single_node_only) refuses a multi-process run rather than let every rank read the "
         "same shards.",
         "Choose the split when building the dataset: wds.WebDataset(urls, nodesplitter=wds.split_by_node) (each rank "
         "its own shards; give at least as many shards as ranks x workers), or resampled=True with .with_epoch(N) for "
         "an endless resampled stream; in a wds.DataPipeline put wds.split_by_node and wds.split_by_worker after the "
         "shard list. Code written for webdataset 0.1 needs this change, or 0.1 itself. A restart fails the same way.",
         retry=False),
    # mosaicml streaming's shared/prefix.py (get_shm_prefix; shared.py in 0.4-0.5): every StreamingDataset registers
    # its local directories in shared memory and refuses one that another registered dataset holds:
    # ValueError(f'Reused local directory: {...} vs {...}. Provide a different one.') (later versions add "If using a
    # unique local directory, try deleting the local directory and call clean_stale_shared_memory()").
    # The two lists are printed with Python's repr (['/path']): a bracket closes each, so neither part runs past it
    # (`\[.*\] vs \[.*\]` backtracked over every `] vs [` of a long line: cubic, review 53).
    _sig("streaming-local-reused", r"Reused local directory: \[(?:(?!Reused local directory: )[^\]\n])*\] vs "
         r"\[(?:(?!Reused local directory: )[^\]\n])*\]\. Provide a different one",
         "mosaicml streaming refused the dataset's local directory: another StreamingDataset on this machine has "
         "registered the same local path in shared memory: a second run (or a second dataset in this run) given the "
         "same local=, or the stale shared memory of an earlier run that crashed or was killed.",
         "Give each concurrent run, and each dataset or split in a run, its own local directory; if no other run uses "
         "it, clear the stale registration before starting: call streaming.base.util.clean_stale_shared_memory() "
         "once (or remove streaming's leftover files in /dev/shm). A restart alone hits the same registration.",
         retry=False),
    # A datasets cache file not there when a process went to read, rename or chmod it (ENOENT; EEXIST or ENOTEMPTY
    # for the .incomplete directory): CPython's "[Errno 2] No such file or directory: 'PATH'" (also under datasets'
    # "Cannot find data file. Original error:"), and pyarrow's "Failed to open local file 'PATH'. Detail: [errno 2]
    # ..." (arrow's io_util.cc, as datasets' ArrowWriter and memory-mapped tables print it). Several processes built
    # the same cache at once: every rank where the script has no main_process_first, or transformers'/accelerate's
    # main_process_first with local=True on a cache the nodes share (one writer per node), or a map() every rank runs
    # (ms-swift#10121: the losing ranks' os.chmod of Dataset._map_single). Not ENOSPC, EACCES or EDQUOT on the same
    # paths (a full disk, a permission), and not a data file of the user's own (the cache's parts only).
    _sig("datasets-cache-race",
         r"(?:\[Errno (?:2|17|39)\] [^\n:'\"]{0,40}|No such file or directory): ['\"]" + _HF_CACHE_PATH + r"|"
         r"Failed to open local file ['\"]" + _HF_CACHE_PATH + r"[^'\"\n]{0,300}['\"]\. Detail: \[errno 2\]",
         "A file of the Hugging Face datasets cache was gone when this process went to read or finish it: several "
         "processes prepared the same dataset cache at once (every rank of the run, each node's local rank 0 on a "
         "cache the nodes share, or several runs given one cache), and one read, renamed or removed what another "
         "was still writing. A network file system under the cache (HF_DATASETS_CACHE on NFS) widens the window.",
         "Prepare the dataset once before the ranks read it: one process runs load_dataset/map (a preprocessing "
         "step, then load_from_disk, LLaMA-Factory's tokenized_path, ms-swift's cached dataset), or wrap it in "
         "main_process_first with local=False when the nodes share the cache (LLaMA-Factory: data_shared_file_system: "
         "true) and local=True only for a node-local cache; give separate runs separate caches; delete the partial "
         "cache directory (the .incomplete one, the run's cache-*.arrow files) before starting again.",
         retry=False),
    # Megatron's sample-index cache, which global rank 0 builds and every other rank then loads (numpy.load): core's
    # gpt_dataset.py "<hash>-<Dataset>-<split>-{document,sample,shuffle}_index.npy" under --data-cache-path, the
    # legacy gpt_dataset.py's (Megatron-LM, Megatron-DeepSpeed, gpt-neox) "<prefix>_{doc,sample,shuffle}_idx.npy".
    # Absent on a rank's node: the data and its cache on a node-local disk (Megatron-LM#907, #356), a different path
    # on that node, or read before rank 0's files reached it.
    _sig("data-index-node-local",
         r"No such file or directory: ['\"][^'\"\n]{0,400}?(?:-(?:document|sample|shuffle)_index|"
         r"_(?:doc|sample|shuffle)_idx)\.npy['\"]",
         "A rank could not find the dataset's sample-index files (document, sample and shuffle index .npy): Megatron "
         "builds them on global rank 0 only and every other rank loads them, so a node whose disk does not have them "
         "fails: the data path or its index cache is on each node's own disk rather than storage all nodes share, "
         "or names another directory on that node.",
         "Put the data's index cache where every node reads the same files at the same path (a shared file system; "
         "Megatron's --data-cache-path), or build the indexes on each node (gpt-neox: use_shared_fs: false), or "
         "build them once on one node and copy them to the same path on every node before training. A restart "
         "fails the same way.",
         retry=False),
    # torch's DataLoader with num_workers > 0 starting its workers (torch/utils/data/dataloader.py,
    # _MultiProcessingDataLoaderIter.__init__: `w.start()`): under the spawn or forkserver start method (Windows' and
    # macOS's default, multiprocessing_context="spawn", mp.set_start_method("spawn"), Python 3.14's forkserver on
    # Linux) multiprocessing pickles the worker's arguments (the dataset, collate_fn, worker_init_fn, the sampler's
    # iterator) and pickle refuses one (sigwords._PICKLE_REFUSED, CPython's words). Read before spawn-unpicklable
    # (sigtraining.py), whose cause is a strategy that spawns the training processes: here the DataLoader's workers.
    # Recent torch warns beside it (dataloader.py: "Got pickle error when attempting to start a worker Process. ...").
    _sig("dataloader-unpicklable", r"dataloader\.py\"?,? line \d+,? in __init__\s*\n[^\n]*\bw\.start\(\)"
         r"(?:[^\n]*\n){1,40}?[^\n]*?(?P<ev>" + _PICKLE_REFUSED + ")|"
         r"Got pickle error when attempting to start a worker Process",  # recent torch's warning at w.start()
         "A DataLoader with num_workers > 0 could not start its worker processes: they are started with the spawn "
         "(or forkserver) method, which pickles what each worker needs (the dataset, collate_fn, worker_init_fn), "
         "and one of those cannot be pickled: a function or class defined inside another function (<locals>), a "
         "lambda, or an object holding a lock, an open file or database handle. The message names it.",
         "Define the collate_fn, worker_init_fn and the dataset's class at module level (functools.partial of a "
         "module-level function for arguments), and open files or handles inside the worker (in __getitem__ or "
         "worker_init_fn) rather than in __init__; or use the fork start method where the platform allows it "
         "(multiprocessing_context=\"fork\" on Linux, when no CUDA was initialized before), or num_workers=0. A "
         "restart fails the same way.", retry=False),
    # Round 164: torch's DataLoader worker crashed in native code. The worker's own SIGSEGV handler (torch/csrc/
    # DataLoader.cpp, SIGNAL_HANDLER(SIGSEGV, ...) in libtorch_python) prints "ERROR: Unexpected segmentation fault
    # encountered in worker." before re-raising it; the main process then fails with "DataLoader worker (pid(s) N)
    # exited unexpectedly" (dataloader.py, _try_get_data) or, from the SIGCHLD check (_error_if_any_worker_fails),
    # "DataLoader worker (pid N) is killed by signal: Segmentation fault." Not the worker's bus error (/dev/shm,
    # dev-shm-full) nor its "killed by signal: Killed" (memcg-oom), nor a rank's own segfault (segfault).
    _sig("dataloader-worker-segfault", r"ERROR: Unexpected segmentation fault encountered in worker\b|"
         r"DataLoader worker \(pid \d+\) is killed by signal: Segmentation fault\b",
         "A DataLoader worker process crashed in native code (a segmentation fault) while it produced a batch: code "
         "that Dataset.__getitem__ or collate_fn runs in C (an image, video or audio decoder, a tokenizer, a C "
         "extension or a ctypes call) crashed on a sample (a corrupt or unusual file), or a library is not safe after "
         "fork (it started threads or a GPU context in the main process before the workers were forked). The rank "
         "then failed because its worker was gone.",
         "Run the loader with num_workers=0 and faulthandler on (python -X faulthandler, or faulthandler.enable()): "
         "the crash then happens in the main process and prints the Python line and the sample; skip or fix that "
         "record, update or replace the library, or start the workers with multiprocessing_context=\"spawn\" when it "
         "is not fork-safe. A restart meets the same sample again.", retry=False),
    # Round 165: torch.utils.data.DistributedSampler.__init__ (torch/utils/data/distributed.py, since torch 1.8):
    # `raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")`: the rank
    # given (or the process group's) is outside num_replicas.
    _sig("sampler-rank-out-of-range", r"Invalid rank -?\d+, rank should be in the interval \[0, -?\d+\]",
         "DistributedSampler was given a rank outside [0, num_replicas - 1]: num_replicas is smaller than the number "
         "of processes (a hard-coded or the script's own --world_size left at its default, the number of GPUs of one "
         "node on several nodes), or the rank passed is not the global rank (-1, a --local_rank default when the "
         "launcher did not set it; a local rank on the second node counts from 0 again).",
         "Leave num_replicas and rank out (DistributedSampler reads them from the initialised process group: "
         "dist.get_world_size() and dist.get_rank()) or pass exactly those; never a per-node count or the local rank. "
         "A restart fails the same way.", retry=False),
    # Round 172: torch's DataLoader.__init__ (torch/utils/data/dataloader.py) refusing its sampling arguments, the same
    # words since torch 1.2: an IterableDataset given shuffle/sampler/batch_sampler ("DataLoader with IterableDataset:
    # expected unspecified shuffle option, but got shuffle=True"), a sampler with shuffle=True ("sampler option is
    # mutually exclusive with shuffle"), a batch_sampler with batch_size/shuffle/sampler/drop_last. Not
    # "batch_size=None option disables auto-batching ..." (a different mistake) nor Lightning's re-instantiation words.
    _sig("dataloader-sampler-conflict",
         r"DataLoader with IterableDataset: expected unspecified (?:shuffle|sampler|batch_sampler) option|"
         r"\bsampler option is mutually exclusive with shuffle\b|"
         r"\bbatch_sampler option is mutually exclusive with batch_size, shuffle, sampler,? and drop_last",
         "torch's DataLoader refused its sampling arguments: a sampler (DistributedSampler) was passed together with "
         "shuffle=True, a batch_sampler together with batch_size, shuffle, sampler or drop_last, or an "
         "IterableDataset was given shuffle, a sampler or a batch_sampler, which it cannot use (an IterableDataset "
         "decides its own order).",
         "Let the sampler do the shuffling: DataLoader(ds, batch_size=B, sampler=DistributedSampler(ds, shuffle=True)) "
         "with no shuffle argument, and call sampler.set_epoch(epoch) each epoch; with a batch_sampler pass only it "
         "(batch size and drop_last go to the BatchSampler); with an IterableDataset shuffle and split the stream "
         "between ranks inside its __iter__ (a shuffle buffer, shards by rank) and pass neither. A restart fails the "
         "same way.", retry=False),
    # DataLoader.__init__'s worker options with num_workers=0: "persistent_workers option needs num_workers > 0" and
    # "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable
    # multiprocessing, otherwise set prefetch_factor to None." (torch 2.x, a ValueError; torch 1.7-1.13 an
    # AssertionError with "multiprocessing. let num_workers > 0 to enable multiprocessing.").
    _sig("dataloader-workers-option",
         r"\bpersistent_workers option needs num_workers > 0|"
         r"\bprefetch_factor option could only be specified in multiprocessing\.?\s*let num_workers > 0",
         "torch's DataLoader was given an option that only worker processes use (persistent_workers=True or a "
         "prefetch_factor) while num_workers is 0, so there are no workers: num_workers was set to 0 (to debug, or "
         "from a config or a CPU count that came out 0) and the worker options were kept.",
         "Either give the DataLoader workers (num_workers > 0), or leave persistent_workers and prefetch_factor out "
         "(prefetch_factor=None) when num_workers is 0: set them only where num_workers > 0, e.g. "
         "persistent_workers=num_workers > 0. A restart fails the same way.", retry=False),
    # A sampler taking len() of a dataset that has none: DistributedSampler.__init__ (torch/utils/data/
    # distributed.py: `math.ceil(len(self.dataset) / self.num_replicas)`) or sampler.py's RandomSampler/
    # SequentialSampler (`len(self.data_source)`), then Python's "TypeError: object of type 'X' has no len()".
    # Only under those frames: another len() of an object without one is not this.
    _sig("dataset-no-len",
         r"\b(?:distributed|sampler)\.py\"?, line \d+, in \w+\n(?:[^\n]*\n){0,2}?[^\n]*"
         r"len\(self\.(?:dataset|data_source)\)[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"(?P<ev>TypeError: object of type '[\w.]+' has no len\(\))",
         "A sampler (DistributedSampler, or the DataLoader's RandomSampler/SequentialSampler) needs the dataset's "
         "length to split and order its indices, and the dataset has no __len__: a map-style Dataset that defines "
         "only __getitem__, or a stream (an IterableDataset, a generator) given to a sampler.",
         "Define __len__ in the Dataset (the number of samples __getitem__ accepts, indices 0..len-1); for a stream "
         "use an IterableDataset with no sampler and split it between ranks inside its __iter__ (by "
         "dist.get_rank() and the worker's get_worker_info()). A restart fails the same way.", retry=False),
    # A sample that is None reaching torch's default collate (torch/utils/data/_utils/collate.py): "default_collate:
    # batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>" (older torch:
    # "batch must contain tensors, numbers, dicts or lists; found ..."), or, when the batch's first sample is a tuple,
    # collate's size check `len(elem)` on the None (collate.py, in collate / <genexpr>).
    _sig("collate-none-sample",
         r"\bbatch must contain tensors[^\n;]{0,60}; found <class 'NoneType'>|"
         r"\bcollate\.py\"?, line \d+, in (?:collate|<genexpr>)\n(?:[^\n]*\n){0,2}?[^\n]*?"
         r"(?P<ev>TypeError: object of type 'NoneType' has no len\(\))",
         "A sample in the batch is None: the Dataset's __getitem__ returned None (a record it could not read or "
         "chose to skip, or a code path with no return), and the DataLoader's default collate cannot batch None.",
         "Never return None from __getitem__: skip bad records when the dataset is built (drop them from the index), "
         "or return another sample in their place; or pass a collate_fn that drops them first (batch = [b for b in "
         "batch if b is not None], then torch.utils.data.default_collate(batch)), keeping the batch non-empty. A "
         "restart meets the same record again.", retry=False),
    # numpy's legacy seeding (numpy/random/_mt19937.pyx, MT19937._legacy_seeding): "Seed must be between 0 and
    # 2**32 - 1", the words since numpy 1.x; met most often in a DataLoader worker_init_fn seeding numpy with
    # torch.initial_seed() (a 64-bit number) or a seed plus rank and worker id.
    _sig("numpy-seed-range", r"\bSeed must be between 0 and 2\*\*32 - 1\b",
         "numpy's random seed was given a number outside 0..2**32-1: most often a DataLoader worker_init_fn seeding "
         "numpy with torch.initial_seed() (a 64-bit number, different in each worker), or a seed computed from a "
         "base seed, the rank and the worker id, or a negative one.",
         "Reduce the seed into numpy's range: np.random.seed(torch.initial_seed() % 2**32) in the worker_init_fn "
         "(or get_worker_info().seed % 2**32), or use np.random.default_rng(seed), which takes larger seeds. A "
         "restart fails the same way.", retry=False),
    # Round 179 (text data for language models). torch's tensor constructor from nested Python lists (torch/csrc/utils/
    # tensor_new.cpp, compute_sizes / recursive_store): "expected sequence of length N at dim D (got M)", the words of
    # torch 1.x and 2.x; transformers' BatchEncoding.convert_to_tensors (a tokenizer called with return_tensors="pt"
    # and no padding) raises it as the cause of its own "Unable to create tensor" (batch-unpadded).
    _sig("ragged-list-tensor", r"\bexpected sequence of length \d+ at dim \d+ \(got \d+\)",
         "A list of sequences of different lengths was turned into one tensor: torch.tensor(...) of token-id lists "
         "that were never padded (a tokenizer's input_ids for sentences of different lengths), or a tokenizer called "
         "with return_tensors=\"pt\" and no padding, in the script or its collate_fn; a tensor must be rectangular.",
         "Pad every sequence of a batch to one length before making the tensor: tokenizer(texts, padding=True, "
         "truncation=True, max_length=..., return_tensors=\"pt\"), a padding collator (DataCollatorWithPadding, "
         "DataCollatorForLanguageModeling) or torch.nn.utils.rnn.pad_sequence(..., batch_first=True, "
         "padding_value=pad_id), with the attention_mask to match; or keep the lists and pad per batch. A restart "
         "fails the same way.", retry=False),
    # transformers' DataCollatorForLanguageModeling.__post_init__ (data/data_collator.py): mlm=True, its default, with
    # a tokenizer that has no mask token: "This tokenizer does not have a mask token which is necessary for masked
    # language modeling. You should pass `mlm=False` to train on causal language modeling instead." (the words since
    # transformers 3.x; DataCollatorForPermutationLanguageModeling says "... for permutation language modeling").
    _sig("mlm-collator-no-mask-token",
         r"This tokenizer does not have a mask token which is necessary for masked language modeling",
         "DataCollatorForLanguageModeling was built with mlm=True, its default, which masks tokens for a masked "
         "language model (BERT-style) and needs the tokenizer's mask token; this tokenizer has none, as GPT-2-style "
         "causal language models' tokenizers do not.",
         "For a causal language model (GPT-2, Llama...) pass DataCollatorForLanguageModeling(tokenizer, mlm=False): "
         "it pads and copies input_ids to labels (-100 at padding); only for a masked language model give the "
         "tokenizer a mask token (mask_token=\"[MASK]\", then model.resize_token_embeddings(len(tokenizer))). A "
         "restart fails the same way.", retry=False),
    # The tokenizers library's (Rust) models with no unknown token to fall back on: tokenizers/src/models/wordlevel
    # (Error::MissingUnkToken, "WordLevel error: Missing [UNK] token from the vocabulary"), models/wordpiece
    # ("WordPiece error: Missing [UNK] token from the vocabulary"), models/bpe (Error::UnkTokenOutOfVocabulary, "Unk
    # token `<unk>` not found in the vocabulary") and models/unigram (UnigramError::MissingUnkId, "Encountered an
    # unknown token but `unk_id` is missing"), raised to Python as a plain Exception.
    _sig("tokenizer-missing-unk", r"\b(?:WordLevel|WordPiece) error: Missing \[UNK\] token from the vocabulary|"
         r"\bUnk token `[^`\n]{1,40}` not found in the vocabulary|"
         r"\bEncountered an unknown token but `unk_id` is missing",
         "The tokenizer met a word that is not in its vocabulary and has no unknown token to map it to: a WordLevel, "
         "WordPiece or Unigram model built or trained without unk_token (WordLevel() with no unk_token=, a trainer "
         "whose special_tokens lack it), or an unk_token named that is not in the vocabulary (BPE's words). Text the "
         "tokenizer was not trained on (validation data, new words) has such words.",
         "Build the model with an unknown token that is in its vocabulary: WordLevel(unk_token=\"[UNK]\") (or "
         "WordPiece(unk_token=\"[UNK]\")) and list \"[UNK]\" in the trainer's special_tokens, then train and save "
         "the tokenizer again (a saved tokenizer.json keeps \"unk_token\": null). A restart fails the same way.",
         retry=False),
    # The tokenizers library reading its training files (Tokenizer.train(files), tokenizers/src/utils/ and the
    # trainers' file readers: Rust's BufRead::lines, whose io::Error InvalidData reads "stream did not contain valid
    # UTF-8"), raised to Python as a plain Exception. Only that form: other Rust programs' errors carry their own.
    _sig("tokenizer-file-not-utf8", r"^(?:\w+\.)*Exception: stream did not contain valid UTF-8\s*$",
         "A text file given to the tokenizers library (Tokenizer.train(files=[...]), a trainer reading files) is not "
         "UTF-8, the only encoding it reads: a file exported in Latin-1/cp1252 or UTF-16 (Windows tools, old "
         "corpora), or a binary file (a compressed or pickled one) in the list of text files.",
         "Convert the file to UTF-8 (iconv -f latin1 -t utf-8 in.txt > out.txt, or Python's open(path, "
         "encoding=\"latin-1\") then write it with encoding=\"utf-8\"), or read it in Python with its encoding and "
         "train with train_from_iterator(lines); find it with `file -i` on the training files. A restart fails the "
         "same way.", retry=False),
    # Round 185 (live): an unpickler reading a file with nothing in it. CPython's _pickle.c (load: the first opcode's
    # read finds no byte, "EOFError: Ran out of input") under a pickle.load call line (the script's, torch's
    # _legacy_load `pickle_module.load(f, ...)`, dill's, joblib's), and numpy's np.load of an empty file
    # (numpy/lib/_npyio_impl.py load: "EOFError: No data left in file"). Not multiprocessing's spawn reading its
    # parent's pipe (`reduction.pickle.load(from_parent)`: a DataLoader worker on Windows), nor a truncated pickle's
    # "pickle data was truncated".
    _sig("pickle-file-empty",
         r"(?:(?<![\w.])(?:pickle|cPickle|dill|joblib)|\bpickle_module)\.load\((?:(?!\.load\()[^\n])*\n"
         r"(?:[^\n]*\n){0,3}?[^\n]*?"
         r"\bEOFError: Ran out of input|\bEOFError: No data left in file\b",
         "The file being loaded (pickle.load, torch.load, np.load) is empty: it exists but nothing is written in it "
         "yet. Most often another process is still writing it: rank 0 builds a cache (tokenized data, features) while "
         "the other ranks load it as soon as the file exists (open(path, 'wb') creates it before anything is "
         "written), or every rank writes the same file; otherwise a write that crashed or a full disk left it empty.",
         "Have rank 0 write the file (to a temporary name, then os.replace onto the real one) and every rank meet at a "
         "barrier (torch.distributed.barrier()) before loading it, instead of waiting for the file to exist; write a "
         "per-rank file where each rank writes its own. Delete the empty file a failed run left. A restart meets the "
         "same race or the same empty file.", retry=False),
    # Round 185 (live): a compressed stream that ends before its end marker: CPython's gzip.py (_GzipReader.read),
    # _compression.py (DecompressReader.read, for bz2 and lzma) "EOFError: Compressed file ended before the
    # end-of-stream marker was reached", and tarfile's own "unexpected end of data" (copyfileobj, _Stream) for a tar
    # cut short: a download or copy that is not complete. Not pickle's "Ran out of input", input()'s "EOF when reading
    # a line", nor tarfile's "file could not be opened successfully" (not an archive at all).
    _sig("archive-truncated",
         r"\bEOFError: Compressed file ended before the end-of-stream marker was reached|"
         r"\b(?:tarfile\.)?ReadError: unexpected end of data\b",
         "A compressed file or archive (a .tar.gz, .gz, .bz2, .xz dataset or model archive) ends before its end: the "
         "file is incomplete. Most often it was read while still being written: every rank downloads the same archive "
         "to the same path (or finds the one another rank is still downloading and extracts it), or rank 0 downloads "
         "it without a barrier before the others read it; otherwise a download or copy was interrupted and left "
         "half a file.",
         "Download (and extract) on one rank only, rank 0 (local rank 0 on each node where disks are not shared), to "
         "a temporary name renamed when complete, and barrier before the other ranks read it; delete the incomplete "
         "file and fetch it again (compare its size or checksum with the source). A restart reads the same "
         "incomplete file.", retry=False),
    # Round 185 (live): the tokenizers library's Tokenizer.from_file (bindings/python/src/tokenizer.rs, the Rust
    # io::Error shown as "No such file or directory (os error 2)", raised as a plain Exception that names no path),
    # called by the script or by transformers' PreTrainedTokenizerFast (TokenizerFast.from_file(tokenizer_file)).
    _sig("tokenizer-file-missing",
         r"\.from_file\((?:(?!\.from_file\()[^\n])*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"\bException: No such file or directory \(os error 2\)",
         "The tokenizers library found no file at the path given to Tokenizer.from_file (a tokenizer.json; the "
         "message does not name it): a wrong or relative path, or a tokenizer that another rank writes and this rank "
         "read before it was saved (rank 0 trains and saves it, and the barrier comes before the save instead of "
         "after it, or there is none).",
         "Check the path in the from_file call (an absolute path, one that exists on every node); where rank 0 trains "
         "and saves the tokenizer, put the barrier (torch.distributed.barrier()) after its save and before every "
         "rank's from_file. A restart fails the same way.", retry=False),
)

# What may stand in a rank's lines before its vague error (explain: BEFORE_THE_ERROR): the worker's own words before the
# main process's "DataLoader worker (pid(s) N) exited unexpectedly" RuntimeError.
DATA_BEFORE_VAGUE = frozenset({"dataloader-worker-segfault"})
