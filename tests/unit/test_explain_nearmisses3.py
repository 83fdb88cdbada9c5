"""Near misses of the rule tables, third review (session 25 of issue 45, src/dscluster/sigwords.py, explain.py,
rankerror.py): words every rank prints when ANOTHER rank failed (the rendezvous store out of reach, a peer's closed
connection, a collective's timeout, a DeepSpeed op's __del__), in multi-rank logs whose real cause is elsewhere (one
rank's own error, a kill, a crash); and the rules the second review left unchecked (version-mismatch's `installed
version ... does not match`, the pipeline-parallelism refusals, dev-shm-full's `insufficient shared memory`), and
slurmstepd's `write to unblock task 0 failed: Broken pipe`. Each must not get the symptom's cause or the rule's; the
components' own words still do. Review 42 (below): Python's own BrokenPipeError and ConnectionResetError (a pipe into
`head`, a logging stream, a multiprocessing queue, a web service), torchrun's SIGKILL of the ranks left after another
failed, pyzmq's `Address already in use`."""

import pytest
from explain_rounds import sig

from dscluster import explain

_TB = "Traceback (most recent call last):\n"
# DeepSpeed's launcher on node0: its rank 0 killed (the kernel's OOM killer, an operator)
_DS_KILL = ("node0: [2024-06-01 10:12:40,101] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', "
            "'train.py', '--local_rank=0', '--deepspeed', 'ds_config.json'] exits with return code = -9\n")
# torchrun's summary of node0's failure: rank 0 crashed in native code
_TORCHRUN_SEGV = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                  "============================================================\ntrain.py FAILED\n"
                  "------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
                  "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
                  "[0]:\n  time      : 2024-06-01_10:12:40\n  host      : node0\n  rank      : 0 (local_rank: 0)\n"
                  "  exitcode  : -11 (pid: 5531)\n  error_file: <N/A>\n"
                  "  traceback : Signal 11 (SIGSEGV) received by PID 5531\n"
                  "============================================================\n")
# rank 0's TCPStore server, waiting for a rank that never came (node0's log pasted first)
_STORE_WAIT = ("[rank0]: " + _TB + '[rank0]:   File "/work/train.py", line 31, in <module>\n'
               "[rank0]:     dist.init_process_group(backend=\"nccl\")\n"
               "[rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 3/4 "
               "clients joined.\n")
_RANK3_IMPORT = ("[rank3]: " + _TB + '[rank3]:   File "/work/train.py", line 9, in <module>\n'
                 "[rank3]:     from flash_attn import flash_attn_func\n"
                 "[rank3]: ModuleNotFoundError: No module named 'flash_attn'\n")
