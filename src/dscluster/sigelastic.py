"""Failure signatures of torch elastic's rendezvous as the orchestrators other than a batch scheduler drive it
(round 45 of issue 45: Kubeflow's elastic PyTorchJob, torchx's Kubernetes scheduler, torchrun --nnodes=MIN:MAX), and
of a launcher's CPU-only process that imports a GPU stack (Ray Train's trainer actor, a job submitter). Each pattern is
the wording of the component that raises it: torch/distributed/elastic/rendezvous/api.py's exception classes, raised by
dynamic_rendezvous.py's _RendezvousOpExecutor.run (and etcd_rendezvous.py) and printed by name in the traceback's last
line or torch elastic's error_handler JSON ("message": "RendezvousClosedError: "); triton/runtime/driver.py's
_create_driver, f"{len(actives)} active drivers ({actives}). There should only be one."; round 113: Horovod's Gloo
rendezvous store (horovod/common/gloo/http_store.cc, memory_store.cc); round 155: the endpoint check of
rendezvous/utils.py given an endpoint whose port an unset launcher value filled. sigmessages.py places this
table after the model repositories' and before the training stack's: more specific than an exception's bare type. The
real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

ELASTIC_SIGNATURES: tuple[Signature, ...] = (
    # RendezvousClosedError: the rendezvous was marked closed (state.closed) by an agent's shutdown(), which torch's
    # launcher calls when its agent ends: the job finished, or (pytorch/pytorch#67742) an agent stopped by a signal,
    # a deleted pod's SIGTERM or Ctrl-C. Agents that join that run id afterwards, restarted pods included, find it
    # closed for good; the etcd backend keeps it across pods restarts when the run id is reused ('none'). Round 110: torch
    # itself closed it whenever an agent stopped on a signal from pytorch/pytorch PR#117066 (January 2024) until PR#152525
    # (May 2025, "elastic: do not shutdown rendezvous on leaving workers", fixing #150916): a node taken out of an
    # elastic job ended the others instead of scaling down.
    _sig("elastic-rdzv-closed", r"\bRendezvousClosedError\b",
         "torch elastic's rendezvous for this run id is closed: another node's agent shut it down when it ended (its "
         "job finished or failed, or it was stopped by a signal: a deleted or preempted pod's SIGTERM, Ctrl-C), and "
         "an agent that joins a closed rendezvous fails, restarted ones too, since the closed state stays in the "
         "rendezvous store (etcd, or the c10d store) under the same run id.",
         "Find the node whose agent ended first (its own log has the real error or the signal) and start the whole "
         "job again with a new, unique rendezvous id (torchrun --rdzv_id; an elastic PyTorchJob otherwise uses "
         "'none', shared by every job on that etcd); restarting single pods or agents into the old run id fails the "
         "same way. Where that node was only stopped or taken out (its agent got a SIGTERM or Ctrl-C) and the others "
         "should have carried on with fewer nodes, the closing is torch's own from pytorch/pytorch PR#117066 (early "
         "2024): a torch release with PR#152525 (May 2025) no longer closes the rendezvous for a leaving agent.",
         retry=False),
    # RendezvousTimeoutError: the rendezvous's join deadline (--rdzv_conf timeout, 900 s by default) passed before
    # --nnodes' minimum of nodes had joined: the others were not started, started late, or could not reach the
    # rendezvous endpoint (a name that does not resolve yet, a wrong endpoint, a port not open between pods).
    _sig("elastic-rdzv-timeout", r"\bRendezvousTimeoutError\b",
         "torch elastic's rendezvous timed out: fewer nodes than --nnodes' minimum joined before its deadline (the "
         "rdzv timeout, 900 s by default). The other nodes were not started or started late (pods pending, a slow "
         "setup), or could not reach the rendezvous endpoint (its host name not yet in DNS, a wrong "
         "--rdzv_endpoint, the port closed between them); their own logs say which.",
         "Check that every node was started with the same --rdzv_endpoint, --rdzv_id and --nnodes, that the "
         "endpoint's host name resolves and its port is reachable from every pod (on Kubernetes a headless service "
         "for the first pod), and that no node's setup takes longer than the timeout (raise it with --rdzv_conf "
         "timeout=SECONDS). A restart can pass once a late node is up."),
    # Round 113. Horovod's Gloo controller rendezvous: each worker registers in the launcher's HTTP store (an in-memory
    # one under Spark/Ray) and HTTPStore::wait / MemoryStore::wait throw gloo::IoException once HOROVOD_GLOO_TIMEOUT_
    # SECONDS (30 s by default; horovodrun --gloo-timeout-seconds) pass before every rank's key is there: "Wait timeout
    # for key(s): 0" (0.19), "Wait timeout after 30 seconds for key(s): 0. You may want to increase the timeout via
    # HOROVOD_GLOO_TIMEOUT_SECONDS" (0.21+, horovod#2436). Horovod's own file only: gloo's FileStore, HashStore and
    # RedisStore (gloo/rendezvous/*_store.cc) say the same first words.
    _sig("horovod-gloo-rendezvous-timeout", r"horovod/common/gloo/(?:http|memory)_store\.cc:\d+\][^\n]{0,400}?"
         r"Wait timeout (?:after \d+ seconds )?for key\(s\)|You may want to increase the timeout via "
         r"HOROVOD_GLOO_TIMEOUT_SECONDS",
         "Horovod's Gloo rendezvous timed out: not every worker registered with the launcher's rendezvous store "
         "within HOROVOD_GLOO_TIMEOUT_SECONDS (30 s by default). With many hosts some workers come up later than "
         "that (started over ssh, then importing the framework); a worker that cannot reach the launcher's address "
         "never registers.",
         "Give the rendezvous more time: horovodrun --gloo-timeout-seconds 240 (the variable alone may not reach "
         "every worker), as large as the slowest start; if it still times out, check that every host reaches the "
         "launching host's address and port (horovodrun --network-interface). The same launch at the same scale "
         "times out again.", retry=False),
    # Round 155. torch/distributed/elastic/rendezvous/utils.py parse_rendezvous_endpoint: ValueError(f"The port number
    # of the rendezvous endpoint '{endpoint}' must be an integer between 0 and 65536.") where the endpoint's port is the
    # text None, a Python None formatted into it: accelerate launch's multi-node path (utils/launch.py
    # prepare_multi_gpu_env and prepare_deepspeed_cmd_env, args.rdzv_endpoint = f"{main_process_ip}:{main_process_port}"
    # when --same_network is not set; 0.24 left main_process_port None when none was given). A port out of range (a
    # --master_port above 65535) or an empty one (an unset shell variable) is another mistake and is not read here.
    _sig("accelerate-endpoint-unset",
         r"The port number of the rendezvous endpoint '[^'\n]{0,200}:None' must be an integer between 0 and 65536",
         "The multi-node launch had no main process port (nor, where the endpoint reads 'None:None', address): the "
         "launcher formatted unset values into torch's rendezvous endpoint. accelerate launch builds it from "
         "--main_process_ip and --main_process_port (or the config's main_process_ip/main_process_port); they were "
         "not given, or were never parsed: a value after a flag that takes none (--same_network 'true', --multi_gpu "
         "true) is read as the training script, and every option after it goes to that script.",
         "Give every node the main node's address and port (accelerate launch --main_process_ip IP "
         "--main_process_port PORT, or main_process_ip/main_process_port in the config file), and pass flags such as "
         "--same_network and --multi_gpu bare, without a value, before the script's name. A restart fails the same "
         "way.", retry=False),
    # Round 156. The rendezvous store's port below 1024: torch/csrc/distributed/c10d/socket.cpp's SocketListenOp
    # (tryListen: "The server socket has failed to bind to {} (errno: {} - {}).", the address as `[::]:97` or
    # `0.0.0.0:97`; the DistNetworkError or RuntimeError joins them after "failed to listen on any local network
    # address."), errno 13 on a port only root may bind. Not errno 98 on such a port (`[::]:22`, another server holds
    # it: address-in-use), nor errno 13 on a high port (a security policy, not the port's number).
    _sig("store-port-privileged", r"server socket has failed to bind to (?:\[[^\]\n]{1,60}\]|[\w.:-]{1,60}?):"
         r"(?:[1-9]\d{0,2}|10[01]\d|102[0-3])(?!\d)[^\n]{0,12}?\(errno: ?13\b|Permission denied: The server socket has "
         r"failed to bind to (?:\[[^\]\n]{1,60}\]|[\w.:-]{1,60}?):(?:[1-9]\d{0,2}|10[01]\d|102[0-3])(?!\d)",
         "The rendezvous store's port (--master_port or MASTER_PORT, or the port of --rdzv_endpoint) is below 1024: "
         "only root may listen on such a port, so the store's server socket on the first node could not bind it "
         "(errno 13, Permission denied).",
         "Use a port from 1024 up, e.g. torchrun's default 29500 or another free one; a port drawn at random (bash's "
         "$RANDOM) must be moved into that range (29500 + RANDOM % 1000). A restart with the same port fails the "
         "same way.", retry=False),
    # triton's driver registry: no backend whose is_active() holds, i.e. no GPU visible to this process (a CPU-only
    # actor or launcher). Reached at import time through a library that builds a triton autotuner on import
    # (deepspeed <= 0.16.3 with triton 3.2, deepspeedai/DeepSpeed#7028). Two or more active drivers is another case.
    # Round 183 (live): the same words when a user's own @triton.jit kernel is launched on a CPU-only node (triton/
    # runtime/driver.py _create_driver, reached from the kernel's launch): the text names that case too.
    _sig("triton-no-gpu-driver", r"\b0 active drivers \(\[\]\)\. There should only be one",
         "Triton found no GPU driver in this process: it runs where no GPU is visible (a CPU-only node or test run, "
         "a CPU-only launcher or orchestrator process such as Ray Train's trainer actor, a job submitter, "
         "CUDA_VISIBLE_DEVICES empty), and code there runs or builds Triton kernels: the project's own @triton.jit "
         "kernel or a library's fused one called on CPU tensors, or a library that builds them at import time "
         "(deepspeed <= 0.16.3 with triton 3.2 does).",
         "Run Triton kernels only where a GPU is visible: run the job on GPU nodes (check CUDA_VISIBLE_DEVICES and "
         "nvidia-smi there), and give the project's own kernel a plain torch fallback when the tensor is not on a "
         "GPU (if not x.is_cuda: use torch's op); for a launcher or orchestrator process, import deepspeed (or the "
         "library in the traceback) only inside the code that runs on the GPU workers, or upgrade deepspeed to "
         "0.16.4+ (or pin triton below 3.2). A restart fails the same way.", retry=False),
    # Round 182: torch's TCPStore client, TCPStore::ping (torch/csrc/distributed/c10d/TCPStore.cpp), run as the client
    # connects: it sends its pid as a nonce and the store echoes it; "Ping failed, invalid value returned from server.
    # Expected: N, Got: M" (a DistNetworkError, retried as "TCP client failed to connect/validate to host H:P -
    # retrying") means a server answered at MASTER_ADDR:MASTER_PORT that is not torch's store (1347703880 is "HTTP").
    _sig("store-port-foreign-server", r"\bPing failed, invalid value returned from server\. Expected: \d+, Got: \d+",
         "A rank reached MASTER_ADDR:MASTER_PORT, but what answered there is not torch's rendezvous store (its ping "
         "came back with another value; 1347703880 is the letters HTTP of a web server's reply): another program "
         "listens at that address and port. MASTER_ADDR names another machine than rank 0's (set in the script or "
         "the shell for another cluster), MASTER_PORT is another service's port (a web or inference server), or a "
         "proxy answers for addresses this network does not route.",
         "Use the launcher's MASTER_ADDR and MASTER_PORT (do not set them in the script), or set them to rank 0's "
         "node and a port no other service there uses (`ss -ltnp` on that node shows what listens). A restart fails "
         "the same way while they point there.", retry=False),
)
