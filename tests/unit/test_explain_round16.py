"""Round 16's rules (issue 45): sigtraining.py (DeepSpeed's pdsh runner with --ssh_port, Horovod without MPI),
siglibs.py (DeepSpeed's checkpoint reader, zero-ckpt-dir), sigmessages.py (DDP's parameters without a gradient,
ddp-unused-params) and sigdevices.py (CUDA's error 35, driver-insufficient): a second wording of each, in another
version's or another caller's words than the corpus case it was written from, and near misses that must not be read
as it."""

import pytest
from explain_rounds import sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed 0.13's launcher itself, its traceback through PDSHRunner.get_cmd (the case was the pull request's prose)
    ("Traceback (most recent call last):\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/launcher/runner.py\", line 579, in main\n"
     "    cmd, kill_cmd, env = runner.get_cmd(env, active_resources)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/launcher/multinode_runner.py\", line 77, in get_cmd\n"
     "    environment[\"PDSH_SSH_ARGS_APPEND\"] += f\" -p {self.args.ssh_port}\"\n"
     "KeyError: 'PDSH_SSH_ARGS_APPEND'\n", "ds-ssh-port-keyerror"),
    # Horovod's init (or a process set) given an mpi4py communicator, on a build without MPI: its other wording
    ("  File \"/opt/venv/lib/python3.9/site-packages/horovod/common/basics.py\", line 120, in init\n"
     "ValueError: Horovod has not been built with MPI support. Ensure MPI is installed and reinstall Horovod with "
     "HOROVOD_WITH_MPI=1 to debug the build error.\n", "horovod-without-mpi"),
    # DeepSpeed's own ds_to_universal reaching the same checkpoint reader (the case was Megatron-DeepSpeed's converter)
    ("  File \"/opt/venv/lib/python3.10/site-packages/deepspeed/checkpoint/ds_to_universal.py\", line 468, in main\n"
     "    ds_checkpoint = DeepSpeedCheckpoint(args.input_folder)\n"
     "  File \"/opt/venv/lib/python3.10/site-packages/deepspeed/checkpoint/zero_checkpoint.py\", line 24, in __init__\n"
     "    assert self.num_files > 0, f'No ZeRO files found in {dir}'\n"
     "AssertionError: No ZeRO files found in /ckpt/run1/global_step2000\n", "zero-ckpt-dir"),
    # DDP's reducer without TORCH_DISTRIBUTED_DEBUG: the indices only, behind a rank prefix
    ("[rank3]: Parameter indices which did not receive grad for rank 3: 149 150 151 152\n"
     "[rank3]:  In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to "
     "print out information about which particular parameters did not receive gradient on this rank as part of this "
     "error\n", "ddp-unused-params"),
    # torch 1.x's THC check of the same CUDA error 35
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=35 : CUDA driver version is "
     "insufficient for CUDA runtime version\n", "driver-insufficient"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


def test_cuda_error_35_names_both_of_its_causes_and_the_fix_tells_them_apart():
    found = explain.explain("Error CUDA driver version is insufficient for CUDA runtime version at line 167 in file "
                            "/src/csrc/ops.cu\n")
    assert found.signature == "driver-insufficient"
    assert "older than" in found.cause and "no NVIDIA driver at all" in found.cause
    assert "nvidia-smi" in found.fix and "--gpus all" in found.fix and "update the driver" in found.fix


def test_the_pdsh_keyerror_says_upgrade_or_drop_ssh_port():
    found = explain.explain("KeyError: 'PDSH_SSH_ARGS_APPEND'\n")
    assert "0.14.1" in found.fix and "--ssh_port" in found.fix and found.restart_can_help is False


@pytest.mark.parametrize("text,not_expected", [
    # pdsh given the port and failing to connect: ssh's own failure, not the launcher's KeyError
    ("pdsh@node1: node2: ssh: connect to host node2 port 2222: Connection refused\n"
     "pdsh@node1: node2: ssh exited with exit code 255\n", "ds-ssh-port-keyerror"),
    # another variable the script reads from the environment
    ("    master = os.environ['MASTER_ADDR']\nKeyError: 'MASTER_ADDR'\n", "ds-ssh-port-keyerror"),
    # the launcher's Gloo twin is another build option, and neither built is no request for MPI
    ("ValueError: Gloo support has not been built.  If this is not expected, ensure CMake is installed and reinstall "
     "Horovod with HOROVOD_WITH_GLOO=1 to debug the build error.\n", "horovod-without-mpi"),
    ("ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that either MPI is "
     "installed (MPI) or CMake is installed (Gloo).\n", "horovod-without-mpi"),
    # Megatron's own loader finding no checkpoint starts from scratch: no DeepSpeed checkpoint reader involved
    ("WARNING: could not find the metadata file /ckpt/latest_checkpointed_iteration.txt \n"
     "    will not load any checkpoints and will start from random\n", "zero-ckpt-dir"),
    # a gradient arriving twice is DDP's other reducer error (reentrant checkpointing), not a missing one
    ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
     "reasons: 1) Use of a module parameter outside the `forward` function.\nParameter at index 5 with name "
     "layer.weight has been marked as ready twice.\n", "ddp-unused-params"),
    # torch's own driver checks can tell the causes apart: they keep their specific answers
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n", "driver-insufficient"),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
     "driver\n", "driver-insufficient"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_torchs_own_driver_checks_keep_their_specific_answers():
    assert sig("RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n") == \
        "driver-too-old"
    assert sig("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
               "installed a driver\n") == "no-gpu"
