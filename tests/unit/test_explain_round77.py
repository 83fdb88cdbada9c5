"""Round 77's rules (issue 45), from checkpoint save and resume threads of distributed training: DeepSpeed's loader
finding no model-state file in the checkpoint tag directory (state_dict_factory.py's check_ckpt_list, read with its
frame: the files absent, or on another node's disk), torch's optimizer refusing a saved state of other parameter groups
(a resume with another setup than the save's), and os.makedirs/Path.mkdir with exist_ok=True still raising
FileExistsError (ranks creating the same checkpoint directory at once on a shared file system): a second wording of
each, in another version's or caller's words than the corpus case it was written from, and near misses that must not
be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("ckpt-model-states-missing", "ckpt-optimizer-groups-mismatch")


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed 0.9's state_dict_factory.py (check_ckpt_list at line 162) under Python 3.8, no rank prefix: the
    # traceback as engine.load_checkpoint -> _load_checkpoint -> SDLoaderFactory.get_sd_loader leaves it
    ("Traceback (most recent call last):\n"
     "  File \"pretrain_gpt.py\", line 355, in <module>\n"
     "    main()\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/engine.py\", line 2605, in load_checkpoint\n"
     "    load_path, client_states = self._load_checkpoint(load_dir,\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/engine.py\", line 2664, in _load_checkpoint\n"
     "    sd_loader = SDLoaderFactory.get_sd_loader(ckpt_list, checkpoint_engine=self.checkpoint_engine)\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/state_dict_factory.py\", line 43, in "
     "get_sd_loader\n"
     "    return MegatronSDLoader(ckpt_list, version, checkpoint_engine)\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/state_dict_factory.py\", line 55, in __init__\n"
     "    self.check_ckpt_list()\n"
     "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/state_dict_factory.py\", line 162, in "
     "check_ckpt_list\n"
     "    assert len(self.ckpt_list) > 0\n"
     "AssertionError\n", "ckpt-model-states-missing"),
    # the same under torch 2.x's rank prefix (accelerate's load_state calling the engine's load_checkpoint)
    ("[rank2]:   File \"/usr/local/lib/python3.12/site-packages/accelerate/accelerator.py\", line 3191, in load_state\n"
     "[rank2]:     model.load_checkpoint(input_dir, ckpt_id, **load_model_func_kwargs)\n"
     "[rank2]:   File \"/usr/local/lib/python3.12/site-packages/deepspeed/runtime/state_dict_factory.py\", line 168, in "
     "check_ckpt_list\n"
     "[rank2]:     assert len(self.ckpt_list) > 0\n"
     "[rank2]:            ^^^^^^^^^^^^^^^^^^^^^^^\n"
     "[rank2]: AssertionError\n", "ckpt-model-states-missing"),
    # torch 1.x's optimizer.py (the number of groups first), as Python prints the raise split over two source lines
    # (mks0601/ExAvatar_RELEASE#5, a resume of its own training)
    ("  File \"/root/miniconda3/envs/exavatar/lib/python3.8/site-packages/torch/optim/optimizer.py\", line 166, in "
     "load_state_dict\n"
     "    raise ValueError(\"loaded state dict has a different number of \"\n"
     "ValueError: loaded state dict has a different number of parameter groups\n", "ckpt-optimizer-groups-mismatch"),
    # bitsandbytes' own Optimizer8bit.load_state_dict raises torch's words (kohya-ss/sd-scripts#378, a resumed run)
    ("  File \"E:\\kohya\\venv\\lib\\site-packages\\bitsandbytes\\optim\\optimizer.py\", line 149, in "
     "load_state_dict\n"
     "    raise ValueError(\n"
     "ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group\n",
     "ckpt-optimizer-groups-mismatch"),
    # Python 3.10's os.py makedirs (its source line under the frame) called by accelerate's save_state
    # (accelerator.py: os.makedirs(output_dir, exist_ok=True)) on every rank
    ("[rank3]:   File \"/usr/local/lib/python3.10/dist-packages/accelerate/accelerator.py\", line 2840, in save_state\n"
     "[rank3]:     os.makedirs(output_dir, exist_ok=True)\n"
     "[rank3]:   File \"/usr/lib/python3.10/os.py\", line 225, in makedirs\n"
     "[rank3]:     mkdir(name, mode)\n"
     "[rank3]: FileExistsError: [Errno 17] File exists: '/nfs/runs/exp4/checkpoints/checkpoint_12'\n",
     "ckpt-dir-exists-race"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the assert quoted alone, without DeepSpeed's frame (a thread's title): left to ckpt-not-shared
    ("多机多卡场景下resume_from_checkpoint，报错assert len(self.ckpt_list) > 0\n", "ckpt-model-states-missing"),
    # DeepSpeed's checkpoint converter finding no ZeRO files (checkpoint/zero_checkpoint.py,
    # bigscience-workshop/Megatron-DeepSpeed#333): another loader's check, not the model states' list
    ("  File \"/data/anaconda3/envs/ds/lib/python3.8/site-packages/deepspeed/checkpoint/zero_checkpoint.py\", line 26, "
     "in __init__\n"
     "    assert self.num_files > 0, f'No ZeRO files found in {dir}'\n"
     "AssertionError: No ZeRO files found in checkpoints/tr11b-1B3-ml/checkpoints/main/global_step1/\n",
     "ckpt-model-states-missing"),
    # a model's load_state_dict (Lightning-AI/pytorch-lightning#7282): the weights do not fit, not the optimizer
    ("RuntimeError: Error(s) in loading state_dict for BoringModel:\n"
     "        size mismatch for layer.weight: copying a param with shape torch.Size([2, 32]) from checkpoint, the shape "
     "in current model is torch.Size([1]).\n", "ckpt-optimizer-groups-mismatch"),
    # torch.distributed.checkpoint's planner on an FSDP2 optimizer (huggingface/accelerate#3971): a key of the saved
    # state, not the optimizer's groups
    ("RuntimeError: Missing key in checkpoint state_dict: optimizer.state.0.step.\n", "ckpt-optimizer-groups-mismatch"),
    # DeepSpeed's ZeRO optimizer saved at another data-parallel size: world-size's own answer
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP world size of 32 but the "
     "current world size is 128. Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is "
     "not currently supported.\n", "ckpt-optimizer-groups-mismatch"),
    # os.makedirs without exist_ok: a directory that exists (a rerun into the same output), not a race
    ("  File \"train.py\", line 41, in main\n"
     "    os.makedirs(args.output_dir)\n"
     "  File \"/usr/lib/python3.8/os.py\", line 223, in makedirs\n"
     "    mkdir(name, mode)\n"
     "FileExistsError: [Errno 17] File exists: 'output'\n", "ckpt-dir-exists-race"),
    # NVIDIA/DeepLearningExamples#1092: each node's rank 0 updating the same symlink, os.symlink's EEXIST
    ("  File \"train.py\", line 229, in save_checkpoint\n"
     "    print(\"Updating symlink\", symlink_dst, \"to point to\", symlink_src)\n"
     "FileExistsError: [Errno 17] File exists: 'checkpoint_Tacotron2_0.pt' -> 'output/checkpoint_Tacotron2_last.pt'\n",
     "ckpt-dir-exists-race"),
    # exist_ok=True, then another error of the same call: a permission, not EEXIST
    ("    os.makedirs(save_dir, exist_ok=True)\n"
     "  File \"/usr/lib/python3.10/os.py\", line 225, in makedirs\n"
     "    mkdir(name, mode)\n"
     "PermissionError: [Errno 13] Permission denied: '/shared/ckpt'\n", "ckpt-dir-exists-race"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_assert_alone_stays_not_shared():
    assert sig("多机多卡场景下resume_from_checkpoint，报错assert len(self.ckpt_list) > 0\n") == "ckpt-not-shared"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
    # the directory race passes on a rerun: translated, and a restart offered
    race = next(s for s in explain.SIGNATURES if s.name == "ckpt-dir-exists-race")
    assert race.cause in FAILURES_ZH and race.fix in FAILURES_ZH
    assert race.retry
