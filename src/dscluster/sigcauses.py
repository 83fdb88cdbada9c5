"""The causes and fixes of the signatures whose real logs show several causes (review 81, issue 45).

Each text names the causes the corpus's threads established (tests/data/failures, the cases the signature answers,
tune and held out) most frequent first, each with its fix: a reader acts on the first that fits, and the answer stays
true for every case. A signature whose text named one cause where the threads showed several was the commonest
misleading answer of rounds 1-80 (benchmarks/RESULTS.md). The tables (signatures.py, sigmessages.py, sigcheckpoint.py)
keep the patterns, their order and retry flags; their zh-TW texts are in locale/zh_TW/failures.json."""

from __future__ import annotations

# address-in-use: another job or an earlier run's leftover holding the port: 14 (accelerate-74, cdial-gpt-103,
# diffusers-9856, enroot-243, lsgm-2, megatron-lm-343, mmaction-94, modelscope-196, opennmt-1298, sfd-34, torchdr-249,
# torchtune-392, vlmr1-289, xlm-53); the job's own launcher started more than once on a node: 2 (deepspeed-3916,
# gpt-neox-849: misleading before, every rank started the store); no __main__ guard, spawned processes launching
# again: 1 (gitcode-lightning-fabric-spawn-port, misleading before).
ADDRESS_IN_USE = (
    "The rendezvous port (--master_port) on the first node was already taken. Most often another job on that machine "
    "uses the same port (torchrun's default 29500), or a leftover process of an earlier run still holds it. Else the "
    "job took it twice itself: its launcher was started more than once on a node (by a scheduler's step or an MPI "
    "launcher once per task, or DeepSpeed's runner ignoring --launcher on one node), so every copy or rank starts the "
    "store; or the script starts the launch at module level, without an `if __name__ == '__main__':` guard, and the "
    "processes spawned from it (DataLoader workers, mp.spawn) run it again; or the script gives every process rank 0 "
    "by hand (init_process_group(rank=0, world_size=N), RANK=0 set in it), so each one starts the store.",
    "dscluster picks a fresh port per attempt; for another job, give each job its own --master_port, and find what "
    "holds the port on the first node (`ss -ltnp`) to stop a leftover. If the holder is the job itself: start one "
    "launcher per node (one task per node in the scheduler's step; DeepSpeed's --force_multi with an MPI or scheduler "
    "launcher on one node), put the script's launch under `if __name__ == '__main__':`, and pass no rank or "
    "world_size to init_process_group (it reads the launcher's RANK and WORLD_SIZE).",
)

# master-unreachable: the general entry (a name that does not resolve has sigtorch.py's own): MASTER_ADDR wrong for
# the other nodes: 4 (accelerate-2468 the runner's first interface, ai-on-eks-241 an unresolvable pod name, hpc-docs-2
# an admin network, pytorch-67581 a name not in /etc/hosts); no store there yet, rank 0 elsewhere or late: 2
# (aws-hpc-tutorials-448 the head node, pytorch-105782 nodes installing at different speeds, misleading before); not
# said: 2 (pytorch-107021, pytorch-79388). Firewalls: firewall-blocked reads their own words.
MASTER_UNREACHABLE = (
    "Ranks could not reach rank 0's rendezvous store at MASTER_ADDR:MASTER_PORT. Most often MASTER_ADDR is wrong for "
    "the other nodes: a host name they cannot resolve, or an address on a network they have no route to (an admin "
    "interface, the first interface DeepSpeed's runner picks without --master_addr). Or no store was listening there "
    "yet: rank 0 runs on another host than MASTER_ADDR, or started after this node's timeout (a node still installing "
    "or preparing). Or a firewall drops the port.",
    "Use the first hostfile host's training-network IP as --master_addr, one every node reaches; make sure rank 0 "
    "runs on that host and every node starts within the rendezvous timeout (prepare environments before the launch); "
    "open the master port between the nodes (`dscluster doctor` tests it).",
)

