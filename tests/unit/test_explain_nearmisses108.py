"""Near misses of the rules added by rounds 90-101 of issue 45 and of the storage table (sigstorage.py), review 108:
words another component prints, or the same component in another situation, that a rule read as its cause. Seven
rules read a wrong specific cause and were narrowed:
- local-rank-negative where the -1 is a CPU tensor's get_device() (torch's Tensor.get_device answers -1 on the CPU) or
  torchtext's legacy device=-1 for the CPU: a model run on the CPU, not a local rank left unset;
- bash-script-under-sh where dash names itself (sh, dash, /bin/sh: its arg0 for a command string given with -c, as
  os.system, make's recipes and Ansible's shell tasks run it): that tool's shell is the fix, not bash for a script;
- nccl-blackwell-shared-mem after a cudaArch of three digits: RCCL, ROCm's NCCL, prints NCCL's check for AMD's gfx9
  GPUs (its NCCL_CUDA_ARCH 900-950), whose fix is not an NCCL release for GeForce RTX 50-series cards;
- wandb-no-run-on-rank where this process's run was finished before the error (wandb's finish footer "Find logs at:
  ...run-DATE_TIME-ID/logs", after which wandb.log is its pre-init placeholder again): a log after wandb.finish;
- storage-io-error on a device node or the kernel's files (/dev/nvidia-uvm, a serial port, /proc, /sys): no storage;
- nfs-stale-handle on /proc's entries and on a container engine's overlay layers: no NFS;
- hub-rate-limited where the 429 answers an upload (huggingface_hub's LFS batch, preupload and commit requests of a
  push_to_hub or upload_large_folder): no download beforehand or offline mode avoids it.
The rules' own words still get them (each "still read" test). No corpus case or explain log changed its answer."""

import pytest
from explain_rounds import sig

from dscluster import explain, sigmessages, sigtorch, sigtracking

# --- local-rank-negative ---------------------------------------------------------------------------------------------
# Wentao-Xu/HIST#12 (the traceback, as quoted there): torch.get_device of a CPU tensor is -1 (qlib's workflow
# logger line first, Windows paths).
_HIST_12 = (
    "[2022-02-17 11:43:15] - Running 0 Epoch: 0\n"
    "[2022-02-17 11:43:15] - training...\n"
    "[2364:MainThread](2022-02-17 11:43:15,750) ERROR - qlib.workflow - [utils.py:38] - An exception has been "
    "raised[RuntimeError: Device index must not be negative].\n"
    '  File "learn.py", line 450, in <module>\n'
    "    main(args)\n"
    '  File "learn.py", line 288, in main\n'
    "    train_epoch(epoch, model, optimizer, train_loader, writer, args, stock2concept_matrix)\n"
    '  File "learn.py", line 116, in train_epoch\n'
    "    pred = model(feature, stock2concept_matrix[stock_index], market_value)\n"
    '  File "D:\\anaconda3\\envs\\qlib\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 889, in _call_impl\n'
    "    result = self.forward(*input, **kwargs)\n"
    '  File "D:\\Codes\\HIST\\model.py", line 79, in forward\n'
    "    device = torch.device(torch.get_device(x+1))\n"
    "RuntimeError: Device index must not be negative\n")
# uber-research/DeepPruner#38's line (`device = left_input.get_device()` with args.cuda=False), in a traceback's shape
_DEEPPRUNER_38 = ('  File "/home/u/DeepPruner/deeppruner/models/deeppruner.py", line 120, in forward\n'
                  "    device = left_input.get_device()\n"
                  "RuntimeError: Device index must not be negative\n")
# salesforce/densecap#46 (Colab, IPython's traceback as posted): torchtext's legacy Field.numericalize given device=-1,
# the CPU in torchtext's old convention; "I solved by setting device = 0". IPython puts the frames before the message.
_DENSECAP_46 = (
    "loading dataset\n"
    "of words in the vocab: 1011\n"
    "---------------------------------------------------------------------------\n"
    "RuntimeError                              Traceback (most recent call last)\n"
    "<ipython-input-16-a31b70d01cdd> in <module>()\n"
    "      1 print('loading dataset')\n"
    "----> 2 test_loader, text_proc = get_dataset(args)\n"
    "      3 \n"
    "\n"
    "2 frames\n"
    "/usr/local/lib/python3.7/dist-packages/torchtext/legacy/data/field.py in numericalize(self, arr, device)\n"
    "    351                 arr = self.postprocessing(arr, None)\n"
    "    352 \n"
    "--> 353         var = torch.tensor(arr, dtype=self.dtype, device=device)\n"
    "    354 \n"
    "\n"
    "RuntimeError: Device index must not be negative\n")
