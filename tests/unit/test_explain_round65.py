"""Round 65's rule (issue 45), from multi-node launches by hand (the deepspeed launcher with a hostfile over pdsh,
accelerate's DeepSpeed pdsh launcher, torchrun, mpirun): DeepSpeed's runner taking as the master address a word that is
no address (empty, or a path a remote shell's startup file printed before `hostname -I`'s output). Second wordings in
other threads' words than the corpus case it was written from (huggingface/accelerate#2249), and near misses: the same
runner lines with real addresses, and other launchers' empty or odd master addresses that this cause does not explain.
Also c10d's lookup of the store's host name failing after a `torchrun --standalone` launch line: the machine's own
name, known nowhere (host-name-unresolvable, no restart), apart from the same lookup of a master that a scheduler
names only once it is up (master-unreachable, which a restart can get past) (nyu-systems/Grendel-GS#9)."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain

NEW = ("master-addr-not-address", "host-name-unresolvable")


@pytest.mark.parametrize("text", [
    # deepspeedai/DeepSpeed#2612 (a Kubernetes pod whose `hostname -I` printed nothing): the runner's own log line
    "[2022-12-15 21:00:19,543] [INFO] [runner.py:417:main] Using IP address of  for node "
    "ddp-0.ddp.ml-dev.svc.cluster.local\n",
    # the same thread, the PDSH runner's command with the empty address (its exports of the image's variables trimmed)
    "[2022-12-15 21:00:19,545] [INFO] [runner.py:508:main] cmd = pdsh -S -f 1024 -w ddp-0.ddp.ml-dev.svc.cluster.local,"
    "ddp-1.ddp.ml-dev.svc.cluster.local export PYTHONPATH=/;  cd /; /usr/local/bin/python -u -m "
    "deepspeed.launcher.launch --world_info=eyJkZHAtMC5kZHAubWwtZGV2LnN2Yy5jbHVzdGVyLmxvY2FsIjogWzAsIDFdLCAiZGRwLTEu"
    "ZGRwLm1sLWRldi5zdmMuY2x1c3Rlci5sb2NhbCI6IFswLCAxXX0= --node_rank=%n --master_addr= --master_port=29500 "
    "scripts/basic_deepspeed.py\n",
])
def test_second_wordings(text):
    assert sig(text) == "master-addr-not-address"


@pytest.mark.parametrize("text", [
    # EleutherAI/gpt-neox#88: the runner found a real address
    "[2021-01-26 18:08:43,241] [INFO] [runner.py:286:main] Using IP address of 10.140.82.188 for node 10.140.82.188\n",
    # the same log's PDSH command with that address
    "[2021-01-26 18:08:43,243] [INFO] [runner.py:358:main] cmd = pdsh -f 1024 -w 10.140.82.188,10.140.23.80,"
    "10.141.250.227,10.141.113.189 export NCCL_SHM_DISABLE=1; export NCCL_DEBUG=info; export PYTHONPATH=/app;  cd /app; "
    "/usr/bin/python3 -u -m deepspeed.launcher.launch --world_info=eyIxMC4xNDAuODIuMTg4IjogWzAsIDEsIDIsIDMsIDQsIDUsIDYs"
    "IDddLCAiMTAuMTQwLjIzLjgwIjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddLCAiMTAuMTQxLjI1MC4yMjciOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwg"
    "N10sICIxMC4xNDEuMTEzLjE4OSI6IFswLCAxLCAyLCAzLCA0LCA1LCA2LCA3XX0= --node_rank=%n --master_addr=10.140.82.188 "
    "--master_port=29500 train_mpu.py --deepspeed --deepspeed_config 'configs/deepspeed_zero1.json'\n",
    # deepspeedai/DeepSpeed#1481: --force_multi on one node, the loopback address (another question, not this one)
    "[2021-11-03 14:41:15,228] [INFO] [runner.py:360:main] cmd = pdsh -f 1024 -w localhost export PYTHONUNBUFFERED=1; "
    "export NCCL_VERSION=2.7.8; export PYTHONPATH=/cache/user-job-dir:/home/work/user-job-dir:;  cd /cache/user-job-dir; "
    "/root/miniconda3/bin/python -u -m deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMCwgMSwgMiwgMywgNCwgNSwg"
    "NiwgN119 --node_rank=%n --master_addr=127.0.0.1 --master_port=29500 /home/work/user-job-dir/ds_multinodes_test/"
    "ds_train.py --multiprocessing-distributed --deepspeed --deepspeed_config '/cache/user-job-dir/ds_multinodes_test/"
    "wenlan_deepspeed_config.json'\n",
    # deepspeedai/DeepSpeed#579 (Megatron-LM in two containers): the runner's line with the first host's address
    "[2020-12-05 17:42:22,315] [INFO] [runner.py:283:main] Using IP address of 192.168.2.57 for node 192.168.2.57\n",
    # deepspeedai/DeepSpeedExamples#575: the single-node launch (no pdsh, no %n), the runner's local command
    "[2023-06-06 02:44:00,195] [INFO] [runner.py:541:main] cmd = /home/amd00/anaconda3/envs/gh_DeepSpeed-Chat/bin/"
    "python3.10 -u -m "
    "deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMCwgMV19 --master_addr=127.0.0.1 --master_port=29500 "
    "--enable_each_rank_log=None main.py\n",
    # QwenAudio/CosyVoice#241: torchrun's own command line with --master_addr and --node_rank (no pdsh %n)
    "+ torchrun --nnodes=2 --nproc_per_node=1 --node_rank=0 --master_addr=11.214.25.222 --master_port 9999 "
    "--rdzv_id=1986 --rdzv_backend=c10d cosyvoice/bin/train.py --train_engine torch_ddp\n",
])
def test_near_misses(text):
    assert sig(text) != "master-addr-not-address"


@pytest.mark.parametrize("text", [
    # hpcaitech/ColossalAI#2841: the maintainer's standalone command, then the poster's c10d lookup of the machine's
    # own name (EAI_NONAME)
    "torchrun --standalone --master_addr localhost --master_port 29500  --nproc_per_node=2 train_prompts.py "
    "prompts.csv --strategy colossalai_zero2\n"
    "[W socket.cpp:601] [c10d] The IPv6 network addresses of (i-7840df31, 37340) cannot be retrieved (gai error: -2 - "
    "Name or service not known).\n",
    # torch's c10d/socket.cpp format with a later torch's timestamped prefix (nanochat#42's form), the IPv4 lookup,
    # after `python -m torch.distributed.run --standalone` and torchrun's OMP warning
    "python -m torch.distributed.run --standalone --nproc_per_node=8 -m scripts.base_train\n"
    "W1014 16:41:20.100000 4242 torch/distributed/run.py:766] Setting OMP_NUM_THREADS environment variable for each "
    "process to be 1 in default\n"
    "[W1014 16:41:26.522544000 socket.cpp:755] [c10d] The IPv4 network addresses of (gpu-node-3, 29500) cannot be "
    "retrieved (gai error: -3 - Temporary failure in name resolution).\n",
])
def test_standalone_own_name_unresolvable_is_not_restarted(text):
    found = explain.explain(text)
    assert found.signature == "host-name-unresolvable" and found.retry is False


@pytest.mark.parametrize("text", [
    # antgroup/animate-x#15: the lookup alone, no standalone launch before it: master-unreachable, restartable (a job
    # operator's master named once its pod is up)
    "[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) cannot be retrieved (gai error: -2 - "
    "Name or service not known).\n",
    # pytorch/pytorch#150532's launch (no --standalone: PET_RDZV_ENDPOINT gives the endpoint; its thread quotes no log)
    # before a lookup in c10d's format of a name only its own node knows
    "torchrun demo.py\n"
    "[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-17, 36123) cannot be retrieved (gai error: -3 - "
    "Temporary failure in name resolution).\n",
])
def test_a_master_looked_up_without_a_standalone_launch_stays_restartable(text):
    found = explain.explain(text)
    assert found.signature == "master-unreachable" and found.retry is True


def test_torchs_own_local_addresses_after_a_standalone_launch_are_not_this():
    # round 30's near miss (no host and port of a store) after a standalone launch line
    text = ("torchrun --standalone --nproc_per_node=2 train.py\n"
            "[W socket.cpp:464] [c10d] The local network addresses cannot be retrieved (gai error: -3 - Temporary "
            "failure in name resolution).\n")
    assert sig(text) != "host-name-unresolvable"


def test_a_path_taken_for_the_host_is_not_read_as_a_host_name():
    # huggingface/accelerate#2245 (the poster's first report of #2249): DeepSpeed's runner took a remote .bashrc's
    # output for the address; the lookup of that path is no host name's, and nothing else in the line says why
    text = ("9.91.4.251: [W socket.cpp:601] [c10d] The IPv6 network addresses of (/root/cuda11.8.bashrc, 45458) cannot "
            "be retrieved (gai error: -3 - Temporary failure in name resolution).\n")
    assert sig(text) not in ("master-unreachable", "host-name-unresolvable")


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