# no-gpu: sigmessages.py's entry: no usable GPU on the machine or in the container: 5 (af-sfmlearner-39,
# deepspeedexamples-516 a Mac, dockwater-10 driver not loaded, detectron2-3105 a container, round 109's enroot-205 an
# enroot/pyxis container of a plain image: enroot's 98-nvidia.sh hook mounts the driver only when
# NVIDIA_VISIBLE_DEVICES is set, the enroot maintainer's answer); the process not given the GPUs: 3 (model-angelo-60 a
# Slurm job without GPUs, tslib-10 CUDA_VISIBLE_DEVICES, determined-4297 LD_LIBRARY_PATH not passed, misleading
# before); torch without CUDA: 2 (detectron2-460, stcn-14).
NO_GPU = (
    "The process sees no usable NVIDIA GPU. Most often the machine has none it can use: no NVIDIA GPU at all (a Mac, "
    "a CPU machine), its driver not loaded, or a container started without GPU access. Or the process was not given "
    "the GPUs: a batch job that asked for none, CUDA_VISIBLE_DEVICES naming GPUs that are not there, or a launcher "
    "that did not pass the CUDA environment (LD_LIBRARY_PATH) on to the ranks. Or torch is a CPU-only build.",
    "Check nvidia-smi on that node and inside the container (start containers with --gpus all, NVIDIA container "
    "toolkit; under enroot/pyxis set NVIDIA_VISIBLE_DEVICES=all, which NVIDIA's CUDA images set and a plain image "
    "does not); ask the scheduler for GPUs (--gres=gpu:N or --gpus) and check CUDA_VISIBLE_DEVICES and LD_LIBRARY_PATH "
    "as the rank sees them (printed by the script, not the login shell); install a CUDA build of torch. Where the "
    "run is meant for CPUs, turn off what asks for a GPU: fp16/bf16 (TrainingArguments' bf16=True or fp16=True, "
    "the ds_config's fp16/bf16 enabled, accelerate's --mixed_precision) and set use_cpu=True.",
)

# device-mismatch: one process holding a model split over GPUs: 3 (glm4-295, ms-swift-1547, transformers-29620:
# device_map); the launch giving a rank another GPU: 1 (itwinai-208, one python per GPU under srun, misleading
# before); the script's own tensors: the old text's only cause, none in the corpus, kept last; a trainer's second model
# (review 157: LlamaFactory-9560, DPO's reference model FSDP left on the CPU, the text named no such cause before).
DEVICE_MISMATCH = (
    "One operation got tensors on different devices (a GPU and the CPU, or two GPUs). Most often one process holds a "
    "model split over several GPUs (device_map=\"auto\", or one process started with several GPUs visible) and the "
    "model's code or the training step combines tensors across them. Or the launch gave a rank another GPU than its "
    "tensors are on (one python per GPU started by a scheduler or an MPI launcher, with no launcher setting "
    "LOCAL_RANK). Or the script left the model or an input on another device, or a trainer left a second model "
    "there (a frozen reference model FSDP did not wrap, on the CPU).",
    "For data-parallel training start one process per GPU (torchrun, deepspeed, accelerate launch) and load the whole "
    "model on that process's GPU (a device_map that puts all of it on local_rank, not \"auto\"); under a scheduler "
    "start one launcher per node (one task per node running torchrun) rather than one python per GPU; move the model "
    "and every input to the rank's device (engine.device, or torch.cuda.set_device(local_rank) before creating "
    "tensors). A restart fails the same way.",
)

# invalid-device-ordinal: signatures.py's entry: more ranks than (visible) GPUs: 11 (chatglm3-898, hrnet-171,
# llama2-accessory-71, modded-nanogpt-61, nccl-tests-54, pick-pytorch-14, stanford-alpaca-67, taiyi-diffusion-xl-3,
# taiyi-diffusion-xl-6 x2, torchtitan-423); each process seeing one GPU while set_device(local_rank): 2 (mace-435
# Slurm --gpus-per-task, mlperf-training-442 MIG); a fixed index: 1 (uninformed-students-3).
INVALID_DEVICE_ORDINAL = (
    "A rank asked for a GPU its process does not see. Most often more ranks were started on that node than it has "
    "GPUs, or than CUDA_VISIBLE_DEVICES shows (torchrun's --nproc_per_node, accelerate's num_processes, the "
    "hostfile's slots=N above the GPU count). Or each process sees only its own GPU (a scheduler's --gpus-per-task, a "
    "MIG instance) while the script calls set_device(local_rank). Or the script names a fixed GPU index (cuda:1) the "
    "machine does not have.",
    "Start no more ranks on a node than it has GPUs (nvidia-smi -L): slots=N in the hostfile, or torchrun's "
    "--nproc_per_node (accelerate's num_processes), set to the node's GPU count, with CUDA_VISIBLE_DEVICES showing "
    "that many; where each process sees one GPU, use its device 0 (or let every task see the node's GPUs); use GPU "
    "indexes the machine has.",
)

