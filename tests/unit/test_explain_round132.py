"""Round 132's rules (issue 45), from threads of DeepSpeed's ZeRO-Offload and ZeRO-Infinity (NVMe offload through the
async_io op): the op's C assertion on its completion count (`n_completes >= min_completes`, an int overflow before
0.15.1), a swap file whose name passes the file system's limit (ZeRO-3's sub-group names before 0.13.3), an async_io
library built without all of DeepSpeed's own sources (an undefined deepspeed_* symbol), and ENAMETOOLONG on any path
(DeepSpeed-Chat's data cache). Each: a second wording (another version's or caller's words than the corpus case it was
written from) and near misses, other components' text with like words that must not be read as it. A bare
AssertionError (no message) is now vague: the lines before it may say why (DeepSpeed's aio line before
swap_out_tensors' `assert (swap_handle.async_pwrite(buffer, path) == 0)`)."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nvme-aio-io-complete-failed", "nvme-swap-name-too-long", "ds-op-incomplete-sources", "file-name-too-long")

_LONG = "_".join(str(i) for i in range(300))  # ZeRO-3's old ds_id: every parameter id of a sub-group joined by '_'


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text,expected", [
    # a pre-built wheel (DS_BUILD_AIO=1: the source's relative path) under pdsh's node prefix; the newer source declares
    # the counts int64_t (csrc/aio/common/deepspeed_aio_common.cpp), which the assertion prints as long int
    ("worker-1: python3: csrc/aio/common/deepspeed_aio_common.cpp:125: int _do_io_complete(long int, long int, "
     "std::unique_ptr<aio_context>&, std::vector<std::chrono::duration<double> >&): Assertion `n_completes >= "
     "min_completes' failed.\n"
     "worker-1: [2024-08-02 10:11:12,345] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
     "'--local_rank=3'] exits with return code = -6\n", "nvme-aio-io-complete-failed"),
    # the read side of the same report_file_error ("open for read "), swapping a parameter back in, with its errno
    ("deepspeed_aio:   open for read  failed on /nvme/zero_stage_3/optimizer/rank0/" + _LONG + ".tensor.swp error = "
     "36\n", "nvme-swap-name-too-long"),
    # the whole shape a rank prints: the aio line, then Python's bare AssertionError from swap_out_tensors
    ("deepspeed_aio:   open for write  failed on /local_nvme/zero_stage_3/optimizer/rank2/" + _LONG + " error = 36\n"
     "Traceback (most recent call last):\n"
     '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/swap_tensor/utils.py", line 25, in '
     "swap_out_tensors\n"
     "    assert (swap_handle.async_pwrite(buffer, path) == 0)\n"
     "AssertionError\n", "nvme-swap-name-too-long"),
    # a free function of csrc/aio/py_lib (deepspeed_py_aio.h: int deepspeed_py_aio_read(torch::Tensor&, const char*,
    # int, int, bool, bool, bool)) undefined, under a rank prefix
    ("[rank0]: ImportError: /home/u/.cache/torch_extensions/py311_cu124/async_io/async_io.so: undefined symbol: "
     "_Z21deepspeed_py_aio_readRN2at6TensorEPKciibbb\n", "ds-op-incomplete-sources"),
    # the GPUDirect Storage handle (csrc/gds: struct deepspeed_gds_handle_t : deepspeed_io_handle_t)
    ("ImportError: /opt/ds/build/gds_op.so: undefined symbol: _ZN22deepspeed_gds_handle_tC1Eiiibbi\n",
     "ds-op-incomplete-sources"),
    # macOS's errno for ENAMETOOLONG, CPython's words
    ("OSError: [Errno 63] File name too long: '/Users/me/.cache/chat/traindata_" + "a" * 260 + ".pt'\n",
     "file-name-too-long"),
    # a C program's strerror after its path (GNU tar extracting a dataset archive)
    ("tar: data/shards/" + "b" * 270 + ".jsonl: Cannot open: File name too long\n", "file-name-too-long"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed#1813: the aio handle stopped with operations still pending (deepspeed_py_aio_handle.cpp _stop_threads)
    ("python: /opt/conda/lib/python3.8/site-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:159: "
     "void deepspeed_aio_handle_t::_stop_threads(): Assertion `0 == _num_pending_ops' failed.\n",
     "nvme-aio-io-complete-failed"),
    # DeepSpeed#7703: wait() with nothing pending (deepspeed_py_io_handle.cpp)
    ("int deepspeed_io_handle_t::wait(): Assertion `_num_pending_ops > 0' failed.\n", "nvme-aio-io-complete-failed"),
    # the submit side's own assertion (deepspeed_aio_common.cpp _do_io_submit_*: assert(submit_ret > 0))
    ("python: deepspeed_aio_common.cpp:108: void _do_io_submit_block(...): Assertion `submit_ret > 0' failed.\n",
     "nvme-aio-io-complete-failed"),
    # the same report_file_error for a swap folder that is not there (ENOENT) or not writable (EACCES): not the name
    ("deepspeed_aio:   open for write  failed on /local_nvme/zero_stage_3/optimizer/rank0/12_gradient.tensor.swp "
     "error = 2\n", "nvme-swap-name-too-long"),
    ("deepspeed_aio:   open for write  failed on /mnt/shared/zero_stage_3/fp16params/rank5/0_param.tensor.swp "
     "error = 13\n"
     "Traceback (most recent call last):\n"
     '  File "/usr/lib/python3/dist-packages/deepspeed/runtime/swap_tensor/utils.py", line 25, in swap_out_tensors\n'
     "    assert (swap_handle.async_pwrite(buffer, path) == 0)\n"
     "AssertionError\n", "nvme-swap-name-too-long"),
    # a Python file of a long name elsewhere is the general ENAMETOOLONG, not ZeRO-3's swap file
    ("OSError: [Errno 36] File name too long: '/tmp/data_files/" + "c" * 300 + ".pt'\n", "nvme-swap-name-too-long"),
    # DeepSpeed#1846: cpu_adam linked without curand (a library's symbol), not DeepSpeed's own
    ("ImportError: /media/max/Volume/GPT/finetune/DeepSpeed/deepspeed/ops/adam/cpu_adam_op.cpython-38-x86_64-linux-gnu.so"
     ": undefined symbol: curandCreateGenerator\n", "ds-op-incomplete-sources"),
    # libaio older than 0.3.112 has no io_pgetevents (DeepSpeed#7346): libaio's symbol
    ("ImportError: /root/.cache/torch_extensions/py39_cu121/async_io/async_io.so: undefined symbol: io_pgetevents\n",
     "ds-op-incomplete-sources"),
    # flash-attn built against another torch: torch's own symbol (c10::cuda::SetDevice)
    ("ImportError: /usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined "
     "symbol: _ZN3c104cuda9SetDeviceEi\n", "ds-op-incomplete-sources"),
    # E2BIG, a launch line too long, and Windows' long-path error: other errors than ENAMETOOLONG's words
    ("OSError: [Errno 7] Argument list too long: '/bin/sh'\n", "file-name-too-long"),
    ("OSError: [WinError 206] The filename or extension is too long\n", "file-name-too-long"),
    # git on Windows without core.longpaths ("Filename", one word)
    ("error: unable to create file src/models/very/deep/path/module.py: Filename too long\n", "file-name-too-long"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_swap_check_stays_its_own():
    # round 40's short swap file: the pread assertion of the same op, not the completion count
    assert sig("/nvme/zero_stage_3/fp16params/rank24/0_param.tensor.swp: buffer nbytes != file bytes 28824000 != "
               "28311552\n") == "nvme-swap-short"


def test_a_bare_assertion_error_reads_the_lines_before_it_only_for_their_own_signatures():
    # a bare AssertionError is vague, but a line before it that says nothing of its own adds nothing
    text = ("loading shards\n"
            "Traceback (most recent call last):\n"
            '  File "/work/train.py", line 12, in <module>\n'
            "    assert batch is not None\n"
            "AssertionError\n")
    assert sig(text) == "python-error"
