"""Round 33's rules (issue 45), from what the GPU node, its driver and the container runtime do to a GPU job: enroot's
own words behind pyxis (sigcontainers.py: an image without the shell it runs, its directories not writable, its NVIDIA
hook without nvidia-container-cli), the NVIDIA container runtime's requirement check, and CUDA's and torch's words at
initialisation (sigdevices.py: CUDA's unknown error, torch's device count above CUDA's on MIG, a GPU out of peer
mappings, the CUDA samples' `(error code system not yet initialized)`): a second wording of each, in another version's
or another caller's words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("enroot-no-shell", "enroot-path-denied", "container-cuda-requirement", "cuda-init-unknown",
       "cuda-device-count-mismatch", "p2p-too-many-peers")


@pytest.mark.parametrize("text,expected", [
    # enroot started by hand, an image whose entrypoint script is not where the command says
    ("$ enroot start --rw pytorch-dev /opt/entrypoint.sh\n"
     "enroot-switchroot: failed to execute: /opt/entrypoint.sh: No such file or directory\n", "enroot-no-shell"),
    # enroot's default data path under XDG_DATA_HOME, no scheduler plugin in front of it
    ("$ enroot create --name llm nvidia+pytorch+24.05-py3.sqsh\n"
     "mkdir: cannot create directory '/home/shared/.local/share/enroot': Permission denied\n", "enroot-path-denied"),
    # the container toolkit's older format, with spaces around the operator, under Docker 17
    ("stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --require=cuda>=9.0 --pid=4781]\n"
     "nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0\n", "container-cuda-requirement"),
    # TensorFlow / JAX through the driver API
    ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: CUDA_ERROR_UNKNOWN: "
     "unknown error\n", "cuda-init-unknown"),
    # torch 1.3's THC check, CUDA 10.1's number for the same error
    ("RuntimeError: cuda runtime error (999) : unknown error at /opt/conda/conda-bld/pytorch_1573049306803/work/"
     "aten/src/THC/THCGeneral.cpp:50\n", "cuda-init-unknown"),
    # the assertion raised directly (torch.cuda.current_device()), not deferred
    ('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "/opt/conda/conda-bld/pytorch_1682343997789'
     '/work/aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.\n', "cuda-device-count-mismatch"),
    # a CUDA program's own check of cudaDeviceEnablePeerAccess, and the runtime's error name
    ("Enabling P2P for GPU 0\nCUDA failure test.cu:20 'peer mapping resources exhausted'\n", "p2p-too-many-peers"),
    ("cudaDeviceEnablePeerAccess(9) failed: cudaErrorTooManyPeers\n", "p2p-too-many-peers"),
    # another CUDA sample's call, the same error string inside "(error code ...)"
    ("Failed to copy vector A from host to device (error code system not yet initialized)!\n", "fabric-manager"),
    # enroot's NVIDIA hook, enroot run by hand
    ("$ enroot start --env NVIDIA_VISIBLE_DEVICES=all pytorch\n"
     "[ERROR] Command not found: nvidia-container-cli, see https://github.com/NVIDIA/libnvidia-container\n"
     "[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n", "container-gpu"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a program in the container that cannot make its own output directory
    ("mkdir: cannot create directory '/data/checkpoints': Permission denied\n", "enroot-path-denied"),
    # the shell is there but the directory holding the container is mounted noexec: another cause
    ("enroot-switchroot: failed to execute: /bin/sh: Permission denied\n", "enroot-no-shell"),
    # the shell itself cannot find the program it was asked to run
    ("/bin/sh: 1: python: not found\n", "enroot-no-shell"),
    # CUDA's unknown error in the middle of a run, reported by the NCCL watchdog: not an initialisation
    ("[E ProcessGroupNCCL.cpp:915] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: unknown error\n",
     "cuda-init-unknown"),
    # NVML's words inside a container whose devices were taken away keep their own answer
    ("Failed to initialize NVML: Unknown Error\n", "cuda-init-unknown"),
    # a rank asking for a GPU index beyond the node's, not torch's count against CUDA's
    ("RuntimeError: CUDA error: invalid device ordinal\n", "cuda-device-count-mismatch"),
    # NCCL noting that P2P is not available between two GPUs: no mapping exhausted
    ("aetech:1312:1370 [1] NCCL INFO Could not enable P2P between dev 2(=67000) and dev 3(=68000)\n",
     "p2p-too-many-peers"),
    # the CUDA sample on a node without a GPU it can see
    ("Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n", "fabric-manager"),
    # a package's own version requirement, not the container runtime's
    ("ERROR: Could not find a version that satisfies the requirement torch>=2.1 (from versions: none)\n",
     "container-cuda-requirement"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("Failed to initialize NVML: Unknown Error\n") == "container-gpu-lost"
    assert sig("RuntimeError: CUDA error: invalid device ordinal\n") == "invalid-device-ordinal"
    assert sig("NCCL WARN Cuda failure 'system not yet initialized'\n") == "fabric-manager"
    assert sig("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
               "calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was "
               "attempted on non supported HW\n") == "driver-too-old"
    assert sig("docker: Error response from daemon: could not select device driver \"\" with capabilities: "
               "[[gpu]].\n") == "container-gpu"
    zh = FAILURES_ZH
    for s in explain.SIGNATURES:
        if s.name in NEW or s.name in ("container-gpu", "fabric-manager"):
            assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert {s.name for s in explain.SIGNATURES} >= set(NEW)