# DeepSpeed's CPU Adam: the op's __del__ after it failed to load, and DeepSpeed's own CUDA check on another rank
_DS_DEL = ("[rank1]: Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f3b2c1d0e50>\n[rank1]: " + _TB +
           '[rank1]:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/ops/adam/cpu_adam.py", line 102, in '
           "__del__\n[rank1]:     self.ds_opt_adam.destroy_adam(self.opt_id)\n"
           "[rank1]: AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
_DS_CUDA = ("[rank0]: " + _TB + '[rank0]:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/ops/op_builder/'
            'builder.py", line 89, in assert_no_cuda_mismatch\n[rank0]:     raise CUDAMismatchException(\n'
            "[rank0]: deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA "
            "version 12.1 does not match the version torch was compiled with 11.8, unable to compile cuda/cpp "
            "extensions without a matching cuda version.\n")
# pyxis' task setup failing on a node, and slurmstepd unable to release the task it had forked
_SPANK = ("slurmstepd: error: pyxis: failed to import docker image\n"
          "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1\n")
# Triton's compiler: a kernel's config needs more on-chip shared memory than the GPU's SM has
_TRITON = (_TB + '  File "/opt/venv/lib/python3.11/site-packages/triton/runtime/jit.py", line 662, in run\n'
           "    kernel = self.compile(\ntriton.runtime.errors.OutOfResources: out of resource: shared memory, Required: "
           "131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
_UNBLOCK = "slurmstepd: error: write to unblock task 0 failed: Broken pipe\n"

# (log, the cause it must not get, what it gets: the rank's own error, the signal, a generic answer)
NEAR_MISSES = [
    # the store's process killed: its peers' reconnects are refused or time out, no wrong address
    (_DS_KILL + "node1: [W socket.cpp:601] [c10d] The client socket has failed to connect to [node0]:29500 (errno: "
     "111 - Connection refused).\n", "master-unreachable", "killed"),
    (_DS_KILL + "node1: [E socket.cpp:922] [c10d] The client socket has timed out after 600s while trying to "
     "connect to (node0, 29500).\n", "master-unreachable", "killed"),
    ("[W socket.cpp:697] [c10d] The client socket has failed to connect to node0:29500 (errno: 110 - Connection timed "
     "out).\n" + _TORCHRUN_SEGV, "master-unreachable", "segfault"),
    # rank 0's store waiting for a rank that failed on its own first (printed above it)
    (_STORE_WAIT + _RANK3_IMPORT, "master-unreachable", "module-not-found"),
    # a DeepSpeed op's __del__ printed above the CUDA mismatch that kept the op from loading
    (_DS_DEL + _DS_CUDA, "op-build-failed", "version-mismatch"),
    # slurmstepd's write to a task that had already exited: no peer went away, no restart it could justify
    (_SPANK + _UNBLOCK, "gloo-peer-closed", None),
    (_UNBLOCK, "gloo-peer-closed", None),
    # a GPU's on-chip shared memory (a kernel's tile too large for the SM), no /dev/shm
    ('/tmp/pip-build/exllamav3/exllamav3_ext/quant/exl3_gemm_kernel.cuh(88): error: static assertion failed with '
     '"Invalid kernel params (insufficient shared memory for shape)"\n1 error detected in the compilation of '
     '"exllamav3_ext/quant/exl3_gemm.cu".\n', "dev-shm-full", None),
    (_TRITON, "dev-shm-full", "python-error"),
    # other libraries' refusals with pipeline parallelism, a model's warning before a kill: no DeepSpeed config
    (_TB + '  File "/work/serve.py", line 8, in <module>\n    llm = LLM(model=m, pipeline_parallel_size=2, '
     "speculative_model=d)\nNotImplementedError: Speculative decoding is currently incompatible with pipeline "
     "parallelism\n", "ds-incompatible", None),
    # Megatron-LM's argument check and torchtitan's optimizer builder, each refusing a feature of its own
    (_TB + '  File "/work/Megatron-LM/megatron/training/arguments.py", line 512, in validate_args\n'
     "    assert args.pipeline_model_parallel_size == 1, \\\nAssertionError: --use-torch-fsdp2 is not supported with "
     "pipeline parallelism\n", "ds-incompatible", None),
    (_TB + '  File "/work/torchtitan/torchtitan/components/optimizer.py", line 270, in build_optimizers\n'
     '    raise NotImplementedError(\nNotImplementedError: Optimizers in backward is not supported with pipeline '
     "parallelism.\n", "ds-incompatible", None),
    ("`use_cache=True` is incompatible with pipeline parallelism. Setting `use_cache=False`...\n" + _DS_KILL,
     "ds-incompatible", "killed"),
]


@pytest.mark.parametrize("text,not_expected,expected", NEAR_MISSES)
def test_a_near_miss_gets_no_specific_wrong_cause(text, not_expected, expected):
    found = explain.explain(text)
    assert found is not None and found.signature != not_expected
    if expected is None:
        assert found.signature in explain.GENERIC, found.signature
        assert not found.retry, found  # nothing in it says a restart can help
    else:
        assert found.signature == expected, found.signature


def test_tritons_out_of_resource_is_its_own_error_with_no_restart():
    found = explain.explain(_TRITON)
    assert found.error and found.error["type"].endswith("OutOfResources") and not found.retry


# Multi-rank logs where the symptom's words stand beside the real cause: the rank's own error, an OOM, a kill (right
# before this review too; kept so precedence stays so).
@pytest.mark.parametrize("text,expected", [
    (_RANK3_IMPORT + _STORE_WAIT, "module-not-found"),
    ("[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
     "1202, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800456 milliseconds before timing "
     "out.\n" + _RANK3_IMPORT, "module-not-found"),
    ("node1: [rank4]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.0.0.1]:37426: "
     "Connection reset by peer\n[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
     "cuda-oom"),
    (_DS_KILL + "node2: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
     "[10.0.0.1]:48702\n", "killed"),
    ("[ 7712.112] Out of memory: Killed process 4121 (python3) total-vm:412345kB, anon-rss:398765432kB\n"
     "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection "
     "refused).\n", "memcg-oom"),
])
def test_the_ranks_own_cause_comes_before_what_the_others_saw(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,expected", [
    # the store out of reach with no rank killed first, and the store's wait alone (round 80: rank 0's own words that
    # fewer ranks joined, ranks never started as often as ranks that could not reach it, store-ranks-missing)
    ("[W socket.cpp:601] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection "
     "refused).\n", "master-unreachable"),
    (_STORE_WAIT, "store-ranks-missing"),
    # the op's __del__ alone (its build's output cut off)
    (_DS_DEL, "op-build-failed"),
    (_DS_CUDA, "version-mismatch"),
    # gloo's words of a peer gone
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.1]:48702\n",
     "gloo-peer-closed"),
    # torch's DataLoader on a small /dev/shm
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n",
     "dev-shm-full"),
    # DeepSpeed's PipelineEngine refusals (the older releases' `pipline`)
    ("AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipline parallelism\n", "ds-incompatible"),
])
def test_the_components_own_words_still_name_the_cause(text, expected):
    assert sig(text) == expected


