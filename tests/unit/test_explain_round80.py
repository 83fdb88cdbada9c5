"""Round 80's rules (issue 45), from what users post on forums, Q&A sites and blogs about failed multi-GPU training (a
Q&A rewrite's two-GPU DDP run started without a launcher, a blog's two-node SimpleTuner run): torch's TCPStore server
counting fewer ranks than the world size (`Timed out after N seconds waiting for clients. M/N clients joined.`, read
as ranks never started or unable to reach the store, no longer as the store's address alone), and
torch.cuda.get_device_properties refusing a GPU index this process does not have (`AssertionError: Invalid device id`,
most often the global rank used as a GPU index): a second wording of each, in another version's or caller's words
than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("store-ranks-missing", "invalid-device-id")

_TB = "Traceback (most recent call last):\n"


@pytest.mark.parametrize("text,expected", [
    # torch 2.x under its rank prefix: init_process_group's tcp:// rendezvous on rank 0 (rendezvous.py's
    # _create_c10d_store building the TCPStore that waits for the workers), 1 of 4 joined
    ("[rank0]: " + _TB + '[rank0]:   File "/work/train.py", line 30, in <module>\n'
     '[rank0]:     dist.init_process_group("nccl", init_method="tcp://10.0.0.1:23456", rank=0, world_size=4)\n'
     '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 189, in '
     "_create_c10d_store\n[rank0]:     return TCPStore(\n"
     "[rank0]: torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/4 clients "
     "joined.\n", "store-ranks-missing"),
    # the same words wrapped over two lines as a CI note quotes a node's log (the rank that did not join is named only
    # in the other node's log)
    ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients.\n"
     "    7/8 clients joined.\n", "store-ranks-missing"),
    # torch.cuda.get_device_capability() with CUDA_VISIBLE_DEVICES="" (no GPU visible while is_available() is True),
    # a quantization tool's own log (get_device_capability calls get_device_properties)
    ('  File "quantfit/policy/target.py", line 43, in detect_target\n'
     "    major, minor = torch.cuda.get_device_capability()\nAssertionError: Invalid device id\n", "invalid-device-id"),
    # DataParallel given device_ids past the visible GPUs: its balance check reads each GPU's properties
    (_TB + '  File "train.py", line 40, in <module>\n    net = torch.nn.DataParallel(model, device_ids=[1, 2])\n'
     '  File "/usr/lib/python3/dist-packages/torch/nn/parallel/data_parallel.py", line 150, in __init__\n'
     "    _check_balance(self.device_ids)\n"
     '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 371, in get_device_properties\n'
     '    raise AssertionError("Invalid device id")\nAssertionError: Invalid device id\n', "invalid-device-id"),
    # torch.compile's Inductor re-raising it under its own exception type
    ("[rank3]: torch._inductor.exc.InductorError: AssertionError: Invalid device id\n", "invalid-device-id"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # torch's store client timing out (socket.cpp): a rank that could not reach the store, not the store's count
    ("torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to "
     "(node0, 29500).\n", "store-ranks-missing"),
    ("[W socket.cpp:601] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection "
     "refused).\n", "store-ranks-missing"),
    # torchrun's elastic rendezvous timing out (its own exception, elastic-rdzv-timeout)
    ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n", "store-ranks-missing"),
    # distributed_c10d's store-based barrier (every rank already reached the store; left as it was)
    ("RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: "
     "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)\n", "store-ranks-missing"),
    # CUDA's own refusal of a device index stays invalid-device-ordinal's
    ("RuntimeError: CUDA error: invalid device ordinal\n", "invalid-device-id"),
    # NVIDIA's DCGM exporter answering an HTTP request for a GPU id it cannot parse (Go, another casing)
    ('\thttp.Error(w, "Invalid device ID", http.StatusBadRequest)\n', "invalid-device-id"),
    # HPX's CUDA event pool assertion, and macOS CoreAudio's backend: other components' words
    ("Assertion failed: Accessing CUDA event pool with invalid device ID!\n", "invalid-device-id"),
    ("coreaudiod[311]: CoreAudioBackend: invalid device ID: 73\n", "invalid-device-id"),
    # a Rust pairing library's error text (thiserror), lower case
    ('    #[error("invalid device id")]\n    InvalidDeviceId,\n', "invalid-device-id"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_killed_rank_comes_before_the_store_waiting_for_it():
    # DeepSpeed's launcher on node1 reports its rank killed; node0's store then waited for it
    assert sig("node1: [2024-06-01 10:12:40,101] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', "
               "'train.py', '--local_rank=0', '--deepspeed', 'ds_config.json'] exits with return code = -9\n"
               "node0: [rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. "
               "3/4 clients joined.\n") == "killed"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