# version-mismatch: the CUDA toolkit building an extension other than torch's: 7 (autoalign-25, deepspeed-1077,
# deepspeed-2902, embodiedocc2-6, mgm-91, researchprogress-11, responsible-editing-4); an op built against another
# torch: 1 (ds-windows-4); nodes on different versions, the old text's first cause: 0 here (different NCCL releases
# have mixedversions.py's own text, nccl-1267).
VERSION_MISMATCH = (
    "Parts of the stack were built for different versions. Most often the CUDA toolkit that builds an extension (nvcc "
    "on the PATH, CUDA_HOME) is another version than the one torch was built with, so DeepSpeed's op builder or "
    "torch's cpp_extension refuses to compile. Or an op or extension was built against another torch than the one "
    "installed now. Or the nodes run different torch / DeepSpeed / CUDA versions.",
    "Install the CUDA toolkit of torch's CUDA version (python -c 'import torch; print(torch.version.cuda)') and point "
    "CUDA_HOME and PATH at it, or install a torch built for the toolkit you have; rebuild ops after changing torch "
    "(remove ~/.cache/torch_extensions); use the same node image everywhere (`dscluster doctor` compares versions "
    "across nodes).",
)

# cuda-oom: the training state not fitting the GPU at that batch / sequence length: 14 of 14 (alma-66, deepspeed-3208,
# deepspeed-3224, deepspeed-3869, dllm-9, dolly-170, dsexamples-279, fastchat-1781, gpt4llm-16, lit-llama-397, lte-3,
# step-video-t2v-8, vary-18, video-llava-66); GPU 0 filled by the other ranks' contexts or torch.load: 2 earlier
# misleading answers (returnn-1469, transformer-lm-21), now read by sigmemory.py's narrower rules where the message
# shows it, kept here for the logs that do not. Review 145: the text names the save (the FSDP clone warning has its
# own rule, sigfsdp.py; a bare traceback in state_dict does not tell a gather on the GPU from bitsandbytes 0.38's
# 8-bit state_dict, bitsandbytes#324, huggingface/peft#335), the Trainer's evaluation has its own (sigmemory.py).
CUDA_OOM = (
    "A GPU ran out of memory. Most often the model's training state (weights, gradients, optimizer states, "
    "activations) does not fit that GPU at this batch size and sequence length. If one GPU (GPU 0) fills while the "
    "others have room, other ranks put their CUDA context or tensors on it (no torch.cuda.set_device(local_rank) "
    "before CUDA work, a checkpoint loaded without map_location). If the traceback ends in a save (state_dict, "
    "save_model, a ZeRO-3 or FSDP gather of the full weights), training fit and the save's gather of whole "
    "weights on the GPU did not; under bitsandbytes 0.38's 8-bit layers, state_dict itself ran out.",
    "Lower train_micro_batch_size_per_gpu (raise gradient_accumulation_steps to keep the global batch), use a higher "
    "ZeRO stage or offload, enable activation checkpointing, or cap the sequence length; if GPU 0 alone fills, call "
    "torch.cuda.set_device(local_rank) before any CUDA work and load checkpoints with map_location=\"cpu\". At a "
    "save, gather onto the CPU (FSDP's FullStateDictConfig(offload_to_cpu=True, rank0_only=True); DeepSpeed's "
    "stage3_gather_16bit_weights_on_model_save false, then zero_to_fp32.py on the checkpoint) or use another "
    "bitsandbytes release; a smaller batch does not help there.",
)

# killed: host RAM: 6 of 6 (amvur-2, anomalygpt-43, dolly-166, ffdl-127 a pod limit, llamafactory-4629 ZeRO-3 offload,
# self-rag-83); an operator's or a scheduler's kill: none in the corpus, kept second.
KILLED = (
    "A rank was killed (SIGKILL). Most often the node ran out of host RAM and the kernel's OOM killer (or a "
    "container's or job's memory limit) ended it: every rank loading the whole checkpoint into RAM, ZeRO's CPU "
    "offload, DataLoader workers, or memory that grows every epoch. Otherwise an operator or a scheduler killed it.",
    "Check host memory on the node (`dmesg | grep -i oom`, free -g while it runs); give the job more RAM or use less: "
    "load the model with low_cpu_mem_usage or once per node, less CPU offload, fewer DataLoader workers. A restart is "
    "tried once: an operator's or a scheduler's kill does not come back, the same kill again without progress stops "
    "the run.",
)