# Review 42 (issue 45): the same words printed by Python itself, by another library or by the launcher's cleanup.
# Python's BrokenPipeError where a pipe's reader closed: a script's output piped into `head` (the signal module's "Note
# on SIGPIPE", docs.python.org/3/library/signal.html#note-on-sigpipe; sphinx-notes/snippet#25), and the flush at exit
# that follows it (pallets/click#712)
_PIPE_HEAD = (_TB + '  File "/work/tools/list_shards.py", line 40, in <module>\n    main()\n  File "/work/tools/'
              'list_shards.py", line 36, in main\n    print(row)\nBrokenPipeError: [Errno 32] Broken pipe\n')
_PIPE_EXIT = ("Exception ignored in: <_io.TextIOWrapper name='<stdout>' mode='w' encoding='UTF-8'>\n"
              "BrokenPipeError: [Errno 32] Broken pipe\n")
# logging's Handler.handleError: a StreamHandler whose stream was closed (pypa/pip#4170, streamlink/streamlink#6142)
_PIPE_LOGGING = ("--- Logging error ---\n" + _TB + '  File "/usr/lib/python3.10/logging/__init__.py", line 1104, in '
                 "emit\n    self.flush()\n  File \"/usr/lib/python3.10/logging/__init__.py\", line 1084, in flush\n"
                 "    self.stream.flush()\nBrokenPipeError: [Errno 32] Broken pipe\nCall stack:\n  File \"/work/train.py\""
                 ", line 210, in <module>\n    main()\n  File \"/work/train.py\", line 188, in main\n    logger.info(f\"step "
                 "{step} loss {loss:.4f}\")\nMessage: 'step 1200 loss 2.3114'\nArguments: ()\n")
# a multiprocessing queue's feeder thread writing to a pipe whose reader had gone (MLOPTPSU/FedTorch#4)
_PIPE_QUEUE = (_TB + '  File "/usr/lib/python3.8/multiprocessing/queues.py", line 245, in _feed\n    send_bytes(obj)\n'
               '  File "/usr/lib/python3.8/multiprocessing/connection.py", line 200, in send_bytes\n    self._send_bytes('
               'm[offset:offset + size])\n  File "/usr/lib/python3.8/multiprocessing/connection.py", line 411, in '
               '_send_bytes\n    self._send(header + buf)\n  File "/usr/lib/python3.8/multiprocessing/connection.py", '
               "line 368, in _send\n    n = write(self._handle, buf)\nBrokenPipeError: [Errno 32] Broken pipe\n")
# an HTTP client reset by a web service: wandb's upload (wandb/wandb#1161)
_HTTP_RESET = ("requests.exceptions.ConnectionError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset "
               "by peer'))\nwandb: Network error (ConnectionError), entering retry loop. See /work/wandb/debug.log for "
               "full traceback.\n")
