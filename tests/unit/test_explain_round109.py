"""Round 109's rules (issue 45), from threads on DeepSpeed / torchrun / accelerate / Lightning training launched through
Slurm: a rank that reads Slurm's task variables (SLURM_PROCID, SLURM_NODEID, ...) in a process Slurm's srun did not
start (os.environ's KeyError: slurm-env-missing, sigworld.py); torch 1.x's TCPStore `host not found` with the resolver's
"Temporary failure in name resolution" (EAI_AGAIN: no answer at all, a node or container whose resolver knows no such
name, or a MASTER_ADDR that is no host name), read as master-unreachable with no restart, where "Name or service not
known" (a job operator's master not up yet) still restarts (sigtorch.py); no-gpu's fix naming enroot/pyxis's
NVIDIA_VISIBLE_DEVICES. A second wording of each, in another version's or caller's words than the corpus case it was
written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("slurm-env-missing",)


@pytest.mark.parametrize("text,expected", [
    # ModelTC/mqbench-paper#1: the project's own Slurm init (utils/dist.py dist_init) under python 3.7, SLURM_PROCID
    ('Traceback (most recent call last):\n'
     '  File "mqbench/prototype/utils/dist.py", line 53, in dist_init\n'
     "    proc_id = int(os.environ['SLURM_PROCID'])\n"
     '  File "/opt/conda/lib/python3.7/os.py", line 681, in __getitem__\n'
     '    raise KeyError(key) from None\n'
     "KeyError: 'SLURM_PROCID'\n", "slurm-env-missing"),
    # Lightning's SLURMEnvironment.world_size (src/lightning/fabric/plugins/environments/slurm.py:
    # `return int(os.environ["SLURM_NTASKS"])`) in python 3.11's traceback form (the frozen os module, the caret
    # line), as that source and CPython 3.11 print it
    ('Traceback (most recent call last):\n'
     '  File "/home/u/.venv/lib/python3.11/site-packages/lightning/fabric/plugins/environments/slurm.py", line 135, '
     'in world_size\n'
     '    return int(os.environ["SLURM_NTASKS"])\n'
     '               ~~~~~~~~~~^^^^^^^^^^^^^^^^\n'
     '  File "<frozen os>", line 714, in __getitem__\n'
     "KeyError: 'SLURM_NTASKS'\n", "slurm-env-missing"),
    # torch 1.x's TCPStore (the env:// rendezvous handler's caller, torch/distributed/rendezvous.py) given a name its
    # resolver gets no answer for
    ('Traceback (most recent call last):\n'
     '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 151, in '
     '_env_rendezvous_handler\n'
     '    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)\n'
     'ValueError: host not found: Temporary failure in name resolution\n', "master-unreachable"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # another launcher's variable read the same way (deepspeedai/DeepSpeed#2025's test.py under srun without torchrun:
    # `local_rank = int(os.environ["LOCAL_RANK"])`): not Slurm's
    ('Traceback (most recent call last):\n'
     '  File "test.py", line 19, in <module>\n'
     '    local_rank = int(os.environ["LOCAL_RANK"])\n'
     '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n'
     '    raise KeyError(key) from None\n'
     "KeyError: 'LOCAL_RANK'\n", "slurm-env-missing"),
    # torch/distributed/rendezvous.py's _env_error: env:// with no launcher's variables
    ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
     "but not set\n", "slurm-env-missing"),
    # Lightning's own Slurm checks (src/lightning/fabric/plugins/environments/slurm.py): _validate_srun_used's
    # PossibleUserWarning, validate_settings' ValueError, _validate_srun_variables' RuntimeError
    ("/usr/lib/python3/site-packages/lightning/fabric/plugins/environments/slurm.py:204: The `srun` command is "
     "available on your system but is not used. HINT: If your intention is to run Lightning on SLURM, prepend your "
     "python command with `srun` like so: srun python train.py ...\n", "slurm-env-missing"),
    ("ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM "
     "`--ntasks-per-node=1` does not match. HINT: Set `devices=1`.\n", "slurm-env-missing"),
    ("RuntimeError: You set `--ntasks=8` in your SLURM bash script, but this variable is not supported. HINT: Use "
     "`--ntasks-per-node=8` instead.\n", "slurm-env-missing"),
    # urllib3 2.x's NameResolutionError under huggingface_hub (the same resolver's words, a download's, not the store's)
    ("requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max "
     "retries exceeded with url: /bert-base-uncased/resolve/main/config.json (Caused by NameResolutionError(\\\""
     "<urllib3.connection.HTTPSConnection object at 0x7f1c2c1d5f90>: Failed to resolve 'huggingface.co' ([Errno -3] "
     "Temporary failure in name resolution)\\\"))\"), '(Request ID: 3b1c1e2a)')\n", "master-unreachable"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_name_that_does_not_exist_yet_still_restarts():
    # kubeflow-pytorch-operator-125/333, pytorch-73682: "Name or service not known" (EAI_NONAME) is a name server's
    # answer, a master whose service comes up later; "Temporary failure" (EAI_AGAIN) is no answer at all
    tail = ('  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 151, in '
            '_env_rendezvous_handler\n    store = TCPStore(master_addr, master_port, world_size, start_daemon, '
            'timeout)\nValueError: host not found: ')
    known, unknown = (explain.explain(tail + words + "\n") for words in ("Name or service not known",
                                                                         "Temporary failure in name resolution"))
    assert known.signature == unknown.signature == "master-unreachable"
    assert known.retry and not unknown.retry
    assert unknown.cause != known.cause and "scontrol" in unknown.fix


def test_no_gpu_names_enroots_setting():
    # NVIDIA/enroot#205: enroot's 98-nvidia.sh hook gives the container the driver only with NVIDIA_VISIBLE_DEVICES set
    found = explain.explain("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
                            "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    assert found.signature == "no-gpu" and "NVIDIA_VISIBLE_DEVICES" in found.fix


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
    unknown = next(s for s in explain.SIGNATURES if s.name == "master-unreachable" and not s.retry
                   and "no answer at all" in s.cause)
    assert unknown.cause in FAILURES_ZH and unknown.fix in FAILURES_ZH
    no_gpu = next(s for s in explain.SIGNATURES if s.name == "no-gpu" and "NVIDIA_VISIBLE_DEVICES" in s.fix)
    assert no_gpu.fix in FAILURES_ZH