# duplicate-gpu: the script choosing the device: 8 (deimv2-155, dfine-289, fairchem-597 x2, gitcode-torchtitan a
# device mesh, horovod-3929, mambair-39, pytorch-47885); more ranks than GPUs: 2 (nccl-1241, viewdiff-24); another
# process of the group on a trainer's GPU: 2 (trl-3158 vLLM server, rllm-10 colocated workers).
DUPLICATE_GPU = (
    "Two ranks of one NCCL communicator are on the same GPU of a node. Most often the script picks the device itself "
    "(a fixed cuda:0 or set_device(0), the same CUDA_VISIBLE_DEVICES for every rank, a device mesh of its own) "
    "instead of by LOCAL_RANK. Or more ranks were started on the node than it has GPUs. Or a process that joins the "
    "trainer's group runs on a GPU the trainer uses (an inference server the trainer syncs weights with, such as "
    "TRL's vLLM server, or workers placed together on one GPU).",
    "Give every process of the group its own GPU: select it from the launcher's LOCAL_RANK "
    "(torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))) instead of a fixed device; start no more ranks on a "
    "host than it has GPUs (slots=N equal to its GPU count, --nproc_per_node); start a server that joins the group on "
    "GPUs the trainer does not use (its own CUDA_VISIBLE_DEVICES, and the trainer's launcher told to leave them out), "
    "one worker of a group per GPU.",
)

# ds-config-invalid: signatures.py's entry: settings that cannot go together: 3 (lmflow-693, transformers-11044
# offload with the client's optimizer, deepspeed-281 untested optimizer); keys this version does not take: 3
# (openrlhf-63 ZeRO++ keys, deepspeed-2890 a training config to init_inference, h2o-llmstudio-945 a key transformers
# wrote for another DeepSpeed, misleading: labelled version-mismatch); a path not found: 1 (qwen-1171); given twice: 1
# (megatron-ds-386).
DS_CONFIG_INVALID = (
    "DeepSpeed rejected its config. Most often settings that cannot go together: ZeRO offload without a DeepSpeed "
    "optimizer (the script's or the Trainer's own), an untested optimizer with ZeRO, ZeRO-2/3 with pipeline "
    "parallelism, fp16 with bf16. Or keys or types this DeepSpeed version does not take: keys of a newer DeepSpeed "
    "(ZeRO++), a config another library wrote for another DeepSpeed version, a training config given to "
    "init_inference. Or a file it cannot find (a path relative to another directory), or a config given twice (in the "
    "arguments and to initialize()).",
    "Fix what the message names in ds_config.json (or the argument that passes it): DeepSpeed's own optimizer section "
    "for offload (or zero_allow_untested_optimizer), one precision; for a key this version does not take, install the "
    "DeepSpeed (and transformers) the config was written for, or drop the key; an existing path, the config passed "
    "once. Launch again.",
)

# nccl-no-interface: a variable naming an interface the node lacks: 3 (nccl-1837, open-r1-mm-7, horovod-1341
# HOROVOD_GLOO_IFACE); a value in a form its reader does not take: 2 (aws-do-eks-51 NCCL's exclusion list for gloo,
# marin-6940 the = prefix); no interface with an address left: 2 (marin-7018 an exclusion list from another cluster,
# nccl-210).
NCCL_NO_INTERFACE = (
    "NCCL/gloo found no usable network interface. Most often NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME (Horovod's "
    "HOROVOD_GLOO_IFACE) names one that this node does not have (eth0 where it is ens5). Or the value is in a form "
    "its reader does not take: gloo takes one interface name, not NCCL's ^exclusion list, and an older NCCL does not "
    "know the = exact-match prefix. Or no interface with an IP address is left (an exclusion list copied from another "
    "cluster).",
    "Set NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME (Horovod: HOROVOD_GLOO_IFACE) to the training network's interface as "
    "it is named on every node (ip -br addr), or a prefix every node matches (e.g. eth, ens); give gloo one plain "
    "name; check which interface carries the node's IP before excluding any.",
)