# torchrun's cleanup after rank 0 failed (torch/distributed/elastic/multiprocessing/api.py, PContext.close; the line as
# pytorch/pytorch#119856 and #115219 quote it), then its summary: rank 0's own exit code 1, no kill from outside
_ELASTIC = "torch.distributed.elastic.multiprocessing.api: "
_TORCHRUN_ESCALATES = (
    "[2024-04-10 16:02:56,193] " + _ELASTIC + "[WARNING] Sending process 271 closing signal SIGTERM\n"
    "[2024-04-10 16:03:26,201] " + _ELASTIC + "[WARNING] Unable to shutdown process 271 via Signals.SIGTERM, forcefully "
    "exiting via Signals.SIGKILL\n[2024-04-10 16:03:27,510] " + _ELASTIC + "[ERROR] failed (exitcode: 1) local_rank: 0 "
    "(pid: 270) of binary: /usr/bin/python3\n" + _TB + '  File "/usr/local/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n" + _TORCHRUN_SEGV.replace("-11 (pid: 5531)", "1 (pid: 270)").replace(
        "Signal 11 (SIGSEGV) received by PID 5531", "To enable traceback see: https://pytorch.org/docs/stable/elastic/"
        "errors.html"))
# pyzmq's bind (zmq_strerror's words): vLLM's engine core socket in an RL job (vllm-project/vllm#24756, zeromq/pyzmq#623)
_ZMQ_BIND = (_TB + '  File "/usr/local/lib/python3.12/dist-packages/vllm/utils/network_utils.py", line 338, in '
             "make_zmq_socket\n    socket.bind(path)\n  File \"/usr/local/lib/python3.12/dist-packages/zmq/sugar/"
             "socket.py\", line 320, in bind\n    super().bind(addr)\n  File \"zmq/backend/cython/_zmq.py\", line 1009, "
             "in zmq.backend.cython._zmq.Socket.bind\n  File \"zmq/backend/cython/_zmq.py\", line 190, in "
             "zmq.backend.cython._zmq._check_rc\nzmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5570')\n")

# (log, the cause it must not get, what it gets, whether a restart may help)
NEAR_MISSES_42 = [
    (_PIPE_HEAD, "gloo-peer-closed", "python-error", False),
    (_PIPE_EXIT, "gloo-peer-closed", "python-error", False),
    (_PIPE_LOGGING, "gloo-peer-closed", "python-error", False),
    (_PIPE_QUEUE, "gloo-peer-closed", "python-error", False),
    (_HTTP_RESET, "gloo-peer-closed", "python-error", True),  # a dropped connection to a service passes
    # torchrun's summary of a positive exit code: the launcher's report, no restart (session 27; python-error before)
    (_TORCHRUN_ESCALATES, "killed", "torchrun-exit", False),
    (_ZMQ_BIND, "address-in-use", "python-error", False),
]


@pytest.mark.parametrize("text,not_expected,expected,retry", NEAR_MISSES_42)
def test_review_42_another_components_words_get_a_generic_answer(text, not_expected, expected, retry):
    found = explain.explain(text)
    assert found is not None and found.signature != not_expected
    assert found.signature == expected and found.signature in explain.GENERIC, found.signature
    assert found.retry is retry, found


@pytest.mark.parametrize("text,expected", [
    # gloo's transport, torch's c10d store, NCCL's socket words: a peer gone
    ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Write error [10.0.0.1]:37426: Broken "
     "pipe\n", "gloo-peer-closed"),
    ("[W socket.cpp:601] [c10d] recv failed: Connection reset by peer\n", "gloo-peer-closed"),
    ("node2:1234:1300 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection reset by peer\n", "gloo-peer-closed"),
    # an older torch's TCPStore raising under torch.distributed's rendezvous frame
    (_TB + '  File "/work/train.py", line 12, in <module>\n    dist.init_process_group("nccl")\n  File "/opt/conda/lib/'
     'python3.8/site-packages/torch/distributed/rendezvous.py", line 172, in _env_rendezvous_handler\n    store = '
     "TCPStore(master_addr, master_port, world_size, start_daemon, timeout)\nRuntimeError: Connection reset by peer\n",
     "gloo-peer-closed"),
    # a kill from outside, in torch's spawn and the shell's words; torch's store's port taken
    ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL\n", "killed"),
    ("/var/spool/slurmd/job123/slurm_script: line 9: 41235 Killed                  python train.py\n", "killed"),
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
     "to bind to [::]:29500 (errno: 98 - Address already in use).\n", "address-in-use"),
])
def test_review_42_the_components_own_words_still_name_the_cause(text, expected):
    assert sig(text) == expected
