"""Round 99's rules (issue 45), from threads on data loading and dataset preparation in multi-GPU and multi-node runs:
a Hugging Face datasets cache file gone while a process read, renamed or finished it (several ranks, nodes or runs
preparing the same cache at once: LLaMA-Factory's multi-GPU and multi-node runs, ms-swift's map on every rank), and
Megatron's sample-index files, built by global rank 0 only, missing on another node. A second wording of each, in
another caller's or version's words than the corpus case it was written from, and near misses that must not be read
as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("datasets-cache-race", "data-index-node-local")


@pytest.mark.parametrize("text,expected", [
    # huggingface/datasets#2728 (two jobs on one cache): pyarrow's words for the ArrowWriter's file inside the
    # builder's .incomplete directory that the other job renamed away
    ("FileNotFoundError: [Errno 2] Failed to open local file '/dccstor/tslm-gen/.cache/csv/default-387f1f95c084d4df/"
     "0.0.0/2dc6629a9ff6b5697d82c25b73731dd440507a69cbce8b425db50b751e8fcfd0.incomplete/csv-validation.arrow'. "
     "Detail: [errno 2] No such file or directory\n", "datasets-cache-race"),
    # hiyouga/LlamaFactory#3731: map(num_proc=8)'s shard cache file, datasets' os.chmod at the end of _map_single
    ("  File \"/home/***/.conda/envs/LLaMA/lib/python3.10/site-packages/datasets/arrow_dataset.py\", line 3595, in "
     "_map_single\n"
     "    os.chmod(cache_file_name, 0o666 & ~umask)\n"
     "FileNotFoundError: [Errno 2] No such file or directory: '/home/***/.cache/huggingface/datasets/json/"
     "default-83535c0c955e8ee5/0.0.0/c8d2d9508a2a2067ab02cd118834ecef34c3700d143b31835ec4235bf10109f7/"
     "cache-6939a289e8425e94_00000_of_00008.arrow'\n", "datasets-cache-race"),
    # niznik-dev/cruijff_kit#316 (SLURM jobs starting together): datasets' "Cannot find data file" over CPython's
    # ENOENT on a file of the .incomplete directory
    ("OSError: Cannot find data file.\n"
     "Original error: [Errno 2] No such file or directory: '/home/.../.cache/huggingface/datasets/json/default-.../"
     ".incomplete/json-train-00000-00000-of-NNNNN.arrow'\n", "datasets-cache-race"),
    # deepspeedai/Megatron-DeepSpeed#356 (multi-node, pdsh prefixes): the legacy gpt_dataset.py's doc index
    ("c000001: FileNotFoundError: [Errno 2] No such file or directory: '/work/guanhua/dataset/index-cache/"
     "43d5bc1477867ae12d66da383c2b664b_doc_idx.npy'\n", "data-index-node-local"),
    # Megatron core's GPTDataset cache file, its name as NVIDIA/Megatron-LM#1355 lists the main node's files, in
    # CPython's FileNotFoundError under torchrun's rank prefix (the numpy.load of a rank other than 0)
    ("[rank9]: FileNotFoundError: [Errno 2] No such file or directory: '/workspace/megatron-lm/models/gpt3/dataset/"
     "BookCorpusDataset_text_document/cache/GPTDataset_indices/"
     "fa7397310cb8333b787979cb7c45c55f-GPTDataset-train-document_index.npy'\n", "data-index-node-local"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # CPython's ENOSPC on a datasets cache file (huggingface/datasets' cache on a full disk): a disk, not a race
    ("OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/datasets/json/default-4a21d950de908b57/"
     "0.0.0/ab573428e7a11a7e23eebd41a2a71665ac3789ce311cbad7049572034a9bda05/cache-1f1786faf2762b3e.arrow'\n",
     "datasets-cache-race"),
    # huggingface/dataset-viewer#2549: a cache directory the process may not create
    ("PermissionError: [Errno 13] Permission denied: '/.cache'\n", "datasets-cache-race"),
    # pyarrow's EACCES on a cache file: a permission, not a file gone
    ("FileNotFoundError: [Errno 2] Failed to open local file '/data/hf/json/default-b15a9a81bb1aef63/0.0.0/"
     "ab573428e7a11a7e23eebd41a2a71665ac3789ce311cbad7049572034a9bda05/cache-1f1786faf2762b3e.arrow'. Detail: "
     "[errno 13] Permission denied\n", "datasets-cache-race"),
    # datasets' own words for a data file of the user's that is not there (data_files)
    ("FileNotFoundError: Unable to find '/data/train.jsonl'\n", "datasets-cache-race"),
    # hiyouga/LlamaFactory#6191: LLaMA-Factory's loader on a dataset file missing from data/
    ("[rank5]: ValueError: File data/mllm_dome.json not found.\n", "datasets-cache-race"),
    # modelscope/ms-swift#1544: datasets finding no cache for the config asked (offline), not a file gone
    ("Couldn't find cache for swift/chinese-c4 for config 'default'\n"
     "Available configs in the cache: ['default-1fc53a3c66964980']\n", "datasets-cache-race"),
    # mosaicml/llm-foundry#1848: llm-foundry's node signal file on a shared file system, not a datasets cache
    ("[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '._signal_file_node0_QVBHXW'\n",
     "datasets-cache-race"),
    # a user's own index array, named like Megatron's only in part
    ("FileNotFoundError: [Errno 2] No such file or directory: 'features/train_idx.npy'\n", "data-index-node-local"),
    # Megatron's indexed dataset itself missing (a wrong --data-path, every node alike), not the sample-index cache
    ("FileNotFoundError: [Errno 2] No such file or directory: '/data/my-gpt2_text_document.idx'\n",
     "data-index-node-local"),
    # a sample-index .npy in a datasets cache path is Megatron's, not the datasets cache's
    ("c000001: FileNotFoundError: [Errno 2] No such file or directory: '/work/guanhua/dataset/index-cache/"
     "43d5bc1477867ae12d66da383c2b664b_doc_idx.npy'\n", "datasets-cache-race"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_full_disk_under_the_datasets_cache_stays_a_full_disk():
    assert sig("OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/datasets/json/"
               "default-4a21d950de908b57/0.0.0/ab573428e7a11a7e23eebd41a2a71665ac3789ce311cbad7049572034a9bda05/"
               "cache-1f1786faf2762b3e.arrow'\n") == "disk-full"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
