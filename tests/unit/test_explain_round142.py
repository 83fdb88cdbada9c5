"""Round 142's rules (issue 45), from threads of the DeepSpeedExamples tracker: DeepSpeed-Chat's data cache under
--data_output_path (default /tmp/data_files/) that this user cannot write (dschat-data-cache-unwritable: CPython's
EACCES on the shuffle-index .npy or the traindata_/evaldata_ .pt it saves, torch's `File NAME cannot be opened.`), and
deepspeed.comm's collectives meeting their backend object still None (`return cdb.all_reduce(...)`, then
`AttributeError: 'NoneType' object has no attribute 'all_reduce'`: ds-comm-not-initialized, read with the lines
before the error). Each: a second wording (another version's or caller's words than the corpus case it was written
from) and near misses, other components' text with like words that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain

NEW = ("dschat-data-cache-unwritable",)


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


def test_the_comm_rule_keeps_the_texts_of_its_family():
    rules = [s for s in explain.SIGNATURES if s.name == "ds-comm-not-initialized"]
    assert len(rules) == 2 and len({(s.cause, s.fix) for s in rules}) == 1 and not any(s.retry for s in rules)


@pytest.mark.parametrize("text", [
    # DeepSpeedExamples#430 (torch 1.x's writer, the dataset's name a signed hash()), step 1 on one node
    ('  File "/data/git/DeepSpeedExamples/applications/DeepSpeed-Chat/training/utils/data/data_utils.py", line 328, '
     "in create_prompt_dataset\n    torch.save(train_dataset, train_fname)\n"
     '  File "/data/anaconda3/envs/deepspeed/lib/python3.8/site-packages/torch/serialization.py", line 287, in '
     "__init__\n    super(_open_zipfile_writer_file, self).__init__(torch._C.PyTorchFileWriter(str(name)))\n"
     "RuntimeError: File /tmp/data_files//traindata_-9071072583361525875.pt cannot be opened.\n"),
    # the dschat package's names (sha256 of the options) under a --data_output_path of the user's choice, rank prefix
    ('[rank0]:   File "/home/u/DeepSpeedExamples/applications/DeepSpeed-Chat/dschat/utils/data/data_utils.py", '
     "line 376, in create_prompt_dataset\n[rank0]:     torch.save(eval_dataset, eval_fname)\n"
     "[rank0]: RuntimeError: File /scratch/shared/dschat_cache/evaldata_"
     "1313c95a4500080e02ce90bb1459909060d5f06a1f5490c95b63aba295e2b2e4.pt cannot be opened.\n"),
    # np.save of an eval split's shuffle index (get_raw_dataset_split_index's name), another dataset and split
    ("PermissionError: [Errno 13] Permission denied: '/tmp/data_files/Dahoas_full_hh_rlhf_seed1234_eval_2,4,4_1.npy'\n"),
])
def test_a_dschat_data_cache_this_user_cannot_write(text):
    assert sig(text) == "dschat-data-cache-unwritable"


@pytest.mark.parametrize("text,expected", [
    # the cache file missing, not refused (DeepSpeedExamples#787, #558: another rank's or node's cache): another cause
    ("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/data_files/traindata_"
     "04ec1ee09de8642fa1c4b659535fca5dca42643897e6a76769bb674209ad4704.pt'\n", "file-missing"),
    # Megatron's index map of a dataset (gpt_dataset.py _build_index_mappings' names), refused: not DeepSpeed-Chat's
    ("PermissionError: [Errno 13] Permission denied: "
     "'/data/my-gpt2_text_document_train_indexmap_100ns_1024sl_1234s_doc_idx.npy'\n", "permission-denied"),
])
def test_not_a_dschat_data_cache(text, expected):
    assert sig(text) == expected


def test_a_checkpoint_torch_cannot_write_is_not_the_data_cache():
    # torch's writer refusing a model file the script saves: the same words, not DeepSpeed-Chat's cache
    text = ('  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 440, in save\n'
            "    with _open_zipfile_writer(f) as opened_zipfile:\n"
            "RuntimeError: File ./output/pytorch_model.bin cannot be opened.\n")
    assert sig(text) != "dschat-data-cache-unwritable"


@pytest.mark.parametrize("text", [
    # Python 3.10 (no caret line), the whole frame of deepspeed/comm/comm.py's broadcast
    ("Traceback (most recent call last):\n"
     '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py", line 117, in log_wrapper\n'
     "    return func(*args, **kwargs)\n"
     '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py", line 229, in broadcast\n'
     "    return cdb.broadcast(tensor=tensor, src=src, group=group, async_op=async_op)\n"
     "AttributeError: 'NoneType' object has no attribute 'broadcast'\n"),
    # Python 3.11+ with carets, all_gather_into_tensor, under a rank prefix
    ('[rank1]:   File "/opt/conda/lib/python3.11/site-packages/deepspeed/comm/comm.py", line 322, in '
     "all_gather_into_tensor\n"
     "[rank1]:     return cdb.all_gather_into_tensor(output_tensor=output_tensor, input_tensor=tensor, group=group, "
     "async_op=async_op)\n"
     "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "[rank1]: AttributeError: 'NoneType' object has no attribute 'all_gather_into_tensor'\n"),
])
def test_deepspeed_comm_without_its_backend(text):
    assert sig(text) == "ds-comm-not-initialized"


def test_the_assertion_wording_stays_its_own():
    text = ("  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py\", line 189, in new_group\n"
            "    assert cdb is not None and cdb.is_initialized(\n"
            "AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()\n")
    assert sig(text) == "ds-comm-not-initialized"


@pytest.mark.parametrize("text", [
    # None met by another name than the one the source line called (the error is the tensor's, not cdb's)
    ("    return cdb.all_reduce(tensor, op, group, async_op)\n"
     "AttributeError: 'NoneType' object has no attribute 'numel'\n"),
    # a module-level handle of another library left None (no `cdb`): not deepspeed.comm
    ("    return dist.all_reduce(tensor, op=op, group=group)\n"
     "AttributeError: 'NoneType' object has no attribute 'all_reduce'\n"),
])
def test_not_deepspeed_comm_without_its_backend(text):
    assert sig(text) != "ds-comm-not-initialized"
