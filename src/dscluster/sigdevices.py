"""Failure signatures of the GPU node itself, read from the words of the NVIDIA driver, CUDA, the container engine and
PyTorch's build: a process that cannot reach or initialise the GPUs for a reason of the node, not of the script.
sigmessages.py places them before the dynamic loader's signatures (a container without the driver's libcuda.so.1 is a
container without GPUs, not a library missing from a path) and everything that only says something failed.

Each pattern is the wording of the component that prints it (NVML, the CUDA runtime's error names and texts, Docker's
daemon, torch.distributed), never one log's; `retry=False` throughout: until the node is fixed the same command meets
the same refusal. The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py).
"""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# Round 165: torch.cuda's functions in a torch built without CUDA (the CPU wheel, Apple's, an XPU or NPU build):
# torch/cuda/__init__.py calls torch._C._cuda_setDevice (set_device; init_device_mesh("cuda") on a CPU build),
# _cuda_getDevice, _cuda_getDeviceCount..., which that build's torch._C lacks, so Python says "module 'torch._C' has no
# attribute '_cuda_setDevice'" rather than "Torch not compiled with CUDA enabled". Read by sigmessages.py's no-gpu.
# Round 190: a CUDA torch.Generator (torch.Generator(device="cuda:N")) on such a build: ATen's detail/CUDAHooks
# "Cannot get CUDA generator without ATen_cuda library." (torch 1.x and 2.x).
CUDA_NOT_BUILT = (r"module 'torch\._C' has no attribute '_cuda_(?:setDevice|getDevice|getDeviceCount|init|exchangeDevice|"
                  r"maybeExchangeDevice|emptyCache|synchronize|getCurrentStream|setStream)'|"
                  r"Cannot get CUDA generator without ATen_cuda library")

