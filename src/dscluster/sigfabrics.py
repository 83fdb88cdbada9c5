"""Failure signatures of the fabrics and accelerators other than NVIDIA GPUs on InfiniBand/Ethernet (round 41 of
issue 45; round 98: EFA's security group): AWS EFA, reached through Libfabric and NCCL's aws-ofi-nccl plugin, and
AMD GPUs under ROCm. Each
pattern is the wording of the component that prints it, never one log's:
- aws-ofi-nccl (src/nccl_ofi_net.c and its successors): `NCCL_OFI_WARN("OFI fi_getinfo() call failed: %s", ...)`
  when Libfabric offers no provider for the hints (no EFA device: ENODATA), `NCCL_OFI_WARN("Unable to register memory
  (type = %d) for device %d. RC: %d, Error: %s", ...)` around fi_mr_regattr, type 2 being NCCL_PTR_CUDA; its older
  releases' `Couldn't find any optimal provider` (find_ofi_provider);
- Libfabric: fi_info's `fi_getinfo: %d (%s)` (-61, No data available: no provider matched); the EFA provider's
  `cuda_set_sync_memops()` warning `Failed to perform cuPointerSetAttribute` and `unable to set memops for cuda ptr`
  (efa_mr_hmem_setup), the abort banner `Libfabric EFA provider has encountered an internal error` with `EFA internal
  error: (4112) Failure to post internal receive buffers` (prov/efa's error table, FI_EFA_ERR_INTERNAL_RX_BUF_POST) and
  older releases' `cannot allocate memory for EFA's RX packet pool` (rxr_ep_grow_rx_pkt_pools);
- ROCm: rocminfo's (ROCt's) `Unable to open /dev/kfd read-write: %s` and its `is not member of "video" group` notice;
  HIP's error names hipErrorNoDevice and hipErrorInvalidDevice (hip_runtime_api.h), which torch prints as `HIP error:
  no ROCm-capable device is detected` and rccl-tests as `Test HIP failure ... 'hipErrorInvalidDevice'`;
- Intel Gaudi (round 102): the habana torch bridge's `Graph compile failed. synStatus=synStatus N` raised from torch's
  broadcast, the run's first collective.
sigmessages.py places this table before the container runtimes' and the GPU node's (sigcontainers.py,
sigdevices.py). `retry=False` throughout: the same container on the same node meets the same refusal. The real logs
they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

FABRIC_SIGNATURES: tuple[Signature, ...] = (
    # Libfabric found no EFA device: fi_getinfo's ENODATA (-61), as aws-ofi-nccl or fi_info report it. Not the core's
    # `fi_getinfo: provider efa output empty list` (src/fabric.c, fi_getinfo_: the provider returned success with no
    # entry for those hints), which aws-ofi-nccl's probes print on nodes whose EFA works too (aws/aws-ofi-nccl#889,
    # a p4d.24xlarge whose domains were then created): it says no device only when the plugin's failure follows.
    _sig("efa-no-device", r"NET/OFI (?:OFI )?fi_getinfo\(\) call failed: No data available|"
         r"^[ \t]*fi_getinfo: -61 \(No data available\)|"
         r"NET/OFI Couldn't find any optimal provider",
         "Libfabric found no EFA device for NCCL's aws-ofi-nccl plugin (fi_getinfo: no data): the process does not "
         "see the EFA adapters. Most often a container started without the host's /dev/infiniband devices (or, on "
         "Kubernetes, without the EFA device plugin's resources); also an instance type or launch without EFA "
         "interfaces, or a Libfabric in the image other than the EFA installer's.",
         "Check on the host and inside the container: fi_info -p efa -t FI_EP_RDM must list the adapters. Run the "
         "container with the devices (docker run --device=/dev/infiniband/uverbs0 ... for each, or "
         "vpc.amazonaws.com/efa resources on Kubernetes), launch EFA-enabled instances with their EFA interfaces "
         "in an EFA security group, and use the EFA installer's Libfabric (/opt/amazon/efa).", retry=False),
    # The EFA provider refused to register a GPU buffer with Invalid argument: aws-ofi-nccl's words for a CUDA buffer
    # (type = 2) with RC -22, or Libfabric's own failed cuPointerSetAttribute (sync memops) on a CUDA pointer.
    _sig("efa-cuda-memreg", then(r"NET/OFI Unable to register memory \(type = 2\)", r"RC: -22\b") + "|" +
         then(r"cuda_set_sync_memops\(\)", "Failed to perform cuPointerSetAttribute") + "|" +
         r"unable to set memops for cuda ptr",
         "Libfabric's EFA provider refused to register NCCL's GPU (CUDA) buffers (Invalid argument): a known "
         "incompatibility of NCCL 2.19 and later (a newer PyTorch brings it) with the Libfabric of EFA installers "
         "before 1.29.1, whose CUDA sync-memops setting the CUDA driver refuses for these buffers.",
         "Upgrade the EFA installer (Libfabric) to 1.29.1 or later on the hosts and in the image; until then set "
         "FI_EFA_SET_CUDA_SYNC_MEMOPS=0 for every rank, or use an NCCL older than 2.19 (the PyTorch that ships "
         "it).", retry=False),
    # The EFA provider could not allocate (pin) its internal receive buffers: ENOMEM (-12), as its abort banner
    # says or, in older releases, the RX packet pool's warning.
    _sig("efa-memlock", r"Libfabric error: \(-12\) Cannot allocate memory\s*\n\s*EFA internal error: \(4112\)|"
         r"cannot allocate memory for EFA's RX packet pool",
         "Libfabric's EFA provider could not allocate and register its internal receive buffers (Cannot allocate "
         "memory): the locked-memory limit (ulimit -l) of the ranks is too low for the memory EFA must pin, "
         "often a container's or a launcher's default such as 64 KiB.",
         "Raise the locked-memory limit for every rank: ulimit -l unlimited (`* - memlock unlimited` in "
         "/etc/security/limits.conf, docker run --ulimit memlock=-1, the batch system's or launcher's own "
         "setting), then check `ulimit -l` in the ranks' environment.", retry=False),
    # Round 98: the EFA peers cannot reach each other because the EC2 security group lacks the rules naming itself
    # (EFA's SRD traffic is matched only by a rule whose source and destination is the group, never by 0.0.0.0/0):
    # aws-ofi-nccl's banner for FI_EHOSTUNREACH (src/platform-aws.cpp, PlatformAWS::log_cq_error: "This error
    # indicates that the security group on either this instance or the peer instance is not setup correctly"),
    # Libfabric's EFA error 4126 as gardener-extension-provider-aws#1832 quotes it, and aws-ofi-nccl's failed
    # fi_av_insert of the peer's endpoint (src/nccl_ofi_sendrecv.cpp, nccl_ofi_rdma.cpp, cm/: "Unable to insert remote
    # address into address vector"), which aws/aws-ofi-nccl#663 traced to the missing outbound rule.
    _sig("efa-security-group", r"This error indicates that the security group on either this instance or the peer|"
         r"Unresponsive receiver \(reachable by EFA device but handshake failed\)|"
         r"NET/OFI (?:CM: )?Unable to insert remote address into address vector",
         "The EFA adapters of the nodes cannot reach each other: the instances' security group lacks an inbound and "
         "an outbound rule that name the security group itself. EFA traffic is matched only by such rules (an "
         "outbound rule to 0.0.0.0/0 does not cover it), so TCP, ping and the rendezvous work while NCCL's EFA "
         "connections fail.",
         "Add to the security group of every instance an inbound and an outbound rule, All traffic, whose source "
         "and destination is that security group's own id (AWS's EFA setup guide), keep all nodes in it, and check "
         "with fi_pingpong -p efa between two nodes before launching again.", retry=False),
    # ROCm sees no AMD GPU, or fewer than asked: /dev/kfd absent, HIP's no-device or invalid-device error.
    _sig("rocm-no-device", r"Unable to open /dev/kfd read-write: No such file or directory|hipErrorNoDevice\b|"
         r"HIP error: no ROCm-capable device is detected|hipErrorInvalidDevice\b",
         "The process sees no AMD GPU, or fewer than it asked for: /dev/kfd (ROCm's compute device) is missing, or "
         "HIP reported no device or an invalid device index. Most often a container started without "
         "--device=/dev/kfd --device=/dev/dri; also HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES hiding GPUs, more "
         "GPUs asked for (ranks per node, a test's -g) than the node has, or the amdgpu driver not loaded.",
         "Give the container the GPUs: docker run --device=/dev/kfd --device=/dev/dri --group-add video (and "
         "render) --security-opt seccomp=unconfined, or the runtime's equivalent (apptainer --bind /dev/kfd,/dev/dri "
         "with --containall); check rocminfo and rocm-smi inside it, and ask for at most as many GPUs per node as "
         "it lists.", retry=False),
    # Round 102: Intel Gaudi's graph compiler (SynapseAI, through the habana torch bridge) failing on the first
    # collective of the run, a broadcast of the model's weights (torch's distributed_c10d.broadcast: `work =
    # default_pg.broadcast([tensor], opts)` before torch 2.5, `work = group.broadcast([tensor], opts)` since; DeepSpeed's
    # engine and comm/torch.py reach it). In lazy mode that broadcast compiles what was queued before it, the
    # weights' placement and casts: a compile failure there is the compiler unable to work on that node, not a model's
    # op. huggingface/optimum-habana#1779 (merged): the ranks that DeepSpeed's multi-node runner started on the other
    # node lacked GC_KERNEL_PATH and the other paths /etc/profile.d/habanalabs.sh sets for login shells; the fix is
    # .deepspeed_env. Not the same words raised later, from an all-reduce of a training step (a graph of the model's
    # own ops: optimum-habana#744), nor `synStatus=26 [Generic failure] Device acquire failed` (a device taken).
    _sig("habana-env-missing", r"^[ \t]*work = (?:default_pg|group)\.broadcast\(\[[^\n]{0,200}\n(?:[ \t]*[~^]+[ \t]*\n)?"
         r"(?P<ev>[^\n]{0,200}?Graph compile failed\. synStatus=synStatus \d+)",
         "Intel Gaudi's graph compiler failed on the run's first collective (the broadcast of the model's weights), "
         "before any of the model's own operations: the Habana software cannot work on that node. Most often its "
         "environment is missing there: GC_KERNEL_PATH, HABANA_SCAL_BIN_PATH, HABANA_PLUGINS_LIB_PATH and the other "
         "paths that /etc/profile.d/habanalabs.sh sets for login shells only, which ranks started over ssh (DeepSpeed's "
         "multi-node runner, pdsh, an MPI launcher) do not read; else its SynapseAI software does not match the habana torch "
         "packages on that node.",
         "Pass the Habana environment to every rank: put the variables of /etc/profile.d/habanalabs.sh (GC_KERNEL_PATH="
         "/usr/lib/habanalabs/libtpc_kernels.so, HABANA_SCAL_BIN_PATH, HABANA_PLUGINS_LIB_PATH, "
         "DATA_LOADER_AEON_LIB_PATH, HABANA_LOGS) in .deepspeed_env on the launching node (an MPI launcher: export each by its own option), then "
         "check `env | grep -i habana` in a rank on each node; if they are set, make the SynapseAI version (hl-smi) "
         "match the habana torch packages on every node. $HABANA_LOGS holds the compiler's own reason.", retry=False),
    # /dev/kfd exists but this user may not open it: not in the group (video/render) that owns it. rocminfo's group
    # notice counts only under its failed open: older rocminfo printed it before every run, then listed the GPUs
    # (ROCm/ROCm#1008, a user outside "video" whose rocminfo worked).
    _sig("rocm-kfd-permission", r"Unable to open /dev/kfd read-write: (?:Permission denied|Operation not permitted)|"
         r"Unable to open /dev/kfd read-write: [^\n]{0,200}\n[^\n]{0,200}?is not member of \"(?:video|render)\" group",
         "The process may not open the AMD GPU devices (/dev/kfd, /dev/dri): its user is not in the group that "
         "owns them (video or render); in a rootless container the user namespace does not map the host's groups.",
         "Add the user to the group that owns /dev/kfd and /dev/dri (ls -l /dev/kfd; sudo usermod -aG video,render "
         "USER, then log in again); in a container pass --group-add video --group-add render, and for a rootless "
         "one map the host's video and render group ids into it (/etc/subgid) or run it rootful.", retry=False),
    # Round 144. oneCCL's transport layer (ATL, over libfabric/OFI or MPI) failing a send, receive or wait inside a
    # collective: src/atl/atl_def.h ATL_CALL_THROW_IF_ERROR (oneCCL 2021.13 on) throws CCL_THROW(#func "\n fails with
    # status: ", status), which src/common/log/log.hpp formats as `<file>:<line> <function>: EXCEPTION: <call>` and
    # torch's xccl backend raises as `RuntimeError: oneCCL: ...`; the call is atl_comm->wait/check/send/recv/... in the
    # sycl algorithms (allgatherv_ring.hpp, reduce_scatter_ring.hpp, *_scaleout_sycl.cpp, sycl_pipe_send.cpp). The
    # non-throwing ATL_CALL (a provider's set-up, LOG_ERROR) is not read here.
    _sig("oneccl-fabric-transport", r"EXCEPTION: atl_comm->\w+\([^\n]{0,300}?\)\s*fails with status: \d+",
         "oneCCL's transport layer (ATL, over libfabric/OFI or MPI) reported a failed transfer between ranks inside a "
         "collective (`atl_comm->wait(...) fails with status`): the fabric's provider could not complete it. Most "
         "often its settings: on HPE Slingshot (libfabric's CXI provider) the FI_CXI_* tuning of rendezvous "
         "thresholds and overflow buffers for large inter-node messages, which the site's frameworks module exports "
         "and a hand-built environment lacks (one node runs clean, several fail); else FI_PROVIDER or "
         "CCL_ATL_TRANSPORT naming a provider or transport the network does not carry, or a peer rank that failed "
         "first.",
         "Run every rank in the environment the site recommends for oneCCL on that system (its frameworks/AI module: "
         "the FI_CXI_*, FI_PROVIDER and CCL_* variables it exports; compare `env | grep -E '^(FI_|CCL_)'` between a "
         "working setup and the failing one) rather than a hand-built one; check the other ranks' logs for one that "
         "failed first. A restart in the same environment fails the same way.", retry=False),
)