# The rule's own shapes: a script's local rank left at -1 (the corpus case's and the explain log's lines), and the same
# in IPython's shape (a notebook's DDP cell).
_LOCAL_RANK_SCRIPT = ('Traceback (most recent call last):\n  File "train.py", line 171, in <module>\n'
                      "    data[0].to(model_engine.local_rank),\n"
                      "RuntimeError: Device index must not be negative\n")
_LOCAL_RANK_IPYTHON = ("RuntimeError                              Traceback (most recent call last)\n"
                       "<ipython-input-3-5f2e> in <module>()\n"
                       "----> 1 model = model.to(torch.device(\"cuda\", args.local_rank))\n"
                       "\n"
                       "RuntimeError: Device index must not be negative\n")

# --- bash-script-under-sh --------------------------------------------------------------------------------------------
# dash names its arg0 for a command string given with -c (dash 0.5.12, Debian's /bin/sh): a make recipe
# (`echo $${x//a/b}`: make's own line after it), python's os.system / subprocess shell=True, `dash -c`. The same words
# stand in public repositories: a Makefile's "make precommit ... /bin/sh: 1: Bad substitution", an Ansible shell task's
# stderr "/bin/sh: 1: Bad substitution" for `exit ${PIPESTATUS[0]}`.
_MAKE_RECIPE = "/bin/sh: 1: Bad substitution\nmake: *** [/tmp/r108mk:2: all] Error 2\n"
_OS_SYSTEM = "sh: 1: Bad substitution\n"
_DASH_C = "dash: 1: Bad substitution\n"

# --- nccl-blackwell-shared-mem ---------------------------------------------------------------------------------------
# RCCL's check (rocm-systems projects/rccl, a device-linker build on MI300A, gfx942, ROCm 7.0: its notes quote the
# error), and the same under NCCL's WARN prefix as RCCL prints it (enqueue.cc ncclInitKernelsForDevice).
_RCCL = "cudaArch 940 ncclMaxSharedMem 32832 exceeds device/fn maxSharedMem 27760\n"
_RCCL_WARN = ("mi300a:2211:2290 [0] enqueue.cc:57 NCCL WARN cudaArch 942 ncclMaxSharedMem 32832 exceeds device/fn "
              "maxSharedMem 27760\n")

# --- wandb-no-run-on-rank --------------------------------------------------------------------------------------------
# wandb/wandb#4364 (the log as posted, one Vertex AI worker, the Hugging Face Trainer): wandb's finish footer,
# then wandb's pre-init error in the same process.
_WANDB_4364 = (
    "wandb: Synced test_CB_wandb: https://wandb.ai/bodyguard/huggingface/runs/m19hgjkq\n"
    "2022-10-07 16:58:31.503 CEST\n\nworkerpool0-0\n"
    "wandb: Synced 5 W&B file(s), 0 media file(s), 0 artifact file(s) and 0 other file(s)\n"
    "2022-10-07 16:58:31.503 CEST\n\nworkerpool0-0\n"
    "wandb: Find logs at: ./wandb/run-20221007_145819-m19hgjkq/logs\n"
    "2022-10-07 16:58:31.719 CEST\n\nworkerpool0-0\n"
    "wandb: ERROR You must call wandb.init() before wandb.log()\n"
    "2022-10-07 16:58:31.721 CEST\n\nworkerpool0-0\n"
    "Traceback (most recent call last):\n")
