"""Round 76's rules (issue 45), from threads on hangs and timeouts of distributed training (an evaluation run on rank 0
only, a store-based barrier that slow data preparation outlasted): torch's store-based barrier of init_process_group
timing out (store-barrier-timeout), and NCCL's watchdog timeout read from its C++ backtrace alone, where a log kept the
frames and lost the message above them (collective-timeout): a second wording of each, in another version's or
caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("store-barrier-timeout",)

# torch's watchdog timeout backtrace as vipshop/cache-dit#761 posted it (a torch with Watchdog::runLoop), the lines
# below the message
_CHECKTIMEOUT_STACK = (
    "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:686 (most recent "
    "call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >) + 0x80 (0x7fc63b571b80 in /opt/conda/lib/python3.11/site-packages/torch/lib/libc10.so)\n"
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, "
    "1000l> > >) + 0x247 (0x7fc63c44d5b7 in /opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)\n")


@pytest.mark.parametrize("text,expected", [
    # deepspeedai/Megatron-DeepSpeed#338: torch 1.x's RuntimeError (worker_count), under the barrier's own frame
    ("    _store_based_barrier(global_rank, default_store, timeout)\n"
     "  File \"/usr/local/lib/python3.8/dist-packages/torch/distributed/distributed_c10d.py\", line 350, in "
     "_store_based_barrier\n"
     "    raise RuntimeError(\n"
     "RuntimeError: Timed out initializing process group in store based barrier on rank: 5, for key: "
     "store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)\n", "store-barrier-timeout"),
    # torch 2.x's DistStoreError (num_workers_joined, "on rank N" without the colon: distributed_c10d.py), a rank prefix
    ("[rank3]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank "
     "3, for key: store_based_barrier_key:1 (world_size=4, num_workers_joined=2, timeout=0:10:00)\n",
     "store-barrier-timeout"),
    # more ranks than the world counted (a stale key): epfml/powersgd#21's line
    ("Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 "
     "(world_size=2, worker_count=4, timeout=0:02:00)\n", "store-barrier-timeout"),
    # the watchdog's backtrace without its message (cache-dit#761's frames)
    (_CHECKTIMEOUT_STACK, "collective-timeout"),
    # torch 2.1's declaration (c10::optional, ProcessGroupNCCL.hpp's `checkTimeout(c10::optional<std::chrono::
    # milliseconds> timeout = c10::nullopt)`) in a frame of the same shape, composed from it
    ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(c10::optional<std::chrono::duration<long, "
     "std::ratio<1l, 1000l> > >) + 0x1a1 (0x7f0b1c0d7e41 in /usr/lib/python3/dist-packages/torch/lib/"
     "libtorch_cuda.so)\n", "collective-timeout"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # distributed_c10d.py's info line while the ranks gather (ultralytics/yolov5#4574 printed it over and over): a wait,
    # not its end
    ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
     "(world_size=4, worker_count=8, timeout=0:30:00)\n", "store-barrier-timeout"),
    # its line once all arrived
    ("INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 "
     "with 8 nodes.\n", "store-barrier-timeout"),
    # a monitored barrier's timeout (NVIDIA/nccl#849) is a collective's, not the process group's set-up
    ("RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms\n",
     "store-barrier-timeout"),
    # bigscience's tr11-176B chronicle: a CUDA error the watchdog's cleanup loop found, raised from the event query
    ("terminate called after throwing an instance of 'c10::CUDAError'\n"
     "  what():  CUDA error: unknown error\n"
     "Exception raised from query at ../aten/src/ATen/cuda/CUDAEvent.h:95 (most recent call first):\n"
     "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x42 (0x1518a06137d2 in /gpfswork/rech/six/"
     "commun/conda/tr11-176B-ml/lib/python3.8/site-packages/torch/lib/libc10.so)\n"
     "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x11a (0x15190c6c29ea in "
     "/gpfswork/rech/six/commun/conda/tr11-176B-ml/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)\n"
     "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x50 (0x15190c6c4fd0 in /gpfswork/rech/six/commun/"
     "conda/tr11-176B-ml/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)\n"
     "frame #3: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x145 (0x15190c6c6265 in /gpfswork/rech/six/commun/conda/"
     "tr11-176B-ml/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)\n", "collective-timeout"),
    # a Megatron run's log (a torch with Watchdog::runLoop): a CUDA error raised from the watchdog's completion check
    ("Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:44 (most recent call "
     "first):\n"
     "frame #1: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x224 "
     "(0xede0557d3574 in /cpfs01/laiqingsi/project/moe/venv_megatron/lib/python3.12/site-packages/torch/lib/"
     "libc10_cuda.so)\n"
     "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x4c (0xede05636e0fc in "
     "/cpfs01/laiqingsi/project/moe/venv_megatron/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)\n"
     "frame #3: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x74 (0xede05638d404 in /cpfs01/laiqingsi/project/"
     "moe/venv_megatron/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)\n"
     "frame #4: c10d::ProcessGroupNCCL::Watchdog::runLoop() + 0x770 (0xede056394460 in /cpfs01/laiqingsi/project/moe/"
     "venv_megatron/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)\n", "collective-timeout"),
    # ProcessGroupNCCL.cpp's own source (WorkNCCL::checkTimeout's definition), as a source listing quotes it
    ("bool ProcessGroupNCCL::WorkNCCL::checkTimeout(\n"
     "    std::optional<std::chrono::milliseconds> timeout) {\n", "collective-timeout"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
