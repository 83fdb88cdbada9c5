"""Failure signatures of the collective-communication stack of multi-node GPU jobs (round 26 of issue 45): Open MPI's
TCP transport on an interface the nodes do not share, Open MPI started directly by the scheduler without its PMI
support, the MPI launcher taking a word of its command line (a host list without its option) as the program, and
NCCL's NVLink SHARP (NVLS) multicast failing on an NVSwitch node. Each pattern is the wording of the component that
prints it (Open MPI's opal/mca/btl/tcp help-mpi-btl-tcp.txt and btl_tcp_endpoint.c, its ess/PMI help text, its
launcher's help-orterun.txt; NCCL's src/transport/nvls.cc; round 30: NCCL's src/graph/topo.h; round 51: a CUDA call NCCL's init
finds unsupported, NCCL's src/graph/paths.cc; round 58: its sysfs PCI path, src/graph/xml.cc; round 67: its kernels
missing for the GPU, src/enqueue.cc under src/include/checks.h's CUDACHECK; round 98: an InfiniBand completion's
status 4, src/transport/net_ib; round 113: the Hydra process manager's mpiexec (src/pm/hydra/lib/utils/args.c) refusing
an Open MPI option), never one log's.
sigmessages.py places this table after
the parallel frameworks', before the loader's words and every answer that only says something failed (the MPI
launcher's daemons, a script not found). The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

# A host list as the MPI launchers and Horovod take it after -H/--host: name:slots[,name:slots...].
_HOSTS = r"[\w.-]{1,64}:\d{1,5}(?:,[\w.-]{1,64}:\d{1,5}){0,63}"  # bounded: read in linear time

# What a crash handler prints before the frames (nccl-ras-crash): UCX's (ucs_handle_error), glibc's and the shell's
# words, gdb's `received signal SIGSEGV`, Open MPI's and Abseil's handlers.
_CRASH = re.compile(r"Caught signal 11\b|Segmentation fault|\bSIGSEGV\b|^[ \t]*==== backtrace|"
                    r"\*\*\* Process received signal \*\*\*", re.IGNORECASE | re.MULTILINE)


def _no_crash_before(m: re.Match, texts: Iterable[str]) -> bool:
    """nccl-ras-crash's Signature.aside_if: no crash handler's words stand before the frame (a hang's dump of every
    thread, a profiler's stacks): the RAS function is on a stack, not where the process crashed."""
    return not _CRASH.search(m.string, 0, m.start())


CCL_SIGNATURES: tuple[Signature, ...] = (
    # Round 98: an InfiniBand work request NCCL posted completed with status 4, IBV_WC_LOC_PROT_ERR (local protection
    # error). NCCL's src/transport/net_ib (p2p.cc ncclIbLogCompletionWithError, gin.cc; net_ib.cc before 2.24) in each
    # release's words: "NET/IB : Got completion [from peer %s ]with error %d, opcode %d, len %d, vendor err %d" (to
    # 2.19), "... with status=%d opcode=%d len=%d vendor err %d" (2.20-2.27, and the SHARP plugin's ib_plugin.c),
    # "NET/IB: ... with status=%s(%d) opcode=..." (ibvWcStatusStr: IBV_WC_LOC_PROT_ERR(4)), and the hint NCCL then
    # prints for this status (src/transport/net_ib/common.h, printIbWcStatusHint): ACS breaking GPU Direct RDMA
    # (nvidia/nccl#928, #523, #1052, #214). Only status 4: 12 (retry exceeded), 5 (flushed) and the others are nccl-ib's.
    _sig("ib-completion-acs", r"NET/IBP?(?:/GIN)?\s?:\s?Got completion (?:from peer (?:\S+ )?)?with (?:error 4,|status="
         r"(?:IBV_WC_LOC_PROT_ERR\()?4\b)|HINT: In many cases this error occurs when ACS is enabled which would break",
         "An InfiniBand transfer of NCCL failed with a local protection error (status 4, IBV_WC_LOC_PROT_ERR): the "
         "adapter could not access the GPU memory it was given. In most cases PCIe ACS (Access Control Services) is "
         "enabled on the servers and breaks GPUDirect RDMA, the adapter's direct access to GPU memory (NCCL's own "
         "hint); an IOMMU not in passthrough mode does the same.",
         "Confirm with NCCL_NET_GDR_LEVEL=0 (GPUDirect RDMA off: it then runs, slower). Then disable ACS on the PCIe "
         "bridges between GPUs and adapters (the server's BIOS setting or setpci at every boot, per the vendor's "
         "guide; NCCL's troubleshooting page, section ACS), set the IOMMU to passthrough (iommu=pt), and launch "
         "again with GPUDirect RDMA on.", retry=False),
    # NCCL's src/graph/topo.h, ncclTopoIdToIndex: WARN("Could not find %s with id %lx", topoNodeTypeStr[type], id) and
    # ncclInternalError when the topology it built lacks the network device a search asks for by id (torch then
    # reports "internal error - please report this issue to the NCCL developers"). Seen with NCCL 2.25-2.26 (the NeMo
    # 25.04+ and NGC containers of that time) on multi-node InfiniBand jobs; NCCL 2.27 fixed it there. The file's words
    # as the log line quotes them; topo.h itself not read here. NET only: a GPU or CPU id missing is another story.
    _sig("nccl-topology-net", r"NCCL WARN Could not find NET with id \w+",
         "NCCL's topology search failed while it set up the communicator across nodes: it looked for a network "
         "device (NET) by an id its own topology does not list, an internal error of the NCCL version in use (seen "
         "with NCCL 2.25-2.26 in the NeMo 25.04+ containers on InfiniBand clusters; single-node runs are not "
         "affected).",
         "Use a newer NCCL (2.27.3 fixed it for the NeMo containers: a later container, or a newer NCCL installed "
         "into it and found first via LD_LIBRARY_PATH/LD_PRELOAD); NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH,NET shows "
         "the topology it built. A restart with the same NCCL fails the same way.", retry=False),
    # Open MPI, opal/mca/btl/tcp/help-mpi-btl-tcp.txt [invalid if_inexclude]: "WARNING: An invalid value was given
    # for btl_tcp_if_include.  This value will be ignored. ... Message: Unknown interface name" (oob_tcp's help has
    # the same for oob_tcp_if_include); btl_tcp_endpoint.c's mca_btl_tcp_endpoint_recv_connect_ack: "received
    # unexpected process identifier" when a connection comes from another process than the one the address was
    # published for (an address every node has: docker0's 172.17.0.1, a bridge).
    _sig("mpi-tcp-interface", r"An invalid value was given for (?:btl|oob)_tcp_if_(?:include|exclude)\b|"
         r"recv_connect_ack\]? received unexpected process identifier",
         "Open MPI's TCP transport was not confined to the network the nodes share: the interface it was given is "
         "named otherwise (or absent) on one node, or it used one every node has at the same address (docker0, a "
         "bridge), so a process reached the wrong peer or none.",
         "Give the MPI launcher the training network on every node by subnet, which does not depend on the "
         "interface's name (-mca btl_tcp_if_include 10.0.0.0/24, and oob_tcp_if_include likewise), or exclude the "
         "virtual ones (-mca btl_tcp_if_exclude lo,docker0); NCCL_SOCKET_IFNAME to the same network.", retry=False),
    # Open MPI's PMI help text when a rank finds itself direct-launched by a scheduler it has no PMI support for:
    # 'The application appears to have been direct launched using "<launcher>", but OMPI was not built with
    # <scheduler>'s PMI support and therefore cannot execute.'
    _sig("mpi-pmi-unsupported", r"OMPI was not built with \S+ PMI support",
         "The ranks were started directly by the scheduler's step launcher, but this Open MPI was built without "
         "that scheduler's PMI/PMIx support (or the scheduler without the PMIx this Open MPI needs), so no rank "
         "can join the job: MPI_Init fails in each.",
         "Start the ranks with the MPI launcher inside the allocation, or pick a PMI the two share in the step "
         "launcher's --mpi option (its --mpi=list shows what the scheduler was built with: pmix, pmi2), or rebuild "
         "Open MPI --with-pmix/--with-pmi against the scheduler's.", retry=False),
    # Open MPI's help-orterun.txt [orterun:executable-not-found]: "... was unable to find the specified executable
    # file ... (remember that <launcher> interprets the first unrecognized command line token as the executable).
    # ... Executable: <token>": a token that is a host list is an option's value that lost its option (-H).
    _sig("launcher-argument-as-program", r"^[ \t]*Executable:[ \t]{1,16}" + _HOSTS + r"[ \t]*$|" + then(
         r"(?:^|[ \t])-(?:np|n)[ \t]{1,8}\d{1,6}[ \t]{1,8}" + _HOSTS + r"\s",
         r"unable to find the specified executable file", r"[\s\S]"),
         "The MPI launcher took a word of its command line as the program to run: a host list given without its "
         "option (-H), so it found no such executable; the training script was never looked for.",
         "Put the host list after its option (-H host1:2,host2:2, or --hostfile), then the program and its "
         "arguments (python train.py ...); the launcher runs the first word it does not know as the program.",
         retry=False),
    # NCCL's src/transport/nvls.cc: its CUCHECK of the multicast calls (cuMulticastCreate, cuMulticastAddDevice,
    # cuMulticastBindMem) prints "transport/nvls.cc:N NCCL WARN Cuda failure N '<CUDA's error string>'"; since 2.2x
    # "Failed to bind NVLink SHARP (NVLS) Multicast memory of size N : CUDA error N '...'".
    _sig("nvls-multicast", r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory|"
         r"transport/nvls\.cc:\d+ NCCL WARN Cuda failure\b",
         "NCCL's NVLink SHARP (NVLS) transport failed a CUDA multicast call on this NVSwitch node: the NVSwitches' "
         "multicast, which the Fabric Manager sets up, is not usable in its present state (Fabric Manager or "
         "NVSwitch trouble, or its multicast objects used up).",
         "Check the node's fabric (nvidia-smi -q: Fabric State Completed, Status Success; the nvidia-fabricmanager "
         "service at the driver's version) and restart it or the node; meanwhile NCCL_NVLS_ENABLE=0 avoids NVLS "
         "at some speed.", retry=False),
    # Round 51. NCCL's CUDACHECK (src/include/checks.h): WARN("Cuda failure %d '%s'", err, cudaGetErrorString(err)),
    # older releases without the number; cudaErrorNotSupported (801) reads "operation not supported". At communicator
    # init (init.cc) recent NCCL creates a CUDA memory pool (cudaMemPoolCreate, NCCL 2.26-2.27) and cuMem allocations,
    # which some drivers and virtual GPUs refuse. Placed after nvls-multicast: the NVLS transport's own refusal
    # (transport/nvls.cc) is that signature's.
    _sig("nccl-cuda-op-unsupported", r"NCCL WARN Cuda failure (?:801 )?'operation not supported'",
         "A CUDA call NCCL makes while it sets up the communicator (a CUDA memory pool or cuMem allocation of recent "
         "NCCL releases) was refused as not supported by this GPU's driver or virtualization: seen on NVIDIA vGPU "
         "virtual machines without Unified Memory (UVM) enabled, where older NCCL (2.21) works.",
         "On a vGPU VM enable Unified Memory for the vGPU (VMware: pciPassthru<N>.cfg.enable_uvm = 1) or update the "
         "guest driver; otherwise run the NCCL of an earlier torch or container that works on this machine. "
         "NCCL_DEBUG=INFO shows the failing init.cc line. A restart fails the same way.", retry=False),
    # Round 51. NCCL's src/graph/paths.cc (ncclTopoSetPaths): WARN("Failed to find reverse path from remNode %d/%lx
    # nlinks %d to node %d/%lx") and ncclInternalError when the topology it detected holds a link one way and no path
    # back (RCCL prints the same words from its hipified copy). Seen with an NCCL older than the GPUs (2.14 on H100),
    # with drivers reporting NVLink inconsistently, and in VMs exposing part of the PCI tree.
    _sig("nccl-topology-path", r"Failed to find reverse path from remNode \d+/\w+ nlinks \d+ to node",
         "NCCL's topology detection built an inconsistent picture of this machine's GPU interconnect (a link from "
         "one device to another with no path back) and stopped with an internal error: most often an NCCL older "
         "than the GPUs (H100 needs NCCL 2.15 or later; old containers ship 2.14), also a driver reporting NVLink "
         "inconsistently or a virtual machine exposing only part of the PCI topology.",
         "Use a newer NCCL (the one a current torch or container ships; python -c 'import torch; "
         "print(torch.cuda.nccl.version())'); compare nvidia-smi topo -m across the nodes; in a VM give NCCL the "
         "provider's topology file (NCCL_TOPO_FILE). A restart fails the same way.", retry=False),
    # Round 67. NCCL looking up its own device kernels (src/enqueue.cc, ncclInitKernelsForDevice: cudaFuncGetAttributes
    # / cudaFuncSetAttribute on each kernel) under CUDACHECK (src/include/checks.h): WARN("Cuda failure '%s'",
    # cudaGetErrorString(err)), recent releases WARN("Cuda failure %d '%s'") with cudaErrorSymbolNotFound's 500. The
    # runtime finds no kernel image of this name for the device: the libnccl in use was compiled without the GPU's
    # architecture (NVIDIA/nccl#1372: NVCC_GENCODE sm_80 only, run on H100; a torch wheel for a CUDA older than the
    # GPU, pytorch/pytorch#152077). Read only without a number (the runtime check of releases that printed none) or
    # from enqueue.cc: the driver-API CUCHECK prints the same words for CUDA_ERROR_NOT_FOUND (also 500), as
    # register.cc's ncclCommRegister does on memory or GPUs that cannot be registered, and NCCL falls back from it.
    # torch quotes NCCL's last WARN after its own error (NCCLUtils: "Last error:\n" + ncclGetLastError()).
    _sig("nccl-arch-missing", r"(?:NCCL WARN |Last error:\s{0,4}(?:\[rank\d{1,6}\]:\s{0,2})?)"
         r"Cuda failure 'named symbol not found'|"
         r"enqueue\.cc:\d+ NCCL WARN Cuda failure (?:500 )?'named symbol not found'",
         "NCCL could not find its own GPU kernels for this GPU (CUDA: named symbol not found when it set them up): "
         "the NCCL library in use was compiled without this GPU's architecture, e.g. an NCCL built with "
         "NVCC_GENCODE for older GPUs only (sm_80 run on H100), or torch's bundled NCCL from a wheel for an older "
         "CUDA than the GPU needs (a CUDA 11.8 build on an RTX 50-series, which needs CUDA 12.8 builds).",
         "Use an NCCL built for this GPU: install the torch wheel for a CUDA version that supports the GPU (its "
         "bundled NCCL comes with it), or rebuild NCCL with NVCC_GENCODE naming the GPU's compute capability (e.g. "
         "-gencode=arch=compute_90,code=sm_90 for H100) on every node; the 'NCCL version' line and LD_LIBRARY_PATH / "
         "LD_PRELOAD show which libnccl is loaded. A restart fails the same way.", retry=False),
    # Round 96. NCCL setting up its kernels for the device (ncclInitKernelsForDevice, src/enqueue.cc) finds they ask for
    # more dynamic shared memory than the GPU gives a block: 2.25's INFO "ncclMaxSharedMem %d exceeds device/fn
    # maxSharedMem %zu" (it then shrinks the request and the kernels fail to launch: torch's `unhandled cuda error`),
    # 2.26's WARN "cudaArch %d ncclMaxSharedMem %d exceeds ..." (ncclSystemError), later releases' "cudaArch %d dynamic
    # smem %d exceeds device/fn maxSharedMem %d". NCCL 2.25.1 on GeForce RTX 50-series cards (NVIDIA/nccl#1637,
    # nccl-tests#287 and #291: fixed in NCCL 2.26.2). Review 108: not after a cudaArch of three digits: NVIDIA's GPUs up
    # to sm_90 (700-900) give NCCL's kernels the shared memory they ask, while RCCL, ROCm's NCCL, prints the same check
    # for AMD's gfx9 GPUs (its NCCL_CUDA_ARCH 900-950: "cudaArch 940 ncclMaxSharedMem 32832 exceeds device/fn
    # maxSharedMem 27760", a device-linker build of rocm-systems' rccl on MI300A), whose fix is not NCCL's release.
    _sig("nccl-blackwell-shared-mem", r"(?<!cudaArch \d\d\d )(?:ncclMaxSharedMem|dynamic smem) \d{1,9} exceeds "
         r"device/fn maxSharedMem \d",
         "NCCL's GPU kernels ask for more shared memory per block than this GPU allows (NCCL: 'exceeds device/fn "
         "maxSharedMem' as it set them up), so they cannot be launched and its first collective fails (torch: "
         "unhandled cuda error, or unhandled system error): the NCCL release in use does not fit this GPU, e.g. NCCL "
         "2.25.1, bundled with torch's CUDA 12.8 wheels of early 2025, on GeForce RTX 50-series cards.",
         "Use an NCCL release that supports the GPU: NCCL 2.26.2 or newer for the RTX 50-series (pip install -U "
         "'nvidia-nccl-cu12>=2.26.2' in the environment torch loads it from, or a torch build that bundles it) on "
         "every node; the 'NCCL version' in torch's error shows which one is loaded. A restart fails the same way.",
         retry=False),
    # NCCL's SHM transport (src/transport/shm.cc) sharing host memory through cuMem (NCCL_CUMEM_HOST_ENABLE, on by
    # default in recent releases): the CUCHECK of that path fails with CUDA error 217 on GPUs without peer access (L4,
    # some VMs) instead of falling back (NVIDIA/nccl#1838; ray-project/ray PR 64109 sets NCCL_CUMEM_HOST_ENABLE=0 for
    # it). The generic P2P answer's NCCL_P2P_DISABLE does not help here: only its file, shm.cc, tells them apart.
    _sig("nccl-cumem-host", r"transport/shm\.cc:\d+ NCCL WARN Cuda failure 217\b",
         "NCCL's shared-memory transport allocates host memory through CUDA's cuMem API (NCCL_CUMEM_HOST_ENABLE, on "
         "by default in recent NCCL releases), and on GPUs without peer-to-peer access (L4 and other PCIe cards, "
         "some virtual machines) that path asks for peer access and fails with CUDA error 217 instead of falling "
         "back.",
         "Set NCCL_CUMEM_HOST_ENABLE=0 for every rank (the launcher's environment, .deepspeed_env for remote ranks); "
         "NCCL_P2P_DISABLE=1 alone does not avoid this path. A restart fails the same way.", retry=False),
    # Round 114. A rank attaching to another rank's SHM buffer (src/transport/shm.cc ncclShmImportShareableBuffer, the
    # legacy /dev/shm path) takes the name and size from the descriptor the other rank sent; the creator allocated it
    # through cuMem (NCCL_CUMEM_HOST_ENABLE) and the importer read that descriptor as a /dev/shm suffix and size:
    # ncclShmOpen fails (src/os/linux.cc, older misc/shmutils.cc: WARN "Error while %s shared memory segment %s (size
    # %ld), error: %s (%d)", "attaching to") on a garbage name of size 0 (NVIDIA/nccl PR 2059: memoryless NUMA domains,
    # an EPYC with unpopulated memory channels). Only with the ", error: ..." of 2.23 and later, the releases with cuMem
    # host memory. A real segment's attach names its creator's non-zero size (nccl#1589), and a create that fails is
    # dev-shm-full's.
    _sig("nccl-cumem-host-numa", r"Error while attaching to shared memory segment /dev/shm/nccl-\S{0,64} \(size 0\), "
         r"error:",
         "A rank tried to attach to a shared-memory segment with a garbage name and size 0 (NCCL: 'Error while "
         "attaching to shared memory segment /dev/shm/nccl-... (size 0)'): the rank that shared the buffer allocated it "
         "through CUDA's cuMem API (NCCL_CUMEM_HOST_ENABLE, on by default in recent NCCL releases) and this rank read "
         "its descriptor as a /dev/shm file name, which NCCL does when its cuMem host allocation works for some "
         "ranks' NUMA domains and not for others: memoryless NUMA domains (a CPU whose memory channels are not all "
         "populated), NUMA domains with memory but no CPUs, a filtered or sparse CPU list (NVIDIA/nccl#2190).",
         "Set NCCL_CUMEM_HOST_ENABLE=0 for every rank (the launcher's environment, .deepspeed_env for remote ranks), "
         "or give every NUMA domain memory (populate the memory channels, or one NUMA domain per socket in the BIOS); "
         "`numactl -H` lists the domains without memory. A restart fails the same way.", retry=False),
    # Round 122. The bootstrap of NCCL (src/bootstrap.cc socketRecv / socketSendRecv: WARN "Message truncated :
    # received %d bytes instead of %d", socketDoubleSendRecv: "received %d,%d bytes instead of %d,%d";
    # ncclInternalError, torch's `internal error`) and NVSHMEM's copy of it (modules/bootstrap/uid/bootstrap_uid.cpp
    # bootstrap_net_recv, the words DeepEP and other NVSHMEM users print): a peer's init message is larger than this
    # rank's build expects, so the ranks do not run the same stack (deepseek-ai/DeepEP#121: two nodes with different
    # NVIDIA drivers; NVIDIA/nccl#1328, the maintainer: "a version or configuration mismatch between two ranks"). The
    # data path's own truncation (net_socket.cc "message truncated : receiving %d bytes", a collective's sizes that
    # differ) and MPI's MPI_ERR_TRUNCATE ("Message truncated; %d bytes received but buffer size is %d") are not this.
    # Review 130, not these two, whose words are the same: NCCL 2.0-2.3's socket transport (transport/net_socket.cu
    # ncclSocketIrecv), which served the bootstrap and the data path alike (a collective of other sizes: the line does
    # not tell which); NCCL 2.19-2.20's P2P setup (trace through transport.cc, ncclTransportP2pSetup) taking the
    # connectInfo for the barrier that follows it under the same tag, on one stack everywhere (NVIDIA/nccl#1176,
    # "received 256 bytes instead of 4", gone with 2.18.6; NCCL 2.21.5's notes: "Fix packet reordering issue causing
    # bootstrap mismatch").
    _sig("bootstrap-message-truncated", r"^(?![^\n]*net_socket\.cu\b)[^\n]*?Message truncated : received "
         r"\d{1,12}(?:,\d{1,12})? bytes instead of \d{1,12}(?:,\d{1,12})?"
         r"(?![^\n]*(?:\n[^\n]*){0,2}\n[^\n]*NCCL INFO transport\.cc:\d)",
         "The ranks' communication library (NCCL's bootstrap, or NVSHMEM's, which DeepEP uses) received an init "
         "message of another size than it expects ('Message truncated : received N bytes instead of M'): a peer "
         "sends what another build sends, so the nodes do not run the same stack: another NVIDIA driver, NCCL or "
         "NVSHMEM release, torch (which bundles NCCL) or settings that change what the ranks exchange.",
         "Compare the nodes and make them the same: nvidia-smi's driver version, the NCCL (python -c 'import torch; "
         "print(torch.cuda.nccl.version())', pip list | grep -i nccl) and NVSHMEM/DeepEP builds, torch, and the "
         "NCCL_/NVSHMEM_ variables each rank gets (one node image, one driver everywhere); `dscluster doctor` "
         "compares the nodes' versions. A restart fails the same way.", retry=False),
    # Round 114. NCCL reading an attribute its topology needs from the machine's XML topology (src/graph/xml.h
    # xmlGetAttrStr, under xmlGetAttrInt: WARN "Attribute %s of node %s not found", ncclInternalError; topo.cc's CPU,
    # PCI, NIC and GPU nodes). Its own detection writes every attribute it later reads, so a missing one comes from a
    # topology file it merged (NCCL_TOPO_FILE, the file a network plugin points it to such as aws-ofi-nccl's instance
    # XML, a VM's /var/run/nvidia-topologyd/virtualTopology.xml), or before NCCL 2.8 from such a file's CPU whose GPUs
    # the job did not use (NVIDIA/nccl#379, fixed in 2.8). torch quotes it after "Last error:". Review 123: only the
    # topology's own node names (xml.cc/topo.cc: system, cpu, pci, pcilink, nic, net, gpu, nvlink, c2c); the same WARN
    # from another XML NCCL reads is no topology: an injected search graph (NCCL_GRAPH_FILE, search.cc's graph node),
    # an MSCCL/SCCL algorithm file (SCCL_XML_FILE: "Attribute ngpus of node algo not found", microsoft/msccl-tools#4).
    _sig("nccl-topo-file-attribute", r"(?:NCCL WARN |Last error:\s{0,4}(?:\[rank\d{1,6}\]:\s{0,2})?)Attribute \w{1,32} "
         r"of node (?:system|cpu|pci|pcilink|nic|net|gpu|nvlink|c2c) not found",
         "NCCL could not build the machine's topology: a node of the XML topology it reads lacks an attribute NCCL "
         "needs (NCCL: 'Attribute ... of node ... not found'). NCCL's own detection writes those, so the topology "
         "came from a file: NCCL_TOPO_FILE, the file a network plugin points it to (aws-ofi-nccl's per-instance "
         "XML), or a VM's /var/run/nvidia-topologyd/virtualTopology.xml, that lacks the attribute (a <cpu> without "
         "arch or vendor); NCCL before 2.8 also failed so when the file named a CPU whose GPUs the job did not use.",
         "Find the topology file NCCL loaded (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH prints "
         "'NCCL_TOPO_FILE set by environment to ...' or 'Loading topology ...') and give the node the attribute NCCL "
         "names (every <cpu> needs numaid, arch, vendor, and familyid and modelid on x86; compare with a file NCCL "
         "writes itself with NCCL_TOPO_DUMP_FILE), or unset NCCL_TOPO_FILE, or update the plugin that ships the file; "
         "with NCCL older than 2.8, upgrade NCCL. A restart fails the same way.", retry=False),
    # Round 58. NCCL's topology detection resolving a GPU's PCI device in sysfs (getPciPath: src/graph/xml.cc from
    # 2.7, include/topo.h before): realpath("/sys/class/pci_bus/<domain:bus>/../../<busid>") fails, WARN("Could not
    # find real path of %s", busPath) and ncclSystemError (torch: "unhandled system error"). The GPU is then not a
    # PCI device of this Linux's /sys: WSL2 (lspci lists nothing; NVIDIA/nccl#573), a container or VM that hides or
    # fakes /sys/class/pci_bus. A NIC's path (/sys/class/infiniband/<dev>/device, net_ib.cc) is another WARN.
    _sig("nccl-sysfs-pci-path", r"NCCL WARN Could not find real path of /sys/class/pci_bus/",
         "NCCL could not find the GPU's PCI device in /sys (/sys/class/pci_bus/...) while it detected the machine's "
         "topology, so it could not create the communicator: the GPU is not visible as a PCI device to this Linux, "
         "as under WSL2 (where lspci lists no NVIDIA device) or in a container or virtual machine that hides or "
         "replaces the host's /sys.",
         "Run the multi-GPU job where the GPUs are PCI devices of the Linux that runs NCCL (a native Linux host, or "
         "a container that sees the host's /sys: no masked or read-only replacement of /sys/class/pci_bus); check "
         "that the busId NCCL names exists under /sys/bus/pci/devices. Under WSL2 use one GPU, or the gloo backend, "
         "instead of NCCL. A restart fails the same way.", retry=False),
    # Round 64. NCCL's CUDACHECK in src/enqueue.cc (WARN "Cuda failure '%s'", later "Cuda failure %d '%s'") when the
    # kernel launch or event record of a collective fails with cudaErrorInvalidResourceHandle (400): the stream given
    # is another GPU's than the current device. NCCL 2.12 and older launch on the caller's current device (2.13's
    # ncclEnqueueCheck sets the communicator's own: cudaSetDevice(comm->cudaDev)), so a rank that never called
    # torch.cuda.set_device fails there (pytorch/pytorch#130414: torch 2.3's c10d with NCCL 2.12). Not p2p.cc's IPC.
    _sig("nccl-stream-other-device", r"enqueue\.cc:\d+ NCCL WARN Cuda failure (?:400 )?'invalid resource handle'",
         "NCCL could not launch the collective: the CUDA stream it was given belongs to another GPU than the current "
         "device of the calling thread (CUDA: invalid resource handle). NCCL 2.12 and older launch on the current "
         "device, so a rank that never selected its GPU (no torch.cuda.set_device(local_rank)) hits this.",
         "Select each rank's GPU before the process group's first collective: torch.cuda.set_device(local_rank) "
         "(or pass device_id to init_process_group); or use NCCL 2.13 or later (the one a current torch ships). A "
         "restart fails the same way.", retry=False),
    # Round 79. NCCL's bootstrap (src/bootstrap.cc, bootstrapInit: each rank connects to the root's listening socket
    # with ncclSocketConnect, then to its ring neighbour) failing in src/misc/socket.cc's connect: socketPollConnect
    # returns ncclSystemError (2) for a connect() error other than refused or timed out (no route, network unreachable;
    # 2.18 says nothing more, later versions first WARN "socketPollConnect: Connect to ... returned ..."), and
    # NCCLCHECK's INFO trace ("%s:%d -> %d") shows it through socketProgressState and ncclSocketConnect into
    # bootstrap.cc. Exactly two socket.cc frames after a line that is no return-code frame: a recv that fails deeper in
    # socket.cc (socketProgress, socketWait, ncclSocketRecv) returns ncclRemoteError (6) and is not this. Nor the
    # accept side (review 89): socketTryAccept's failed accept() (WARN "socketTryAccept: Accept failed: %s", most often
    # EMFILE, too many open files) returns ncclSystemError through socketProgressState and ncclSocketAccept's
    # NCCLCHECKGOTO into bootstrap.cc, the same three lines (NCCL 2.18-2.26): not read where that WARN stands.
    _sig("nccl-bootstrap-connect", r"\A(?![\s\S]*socketTryAccept)[\s\S]*?(?P<ev>^(?<!-> \d\n)[^\n]*NCCL INFO "
         r"(?:misc/)?socket\.cc:\d+ -> 2\n[^\n]*NCCL INFO (?:misc/)?socket\.cc:\d+ -> 2\n[^\n]*NCCL INFO "
         r"bootstrap\.cc:\d+ -> 2\b)",
         "NCCL's bootstrap, the first step of creating the communicator, could not connect: a rank's TCP connection "
         "to another rank's bootstrap socket failed (no route or network unreachable). The bootstrap uses plain "
         "sockets on the interface NCCL_SOCKET_IFNAME selects (the one NCCL names after `Bootstrap : Using` or "
         "`OOB`), whatever the data path (InfiniBand or not): that interface is not one the other nodes can reach "
         "(an IPoIB or management interface, a container's bridge), or a firewall is in between.",
         "Set NCCL_SOCKET_IFNAME to the interface every node reaches the others on (the nodes' Ethernet NIC, named "
         "the same on all of them, e.g. NCCL_SOCKET_IFNAME=eth0; in containers use the host network); check from "
         "each node that the address after `Bootstrap : Using` on rank 0's node answers, and open the ports between "
         "the nodes if it does not. A restart fails the same way.", retry=False),
    # Round 125: NCCL's argument check (src/misc/argcheck.cc: CommCheck -> PtrCheck, `WARN("%s : %s argument is NULL",
    # opname, ptrname)` with ptrname "comm") for a call given no communicator; laekov/fastmoe#149, FastMoE's expert
    # exchange built with USE_NCCL=1 in a process with no distributed group. Not PtrCheck's NULL sendbuff/recvbuff, nor
    # CommCheck's "corrupted comm object".
    _sig("nccl-null-comm", r"NCCL WARN \w+ : comm argument is NULL",
         "An NCCL call was given no communicator (NCCL's own argument check: `comm argument is NULL`): the program "
         "called NCCL before its communicator existed. Libraries that run their own NCCL calls (FastMoE's distributed "
         "experts, other MoE or custom CUDA extensions) create it from torch.distributed's process group, which was "
         "never initialized (a one-process run) or was set up after the model's first step.",
         "Start the run through a launcher and initialize the process group (torch.distributed.init_process_group, "
         "deepspeed.init_distributed) before the model's first forward; for one process, use the library without its "
         "distributed path (FastMoE built with USE_NCCL=0, or world_size 1). A restart fails the same way.",
         retry=False),
    # Round 143: Intel's oneCCL bindings for PyTorch (intel/torch-ccl) without point-to-point. src/ProcessGroupCCL.cpp
    # before "Enable GPU Point-to-Point (p2p) communication: send and recv" (#85, May 2023): `TORCH_CHECK(false,
    # "ProcessGroupCCL does not support send")`, recv and recvAnysource alike; since then the CPU stub still has none,
    # src/dispatch_stub.h's fail(): "oneccl_bindings_for_pytorch: send isn't implementd on backend [cpu]." (sic).
    # deepspeedai/DeepSpeed#5313: DeepSpeed's pipeline engine on CPU over ccl. A collective the binding lacks on a device
    # (intel/torch-ccl#33, "broadcast isn't implemented on backend [xpu]": IPEX's old XPU device) is not this.
    _sig("ccl-p2p-unsupported", r"ProcessGroupCCL does not support (?:send|recv|recvAnysource)\b|"
         r"oneccl_bindings_for_pytorch: (?:send|recv) isn't implemente?d on backend",
         "The ccl backend (Intel's oneCCL bindings for PyTorch, torch-ccl) has no point-to-point send/recv for these "
         "tensors (none at all in its releases before mid-2023, none on the CPU after), and the run needs them: "
         "DeepSpeed's pipeline parallelism sends activations between stages, as does any dist.send/recv.",
         "Use the gloo backend where send/recv is needed on CPUs (deepspeed.init_distributed(dist_backend=\"gloo\"); "
         "DeepSpeed 0.14.1 or later for gloo on its CPU accelerator), or a parallelism without point-to-point (ZeRO "
         "stage 1-2 data parallelism instead of pipeline stages). A restart fails the same way.", retry=False),
    # Round 143: oneCCL 2021.10 to 2021.11.x built for Intel GPUs (SYCL, Level Zero), src/common/global/global.cpp
    # getenv_local_coord: when the launcher's variables give no local rank and size (MPI_LOCALRANKID/MPI_LOCALNRANKS
    # under Intel MPI's hydra, CCL_LOCAL_RANK/CCL_LOCAL_SIZE with CCL_PROCESS_LAUNCHER=none) it warns "could not get
    # local_idx/count from environment variables, trying to get them from ATL", then CCL_THROW_IF_NOT(ze_ipc_exchange
    # == sockets, "to get local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE=sockets explicitly"); torch-ccl raises it
    # as "oneCCL: global.cpp:N getenv_local_coord: EXCEPTION: ...". The warning alone is no failure: other builds and
    # later releases go on from it (falling back to sockets).
    _sig("ccl-local-rank-unknown", r"to get local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE=sockets",
         "oneCCL could not learn each process's local rank and the number of processes on its node: it reads them "
         "from an MPI launcher's variables (Intel MPI's launcher sets MPI_LOCALRANKID/MPI_LOCALNRANKS), and the run was "
         "started by another launcher (accelerate launch, torchrun, a scheduler) that sets none of them; its "
         "Intel-GPU build then refuses to go on unless its IPC handle exchange uses sockets.",
         "Give oneCCL the local coordinates: CCL_PROCESS_LAUNCHER=none with CCL_LOCAL_RANK=$LOCAL_RANK and "
         "CCL_LOCAL_SIZE=$LOCAL_WORLD_SIZE in every rank's environment (accelerate 0.27 and later sets them for "
         "accelerate launch, huggingface/accelerate#2339), or set CCL_ZE_IPC_EXCHANGE=sockets, or launch with Intel "
         "MPI's own launcher. A restart fails the same way.", retry=False),
    # Round 149: a rank's crash whose backtrace names a function of NCCL's RAS subsystem (reliability, availability,
    # serviceability: the thread NCCL 2.24 and later start in every process, src/ras/ras.cc, peers.cc, rasnet.cc,
    # collectives.cc, client_support.cc). Its function names in those files (rasMsgHandlePeersUpdate, rasClientRunComms,
    # rasCollCommsInit, rasConnSendPeersUpdate, rasLinkReinitConns, rasNetAcceptNewSocket, rasPeersUpdate,
    # ncclRasCommInit ...), case-sensitive, as a frame (after an address, `in `, `(` or a mangled name's `_ZL23`,
    # before its parenthesis or `+offset`), set aside where no crash handler's words (_CRASH) stand before it: UCX's
    # `Caught signal 11 (Segmentation fault` and `==== backtrace (tid: N) ====` (ucs_handle_error), glibc's
    # `Segmentation fault`, Open MPI's `*** Process received signal ***`. NVIDIA/nccl#1996 (2.27.7, use-after-free in
    # rasMsgHandlePeersUpdate, fixed by PR 2406), #1762 (2.27.3, rasClientRunComms, fixed in 2.29.2), #1669/#1718 (2.26,
    # a RAS report during init, fixed in 2.27.3). Not the RAS thread's idle loop in a hang's dump of every thread
    # (rasThreadMain, rasSockEventLoop: not in the list), nor its INFO line `RAS client listening socket at ::1<28028>`.
    _sig("nccl-ras-crash", r"(?:0x[0-9a-fA-F]{1,16} ?|\bin |[\s(](?:_ZL?\d{1,3})?)(?-i:ncclRas[A-Z]\w{0,60}|"
         r"ras(?:MsgHandle|Client|Coll|Conn|Link|Net|Peers?|DeadPeers|Local)[A-Z]?\w{0,60})[ \t]*[(（+]",
         "A rank crashed inside NCCL's RAS subsystem (its reliability/availability/serviceability thread, on by "
         "default since NCCL 2.24): NCCL 2.26-2.29 releases have memory-safety bugs there (a use-after-free when peers "
         "are updated in 2.27.7, memory corruption when its status is queried in 2.27.3, a crash when a report is "
         "asked for during init in 2.26), which crash training processes that do nothing wrong.",
         "Set NCCL_RAS_ENABLE=0 in every rank's environment (RAS only serves status queries on port 28028; training "
         "does not need it), and stop tools polling that port; or move to an NCCL release with the fix (2.27.3 for "
         "the init race, 2.29.2 for the status query, a release after PR 2406 for the peers update). A restart can "
         "crash the same way.", retry=False, aside_if=_no_crash_before),
)