# The same with the traceback's end in wandb's own words (wandb/sdk/lib/preinit.py preinit_wrapper, wandb 0.13's
# exception wandb.errors.Error), and wandb.run read after the finish (None again: module.unset_globals).
_FOOTER = "wandb: Find logs at: ./wandb/run-20221007_145819-m19hgjkq/logs\n"
_PREINIT_TB = ('Traceback (most recent call last):\n  File "/app/my_trainer/task.py", line 100, in <module>\n'
               '    wandb.log({"test/accuracy": acc})\n'
               '  File "/opt/conda/lib/python3.7/site-packages/wandb/sdk/lib/preinit.py", line 36, in preinit_wrapper\n'
               '    raise wandb.Error("You must call wandb.init() before {}()".format(name))\n'
               "wandb.errors.Error: You must call wandb.init() before wandb.log()\n")
_RUN_NONE_TB = ('Traceback (most recent call last):\n  File "/app/my_trainer/task.py", line 104, in <module>\n'
                "    print(wandb.run.id)\n"
                "AttributeError: 'NoneType' object has no attribute 'id'\n")

# --- storage-io-error ------------------------------------------------------------------------------------------------
# A GPU pod's measurement (RTX 4090, the UVM device node failing: CUDA then unavailable), as a repository's notes quote
# it verbatim, and pyserial's open of a serial port (serial/serialposix.py).
_NVIDIA_UVM = ("NVIDIA GeForce RTX 4090, 24564 MiB, 8.9, 595.80\n"
               "open /dev/nvidiactl OK\n"
               "open /dev/nvidia-uvm FAILED OSError [Errno 5] Input/output error: '/dev/nvidia-uvm'\n"
               "open /dev/nvidia-uvm-tools FAILED OSError [Errno 5] Input/output error: '/dev/nvidia-uvm-tools'\n"
               "cuInit rc 999\n"
               "torch.cuda.is_available False\n")
_PYSERIAL = ('  File "/home/u/.local/lib/python3.10/site-packages/serial/serialposix.py", line 322, in open\n'
             "    self.fd = os.open(self.portstr, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)\n"
             "OSError: [Errno 5] Input/output error: '/dev/ttyS11'\n")

# --- nfs-stale-handle ------------------------------------------------------------------------------------------------
# moby/moby#7303 (a TeamCity agent in docker forking processes: procfs's fd links of a process gone)
_PROC_FD = ("[10:22:34]Cannot stat file /proc/67/fd/11: Stale NFS file handle\n"
            "[10:22:34]Cannot stat file /proc/67/fd/12: Stale NFS file handle\n")
# podman-container-tools/podman#5816 (rootful podman with --uidmap: overlayfs failing to verify its upper layer,
# kernel "overlayfs: failed to verify upper (..., err=-116)")
_OVERLAY = ("docker.io/library/alpine   3.11   a187dde48cd2   3 weeks ago   unable to determine size: size/digest of "
            "layer with ID \"379557b8dd3e4df8ab2a5bd0afec5cb234777ad438c3c672a0f6f8763d2e5f5d\" could not be calculated: "
            "error creating overlay mount to /var/lib/containers/storage/overlay/"
            "379557b8dd3e4df8ab2a5bd0afec5cb234777ad438c3c672a0f6f8763d2e5f5d/merged: stale NFS file handle\n")

# --- hub-rate-limited ------------------------------------------------------------------------------------------------
# An upload's 429: a project's notes from uploading a 131 GB model from the Jupiter cluster ("Stuck in a HTTP 429 ->
# 'Rate limited. Waiting 286.0s before retry [Retry 1/5]' loop on .git/info/lfs/objects/batch. 28 pre-upload workers all
# hit 429 in parallel"), in huggingface_hub's own words for that request (utils/_http.py http_backoff; lfs.py
# post_lfs_batch_info POSTs to the repository's .git/info/lfs/objects/batch), and hf_raise_for_status's error for the
# preupload request of _commit_api.py.
_LFS_UPLOAD = ("HTTP Error 429 thrown while requesting POST https://huggingface.co/org/model-32b.git/info/lfs/objects/batch\n"
               "Rate limited. Waiting 286.0s before retry [Retry 1/5].\n")
_PREUPLOAD = ("huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: "
              "https://huggingface.co/api/models/org/model-32b/preupload/main\n")
# A download's 429 (vLLM on Cloud Run in another project's notes: shared NAT addresses, no token): the rule's own.
_DOWNLOAD = ("(APIServer pid=1) HTTP Error 429 thrown while requesting HEAD https://huggingface.co/.../config.json\n"
             "(APIServer pid=1) Rate limited. Waiting 253.0s before retry [Retry 1/5].\n")


