"""Round 113's rules (issue 45), from threads about MPI-launched distributed training (horovodrun with Gloo, mpirun
started by a tool, DeepSpeed's --launcher openmpi): DeepSpeed 0.16.4-0.18.3's Open MPI launcher checking mpirun's rank
variables before it runs mpirun, read as ds-open-mpi-env-check rather than a rank's Python error or the MPI launcher's
daemons; the Hydra process manager's mpiexec (MPICH's, Intel MPI's) refusing an option only Open MPI's mpirun has,
read as hydra-open-mpi-option rather than a bare error line; Horovod's Gloo rendezvous store timing out before every
worker registered, read as horovod-gloo-rendezvous-timeout rather than an abort. A second wording of each, in another
version's or caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-open-mpi-env-check", "hydra-open-mpi-option", "horovod-gloo-rendezvous-timeout")

# DeepSpeed's launcher/multinode_runner.py of 0.16.4-0.18.3 (#6979), OpenMPIRunner._setup_mpi_environment's raise
_DS_MESSAGE = ("OSError: MPI environment variables are not set. Ensure you are running the script with an "
               "MPI-compatible launcher.\n")


@pytest.mark.parametrize("text,expected", [
    # the error line alone, as a user pastes it (DeepSpeed's two sentences)
    (_DS_MESSAGE, "ds-open-mpi-env-check"),
    # a caller's words: accelerate launch with deepspeed_multinode_launcher openmpi runs DeepSpeed's runner main,
    # whose OpenMPIRunner raises in validate_args
    ("Traceback (most recent call last):\n"
     "  File \"/opt/conda/bin/accelerate\", line 8, in <module>\n"
     "    sys.exit(main())\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/commands/launch.py\", line 1159, in launch_command\n"
     "    deepspeed_launcher(args)\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/commands/launch.py\", line 852, in "
     "deepspeed_launcher\n"
     "    distrib_run.main(cmd)\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/runner.py\", line 569, in main\n"
     "    runner = OpenMPIRunner(args, world_info_base64, resource_pool)\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/multinode_runner.py\", line 23, in "
     "__init__\n"
     "    self.validate_args()\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/multinode_runner.py\", line 139, in "
     "validate_args\n"
     "    self._setup_mpi_environment()\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/multinode_runner.py\", line 154, in "
     "_setup_mpi_environment\n"
     "    raise EnvironmentError(\"MPI environment variables are not set. \"\n" + _DS_MESSAGE,
     "ds-open-mpi-env-check"),
    # MPICH 4's Hydra (src/pm/hydra/lib/utils/args.c match_arg, mpiexec/get_parameters.c) given DeepSpeed's
    # OpenMPIRunner line, whose first Open MPI option is --mca
    ("[mpiexec@gpu-07] match_arg (lib/utils/args.c:166): unrecognized argument mca\n"
     "[mpiexec@gpu-07] HYDU_parse_array (lib/utils/args.c:181): argument matching returned error\n"
     "[mpiexec@gpu-07] parse_args (mpiexec/get_parameters.c:318): error parsing input array\n"
     "[mpiexec@gpu-07] HYD_uii_mpx_get_parameters (mpiexec/get_parameters.c:48): unable to parse user arguments\n"
     "[mpiexec@gpu-07] main (mpiexec/mpiexec.c:49): error parsing parameters\n", "hydra-open-mpi-option"),
    # MPICH 3's Hydra given Open MPI's -x VAR (a job script's `mpirun -np 4 -x NCCL_DEBUG=INFO python train.py`)
    ("[mpiexec@node3] match_arg (utils/args/args.c:163): unrecognized argument x\n"
     "[mpiexec@node3] HYDU_parse_array (utils/args/args.c:178): argument matching returned error\n",
     "hydra-open-mpi-option"),
    # Horovod 0.21+'s HTTP store (horovod/common/gloo/http_store.cc, horovod#2436's words), pip-built, rank-tagged:
    # ray-project/ray#25866's shape
    ("terminate called after throwing an instance of 'gloo::IoException'\n"
     "  what():  [/tmp/pip-install-4kq2/horovod_77aa/horovod/common/gloo/http_store.cc:57] "
     "[/tmp/pip-install-4kq2/horovod_77aa/horovod/common/gloo/http_store.cc:57] Wait timeout after 30 seconds for "
     "key(s): 0. You may want to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS\n"
     "*** SIGABRT received at time=1655335369 on cpu 8 ***\n", "horovod-gloo-rendezvous-timeout"),
    # its in-memory store (horovod.spark / horovod.ray run the rendezvous in the driver), memory_store.cc
    ("[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'\n"
     "[1]<stderr>:  what():  [horovod/common/gloo/memory_store.cc:52] Wait timeout after 60 seconds for key(s): 3\n",
     "horovod-gloo-rendezvous-timeout"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a script's own check of the same variables inside a rank (the shape of DeepSpeed#6895's setup_env_ranks): the
    # first sentence only, no DeepSpeed launcher frame
    ("Traceback (most recent call last):\n"
     "  File \"/work/src/dna_mlm/runner.py\", line 31, in setup_env_ranks\n"
     "    raise EnvironmentError(\n"
     "OSError: MPI environment variables are not set.\n", "ds-open-mpi-env-check"),
    # the same validate_args refusing --num_gpus (DeepSpeed's other raise there): ds-mpi-launcher-limits
    ("  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/launcher/multinode_runner.py\", line 145, in "
     "validate_args\n"
     "    raise ValueError(f\"{self.name} backend does not support limiting num nodes/gpus\")\n"
     "ValueError: openmpi backend does not support limiting num nodes/gpus\n", "ds-open-mpi-env-check"),
    # DeepSpeed's comm finding no launcher and trying MPI (comm/comm.py init_distributed): another family
    ("[INFO] [comm.py:652:init_distributed] Not using the DeepSpeed or dist launchers, attempting to detect MPI "
     "environment...\nModuleNotFoundError: No module named 'mpi4py'\n", "ds-open-mpi-env-check"),
    # Hydra refusing an option that is no Open MPI one (a misspelt -pmi-port): not a command written for Open MPI
    ("[mpiexec@node3] match_arg (utils/args/args.c:163): unrecognized argument pmi\n"
     "[mpiexec@node3] HYDU_parse_array (utils/args/args.c:178): argument matching returned error\n",
     "hydra-open-mpi-option"),
    # an argument that only starts like an Open MPI option (-mcast: neither Hydra nor Open MPI has it)
    ("[mpiexec@node3] match_arg (utils/args/args.c:163): unrecognized argument mcast\n", "hydra-open-mpi-option"),
    # the reverse: Open MPI's mpirun given MPICH's -genv (opal's command-line parser)
    ("mpirun: Error: unknown option \"-genv\"\nType 'mpirun --help' for usage.\n", "hydra-open-mpi-option"),
    # a training script's argparse given mpirun's options
    ("usage: train.py [-h] [--epochs EPOCHS]\ntrain.py: error: unrecognized arguments: --mca btl ^openib\n",
     "hydra-open-mpi-option"),
    # gloo's own rendezvous stores (gloo/rendezvous/file_store.cc, hash_store.cc, redis_store.cc) say the same first
    # words: not Horovod's store nor its timeout variable
    ("terminate called after throwing an instance of 'gloo::IoException'\n"
     "  what():  [/opt/gloo/gloo/rendezvous/file_store.cc:152] Wait timeout for key(s): rank_1\n",
     "horovod-gloo-rendezvous-timeout"),
    # gloo's TCP transport waiting on a peer during a collective (horovod#1374): a collective's timeout
    ("terminate called after throwing an instance of 'gloo::IoException'\n"
     "  what():  [third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:72] Timed out waiting 30000ms for recv "
     "operation to complete\n", "horovod-gloo-rendezvous-timeout"),
    # torch 2.3+'s TCPStore wait (rank 0 late): torch's store, not Horovod's
    ("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0\n",
     "horovod-gloo-rendezvous-timeout"),
    # Horovod's stall warning (ranks that submitted different tensors): no rendezvous
    ("WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
     "waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to "
     "submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.\n",
     "horovod-gloo-rendezvous-timeout"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_launcher_limits_keep_their_answer():
    # DeepSpeed's other refusal in OpenMPIRunner.validate_args is still read as it was (round 51)
    assert sig("ValueError: openmpi backend does not support limiting num nodes/gpus\n") == "ds-mpi-launcher-limits"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
