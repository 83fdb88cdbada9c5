"""Round 133's rules (issue 45), from speech and audio training threads (Coqui TTS recipes, NeMo ASR, ESPnet, WeNet,
SpeechBrain, fairseq): Coqui's Trainer refusing a plain one-process start while several GPUs are visible
(trainer_utils.py setup_torch_training_env), read as coqui-trainer-multi-gpu-needs-distribute instead of the bare
RuntimeError line: a second wording (the idiap fork's, which names `python -m trainer.distribute`, and the message as
copied from a rendered page), and near misses from the same components and their neighbours that must not be read as
it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("coqui-trainer-multi-gpu-needs-distribute",)


def test_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # idiap/coqui-ai-Trainer (the maintained fork, trainer/trainer_utils.py since its PR #21): the launcher's new name,
    # under the traceback the Trainer's constructor raises it from
    ("  File \"/opt/conda/lib/python3.11/site-packages/trainer/trainer_utils.py\", line 86, in "
     "setup_torch_training_env\n"
     "    raise RuntimeError(msg)\n"
     "RuntimeError:  [!] 8 active GPUs. Define the target GPU by `CUDA_VISIBLE_DEVICES`. For multi-gpu training use "
     "`python -m trainer.distribute`.\n"),
    # the same message copied from a rendered page (GitHub drops the backticks), coqui-ai/Trainer's older launcher path
    ("RuntimeError: [!] 3 active GPUs. Define the target GPU by CUDA_VISIBLE_DEVICES. For multi-gpu training use "
     "TTS/bin/distribute.py.\n"),
])
def test_coqui_trainer_started_without_its_launcher(text):
    assert sig(text) == "coqui-trainer-multi-gpu-needs-distribute"


@pytest.mark.parametrize("text", [
    # Coqui's own environment report (trainer_utils.py print_training_env) on a run that starts fine
    " > Training Environment:\n | > Backend: Torch\n | > Mixed precision: False\n | > Precision: float32\n"
    " | > Current device: 0\n | > Num. of GPUs: 2\n | > Num. of CPUs: 32\n | > Num. of Torch Threads: 1\n",
    # Lightning's device line before a DDP start (the NeMo notebook run of round 133), not Coqui's refusal
    "GPU available: True, used: True\nLOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]\n",
    # transformers' speech-recognition examples (run_speech_recognition_seq2seq.py) log the device count of a
    # one-process DataParallel run, which they allow
    ("06/12/2024 10:02:11 - WARNING - __main__ - Process rank: 0, device: cuda:0, n_gpu: 2, distributed training: "
     "False, 16-bits training: True\n"),
])
def test_other_gpu_count_lines(text):
    assert sig(text) != "coqui-trainer-multi-gpu-needs-distribute"