@pytest.mark.parametrize("text,not_expected", [
    (_HIST_12, "local-rank-negative"),
    (_DEEPPRUNER_38, "local-rank-negative"),
    (_DENSECAP_46, "local-rank-negative"),
    (_MAKE_RECIPE, "bash-script-under-sh"),
    (_OS_SYSTEM, "bash-script-under-sh"),
    (_DASH_C, "bash-script-under-sh"),
    (_RCCL, "nccl-blackwell-shared-mem"),
    (_RCCL_WARN, "nccl-blackwell-shared-mem"),
    (_WANDB_4364, "wandb-no-run-on-rank"),
    (_FOOTER + _PREINIT_TB, "wandb-no-run-on-rank"),
    (_FOOTER + _RUN_NONE_TB, "wandb-no-run-on-rank"),
    (_NVIDIA_UVM, "storage-io-error"),
    (_PYSERIAL, "storage-io-error"),
    ("cat: /proc/driver/nvidia/gpus/0000:3b:00.0/information: Input/output error\n", "storage-io-error"),
    (_PROC_FD, "nfs-stale-handle"),
    (_OVERLAY, "nfs-stale-handle"),
    (_LFS_UPLOAD, "hub-rate-limited"),
    (_PREUPLOAD, "hub-rate-limited"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


@pytest.mark.parametrize("text,expected", [
    (_LOCAL_RANK_SCRIPT, "local-rank-negative"),
    (_LOCAL_RANK_IPYTHON, "local-rank-negative"),
    ("RuntimeError: Device index must not be negative\n", "local-rank-negative"),
    ("tools/dist_train.sh: 8: Bad substitution\n", "bash-script-under-sh"),
    ("./tools/dist_train.sh: 10: ./tools/dist_train.sh: Bad substitution\n", "bash-script-under-sh"),
    # sbatch --wrap and a batch script without #! run by sh: Slurm's copy of the script is a script's name
    ("/var/spool/slurmd/job123/slurm_script: 4: Bad substitution\n", "bash-script-under-sh"),
    ("ws:1:2 [0] enqueue.cc:57 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n",
     "nccl-blackwell-shared-mem"),
    ("test:259034:259124 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n",
     "nccl-blackwell-shared-mem"),
    (_PREINIT_TB, "wandb-no-run-on-rank"),
    (_RUN_NONE_TB, "wandb-no-run-on-rank"),
    ("OSError: [Errno 5] Input/output error: '/dev/sda'\n", "storage-io-error"),
    ("cp: error reading '/lustre/ckpt/model.pt': Input/output error\n", "storage-io-error"),
    ("OSError: [Errno 5] Input/output error: 'checkpoints/step_100/model.safetensors'\n", "storage-io-error"),
    ("OSError: [Errno 116] Stale file handle: '/nfs/ckpt/step_100'\n", "nfs-stale-handle"),
    ("OSError: [Errno 116] Stale file handle\n", "nfs-stale-handle"),
    ("ls: cannot access '/mnt/dataset/': Stale file handle\n", "nfs-stale-handle"),
    (_DOWNLOAD, "hub-rate-limited"),
])
def test_still_read(text, expected):
    assert sig(text) == expected


def test_the_evidence_is_still_the_message_line():
    assert explain.explain(_LOCAL_RANK_SCRIPT).evidence == "RuntimeError: Device index must not be negative"
    assert explain.explain(_PREINIT_TB).evidence == "wandb.errors.Error: You must call wandb.init() before wandb.log()"
    assert explain.explain(_DOWNLOAD).evidence == ("(APIServer pid=1) HTTP Error 429 thrown while requesting HEAD "
                                                   "https://huggingface.co/.../config.json")


def test_the_narrowed_entries_read_the_lines_before_the_error():
    assert sigtorch.LOCAL_RANK_NEGATIVE in sigmessages.READS_BEFORE
    assert set(sigtracking.WANDB_NO_RUN) <= sigmessages.READS_BEFORE
    entries = [s for s in explain.SIGNATURES if s.name == "wandb-no-run-on-rank"]
    assert len(entries) == 2 and len({(s.cause, s.fix, s.retry) for s in entries}) == 1