DEVICE_SIGNATURES: tuple[Signature, ...] = (
    # NVML (nvidia-smi, the container toolkit's nvidia-container-cli) and the kernel's own line for the same state.
    _sig("driver-library-mismatch", r"driver/library version mismatch|NVRM: API mismatch",
         "The NVIDIA kernel module loaded on that node is another version than the driver's user-space libraries "
         "(nvidia-smi, NVML, libcuda): the driver was upgraded, often by unattended upgrades, without the module "
         "being reloaded.",
         "Reboot the node (or unload and reload the nvidia kernel modules) so that module and libraries match, check "
         "that nvidia-smi works, and hold the driver packages (apt-mark hold) so they do not change under running "
         "jobs; restarting the run alone meets the same mismatch.", retry=False),
    # CUDA's cudaErrorSystemNotReady (802): NVSwitch systems without a running Fabric Manager.
    # nccl-tests' CUDACHECK (src/common.h) and NCCL's own print CUDA's string quoted: "Test CUDA failure common.cu:N
    # 'system not yet initialized'", "NCCL WARN Cuda failure 'system not yet initialized'".
    _sig("fabric-manager", r"(?:\b802\b\)?|CUDA error|->)\s?:?\s?system not yet initiali[sz]ed|cudaErrorSystemNotReady|"
         r"CUDA_ERROR_SYSTEM_NOT_READY|CUDA failure [^'\n]{0,80}'system not yet initiali[sz]ed'|"
         # the CUDA samples (vectorAdd, the GPU operator's validator): "Failed to ... (error code %s)!"
         r"\(error code system not yet initiali[sz]ed\)",
         "CUDA could not initialise the GPUs (error 802, system not yet initialized): on NVSwitch systems (HGX/DGX "
         "A100, H100, H200) the NVIDIA Fabric Manager service must be running, at the driver's exact version, "
         "before CUDA can use them.",
         "Install nvidia-fabricmanager of the same version as the driver on that node and start it (systemctl "
         "enable --now nvidia-fabricmanager); check it with systemctl status nvidia-fabricmanager and "
         "nvidia-smi -q | grep -i -A2 fabric.", retry=False),
    # cudaErrorDevicesUnavailable (46): the device refused a new context.
    _sig("gpu-exclusive", r"all CUDA-capable devices are busy or unavailable|CUDA-capable device\(s\) is/are busy or "
         r"unavailable|cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE",
         "A GPU refused the process: it is in an exclusive compute mode (Exclusive_Process, common on shared "
         "clusters) and another process already holds it: two ranks on one GPU, a parent process that used the GPU "
         "before starting the ranks, or another job.",
         "Give each rank its own GPU by LOCAL_RANK (torch.cuda.set_device(local_rank) before any CUDA call), create "
         "no CUDA tensor in the parent before the ranks start, and look at nvidia-smi for the compute mode and the "
         "processes holding the GPU (an administrator can set nvidia-smi -c DEFAULT).", retry=False),
    # NVML's words inside a container whose device nodes were taken away while it ran (systemd re-applying the
    # container's cgroup on `systemctl daemon-reload`): the host still sees the GPUs.
    _sig("container-gpu-lost", r"Failed to initiali[sz]e NVML: Unknown Error",
         "The container lost access to its GPUs while it ran: where systemd manages the container's cgroups, a "
         "`systemctl daemon-reload` (often by a package upgrade) takes the GPU devices away from running containers; "
         "the host itself still sees them.",
         "Recreate the container (restarting the run inside it meets the same error); to keep it from happening, "
         "follow NVIDIA's notice for the container toolkit: create the /dev/char links (nvidia-ctk system "
         "create-dev-char-symlinks --create-all), or use cgroupfs as the engine's cgroup driver.", retry=False),
    # Docker's daemon when --gpus finds no GPU driver plugin; the loader's or dlopen's words for the driver's library.
    # enroot's NVIDIA hook (hooks.d/98-nvidia.sh): `Command not found: nvidia-container-cli, see .../libnvidia-container`.
    _sig("container-gpu", r"could not select device driver \"[^\"\n]{0,40}\" with capabilities: \[\[gpu\]\]|"
         r"unknown or invalid runtime name: nvidia|libcuda\.so(?:\.1)?: cannot open shared object file|"
         r"Command not found: nvidia-container-cli",
         "The process cannot reach the NVIDIA driver: the container engine did not give the container the GPUs "
         "(started without --gpus all, or the NVIDIA Container Toolkit is not installed or not configured for this "
         "engine), so the driver's libcuda.so.1 is not there; outside containers, the node has no NVIDIA driver.",
         "Install the NVIDIA Container Toolkit on the host and configure the engine (nvidia-ctk runtime configure "
         "--runtime=docker, then restart docker), start the container with --gpus all (podman: --device "
         "nvidia.com/gpu=all), and check that nvidia-smi works inside it; for enroot (pyxis) install "
         "libnvidia-container-tools (nvidia-container-cli) on every GPU node.", retry=False),
    # The CUDA runtime's error 35 (cudaErrorInsufficientDriver), in its own text: the runtime says it both when the
    # driver is older than the runtime and when it finds no driver at all (no NVIDIA GPU, a container without the
    # driver's libcuda). Its words cannot tell the two apart, so the answer names both; torch's own checks, which can
    # ("The NVIDIA driver on your system is too old", "Found no NVIDIA driver"), are driver-too-old and no-gpu.
    _sig("driver-insufficient", r"CUDA driver version is insufficient for CUDA runtime|cudaErrorInsufficientDriver",
         "CUDA found no NVIDIA driver that can run its runtime (CUDA error 35): CUDA says this both when the node's "
         "driver is older than the CUDA version the program (torch, bitsandbytes, the container's CUDA) was built "
         "with, and when the process has no NVIDIA driver at all (no NVIDIA GPU in the machine, a container started "
         "without GPU access); the message alone does not tell which.",
         "Run nvidia-smi on that node (inside the container too). If it fails, there is no usable NVIDIA GPU there: "
         "run on a machine with an NVIDIA GPU and its driver, start containers with --gpus all. If it works, compare "
         "its \"CUDA Version\" with the program's (torch.version.cuda) and update the driver, or install a build for "
         "the older CUDA; the same image on every node.", retry=False),
    # CUDA's cudaErrorUnknown at initialisation: 999 (30 before CUDA 10.1, THC's "cuda runtime error (30)"), in torch's
    # warning (c10/cuda/CUDAFunctions.cpp), THC's check at _cuda_init, the driver API's cuInit and
    # cudaGetDeviceCount. Not CUDA's "unknown error" later in a run: that may be a kernel's fault. nccl-tests' CUDACHECK
    # (src/common.h: "%s: Test CUDA failure %s:%d '%s'") only where it stops the device listing that run() in
    # src/common.cu opens with "# Using devices" (no rank's device shown yet, or only the "#  Rank" lines).
    _sig("cuda-init-unknown", r"CUDA initialization: CUDA unknown error|cuda runtime error \((?:30|999)\) : unknown error|"
         r"cuInit: CUDA_ERROR_UNKNOWN|cudaGetDeviceCount\(\)[^\n]{0,200}?Error 999: unknown error|"
         r"^[ \t]*# Using devices[ \t]*\n(?:[ \t]*#[ \t]+Rank\b[^\n]*\n)*"
         r"(?P<ev>[^\n]*Test CUDA failure [^\n]*'unknown error')",
         "CUDA could not initialise on that node (CUDA's \"unknown error\"): the NVIDIA driver's state is broken, not "
         "the program: after a suspend and resume, the nvidia_uvm module unloaded or its device nodes (/dev/nvidia-uvm) "
         "missing (in a container too), a driver updated without a reboot; CUDA_VISIBLE_DEVICES, which the message "
         "names, is seldom the cause.",
         "On that node: check nvidia-smi and ls /dev/nvidia-uvm*; reload the UVM module (sudo rmmod nvidia_uvm && sudo "
         "modprobe nvidia_uvm, or sudo nvidia-modprobe -u -c=0), or reboot the node; then start the run again.",
         retry=False),
    # torch's TORCH_INTERNAL_ASSERT(device >= 0 && device < num_gpus) (aten/src/ATen/cuda/CUDAContext.cpp): torch
    # counted more GPUs (NVML) than CUDA lets the process use, most often on MIG (pytorch/pytorch#131667).
    _sig("cuda-device-count-mismatch", r"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
         "torch counted more GPUs than CUDA lets this process use: most often the GPUs are split into MIG instances "
         "(a CUDA process sees one MIG instance only), or CUDA_VISIBLE_DEVICES was changed after torch started or "
         "names devices that are not there.",
         "On MIG, give each process one MIG instance before it starts: CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L) "
         "and device 0 in the program; one process cannot use several MIG instances, and distributed training "
         "across them is not supported, so disable MIG (nvidia-smi -mig 0) for multi-GPU training. Set "
         "CUDA_VISIBLE_DEVICES in the launching shell, never inside the script.", retry=False),
    # CUDA's cudaErrorTooManyPeers (711) / CUDA_ERROR_TOO_MANY_PEERS: a GPU maps at most 8 peers.
    _sig("p2p-too-many-peers", r"peer mapping resources exhausted|CUDA_ERROR_TOO_MANY_PEERS|cudaErrorTooManyPeers",
         "A GPU ran out of peer mappings (at most 8 per GPU): one process enabled peer access to more than 8 GPUs "
         "(nodes with 10 or 16 GPUs), or another program on the node (an X server) already holds peer mappings on "
         "those GPUs.",
         "Run one process per GPU (torchrun) instead of one process driving every GPU, or limit peer access: "
         "NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL, CUDA_VISIBLE_DEVICES to at most 8 GPUs per process; stop the X "
         "server (display manager) on compute nodes.", retry=False),
    # torch.distributed's words when the build has no NCCL (PyTorch for Windows and macOS, CPU-only builds); the
    # traceback's source line keeps the literal split in two ("... NCCL " "built in").
    _sig("nccl-unavailable", r"Distributed package doesn't have NCCL[\"'\s]{0,5}built in|NCCL support is not compiled",
         "This torch build has no NCCL (PyTorch for Windows or macOS, or a CPU-only build), and the run asked for the "
         "nccl backend.",
         "Run on Linux with a CUDA build of torch (on Windows: WSL2), or use the gloo backend: "
         "init_process_group(\"gloo\"), the Trainer's --ddp_backend gloo, Lightning's "
         "DDPStrategy(process_group_backend=\"gloo\").", retry=False),
    # Round 143: distributed_c10d.py when the build has no MPI: "Distributed package doesn't have MPI built in.", in
    # later releases followed by "MPI is only included if you build PyTorch from source on a host that has MPI
    # installed." (pytorch/pytorch#36781). PyTorch's pip and conda packages are built without it (open-ce/open-ce#376
    # for Open-CE's); "doesn't have NCCL built in" is nccl-unavailable's, above.
    _sig("mpi-backend-not-built", r"Distributed package doesn't have MPI[\"'\s]{0,5}built in",
         "This torch build has no MPI backend (PyTorch's pip and conda packages are built without it; only a build "
         "from source on a host with MPI installed has it), and the run asked for backend=\"mpi\".",
         "Use the gloo backend (on Intel CPUs also ccl, with Intel's oneCCL bindings) and keep the MPI launcher to "
         "start the ranks only (RANK and WORLD_SIZE from OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE or PMI_RANK/PMI_SIZE), or build "
         "PyTorch from source on a host with MPI installed. A restart fails the same way.", retry=False),
)