# ssh-unreachable: signatures.py's entry (ssh's exit 255 has sigtraining.py's own): a name that does not resolve: 3
# (cpm2-42, volcano-2745, volcano-2952); sshd on another port or not running: 3 (horovod-504, mxnet-8808,
# deepspeedexamples-894); a node down: none, kept last.
SSH_UNREACHABLE = (
    "A node could not be reached over SSH. Most often its name (in the hostfile, or a pod's host name) does not "
    "resolve where the launcher runs. Or its sshd listens on another port than the launcher uses, or is not running "
    "(a container or a single machine without sshd). Or the node is down.",
    "Put names that resolve on the launching node (getent hosts NAME), or IPs, in the hostfile; use the port sshd "
    "listens on (--ssh_port; Open MPI: plm_rsh_args \"-p N\") or start its sshd (`dscluster node start`); check the "
    "node with `dscluster doctor`. Restarting does not bring a node back.",
)

# ckpt-not-shared: node-local checkpoint storage: 3 (deepspeed-2319, gpt-neox-750, ms-swift-2644); files absent from
# the checkpoint itself: 1 (deepspeed-1322, misleading before, now ckpt-model-states-missing with its frame; the
# assert quoted alone stays here).
CKPT_NOT_SHARED = (
    "Files of the checkpoint DeepSpeed loads are missing where this process looks. Most often the checkpoint "
    "directory is not the same on every node: each node wrote, or sees, only its own part (a node-local path, not "
    "shared storage), so on resume a node misses files another node has. Else the checkpoint does not hold them (an "
    "incomplete save or copy, another directory or tag than the one saved).",
    "Save checkpoints on storage mounted at the same path on every node (the cluster's shared directory, --save-dir), "
    "or copy every node's files into the same directory on every node before resuming; check that the directory and "
    "the tag loaded (the one the `latest` file names) hold the files the message lists.",
)

# exit-abort: std::terminate with no exception in flight ("terminate called without an active exception"), a C++ thread
# object destroyed while its thread still ran. As a rank's last words it is PyTorch's process-group threads outliving
# the script: it returned without destroy_process_group() and the interpreter's shutdown raced them. Reproduced on
# torch 2.13 (CPU, gloo, 2 ranks, 20 all_reduces): 4 of 5 runs aborted at exit without destroy_process_group(), 0 of 6
# with it (DeepSpeed ZeRO-2 scripts abort so now and then even with it: CI, rank 0 after its last line). The training had ended, so a restart would only run the script again: no restart (the supervisor used to
# restart a finished script). A survivor's abort after its peer died is not this: explain.AT_EXIT and the supervisor's
# verdict (a lost node, a stall, another rank's kill) set it aside.
EXIT_ABORT = (
    "A rank aborted as it exited, with no exception (std::terminate: \"terminate called without an active "
    "exception\"): a C++ thread was still running when the process ended. Most often this is PyTorch's process-group "
    "threads (gloo's or NCCL's) outliving the script: it returned without destroy_process_group() (or DeepSpeed's "
    "ZeRO still held a finished collective's tensors, which destroy_process_group() does not release), and Python's "
    "shutdown raced a thread still releasing them. The training itself had ended; a restart would "
    "run the script again. Where the lines before show the run had not finished (the abort during setup or between "
    "steps), a native library gave up on an error it did not print and left its thread running (Caffe2's Detectron "
    "asked for more GPUs in NUM_GPUS than the machine has): that setting is the cause, and a restart fails the same "
    "way.",
    "End the script with torch.distributed.destroy_process_group() on every rank (after a last "
    "torch.distributed.barrier()). If it still happens (DeepSpeed holding its groups), flush stdout and stderr after "
    "that barrier and leave with os._exit(0) (a rank an MPI launcher started calls mpi4py's MPI.Finalize() before it: "
    "the MPI launcher calls an exit without it abnormal). Check that the outputs (final checkpoint, saved model) are complete. If "
    "the run had not finished, check the settings of the step it died in against the machine (the number of GPUs asked "
    "for against those present).",
)

# ds-comm-not-initialized's texts (sigmessages.py, and sigdssource.DS_COMM_UNSET's).
DS_COMM_NOT_INITIALIZED = (
    "DeepSpeed's communication functions were called before its backend was set up: the script initialised "
    "torch.distributed itself (or nothing) and never called deepspeed.init_distributed(), or used deepspeed.comm "
    "before deepspeed.initialize().",
    "Call deepspeed.init_distributed() (it initialises torch.distributed too) before any deepspeed.comm call, or "
    "let deepspeed.initialize() run first.",
)
