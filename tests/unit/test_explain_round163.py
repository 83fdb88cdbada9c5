"""Round 163's rules (issue 45, live round: checkpoint save and resume mistakes in a user's own DeepSpeed or torch
script, run for real on this release's torch 2.13 and DeepSpeed 0.19.8): ds-save-ckpt-not-all-ranks reads a collective's
timeout raised inside DeepSpeed's save_checkpoint (engine.py: every rank must call it); torch-load-directory reads
torch.load's _open_file given a directory (serialization.py, EISDIR); ckpt-whole-dict-as-state-dict reads
load_state_dict's unexpected keys that are a whole checkpoint's top-level keys (DeepSpeed's model-states file, a
script's own {"model_state_dict", "optimizer_state_dict", "epoch"}); optim-state-other-optimizer reads a KeyError where a
torch optimizer reads its own hyperparameter or buffer (sgd.py, adam.py...) after another optimizer's state was loaded;
zero-to-fp32-not-zero reads zero_to_fp32's parse_model_states on a checkpoint saved without ZeRO. Second wordings
(other versions' and callers' words than the live cases') and near misses, other components' text with like words
that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-save-ckpt-not-all-ranks", "torch-load-directory", "ckpt-whole-dict-as-state-dict",
       "optim-state-other-optimizer", "zero-to-fp32-not-zero")


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW)
    # widened, not new: the model-state files missing also name a checkpoint saved at another ZeRO stage
    assert "another ZeRO stage" in by_name["ckpt-model-states-missing"].cause
    translated_and_final(("ckpt-model-states-missing",))


@pytest.mark.parametrize("text", [
    # an older DeepSpeed and torch 1.13 (conda's gloo path), no rank prefixes: the barrier after rank 0's makedirs
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 310, in <module>\n'
     "    engine.save_checkpoint(args.save_dir, tag=f\"epoch{epoch}\")\n"
     '  File "/opt/conda/lib/python3.9/site-packages/deepspeed/runtime/engine.py", line 3095, in save_checkpoint\n'
     "    dist.barrier()\n"
     '  File "/opt/conda/lib/python3.9/site-packages/deepspeed/comm/comm.py", line 127, in log_wrapper\n'
     "    return func(*args, **kwargs)\n"
     '  File "/opt/conda/lib/python3.9/site-packages/deepspeed/comm/comm.py", line 469, in barrier\n'
     "    return cdb.barrier(group=group, async_op=async_op, device_ids=device_ids)\n"
     '  File "/opt/conda/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 3145, in barrier\n'
     "    work.wait()\n"
     "RuntimeError: [/opt/conda/conda-bld/pytorch_1670525541990/work/third_party/gloo/gloo/transport/tcp/"
     "unbound_buffer.cc:84] Timed out waiting 1800000ms for recv operation to complete\n"),
    # the other collective save_checkpoint makes: the tag's all_reduce under checkpoint.tag_validation (another caller)
    ("[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py\", line 3261, in "
     "save_checkpoint\n"
     "[rank0]:     self._checkpoint_tag_validation(tag)\n"
     "[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py\", line 3212, in "
     "_checkpoint_tag_validation\n"
     "[rank0]:     dist.all_reduce(max_bhash, op=dist.ReduceOp.MAX)\n"
     "[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 2501, "
     "in all_reduce\n"
     "[rank0]:     work.wait()\n"
     "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 600000ms "
     "for recv operation to complete\n"),
])
def test_save_checkpoint_on_some_ranks(text):
    assert sig(text) == "ds-save-ckpt-not-all-ranks"


@pytest.mark.parametrize("text", [
    # the same timeout in the training step's gradient all_reduce, no save_checkpoint frame: the generic timeout
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1963, in allreduce_bucket\n'
     "    dist.all_reduce(tensor_to_allreduce, group=dp_group)\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for "
     "recv operation to complete\n"),
    # save_checkpoint failing for another reason: the disk full under torch.save (not a collective's timeout)
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 3120, in save_checkpoint\n'
     "    self._save_checkpoint(save_dir, tag, client_state=client_state)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 441, in save\n'
     "    with _open_zipfile_writer(f) as opened_zipfile:\n"
     "RuntimeError: [enforce fail at inline_container.cc:337] . unexpected pos 1245708288 vs 1245708176\n"),
    # the HF Trainer's own _save_checkpoint frame (no DeepSpeed engine frame), a timeout of its barrier
    ('  File "/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", line 2354, in _save_checkpoint\n'
     "    self.accelerator.wait_for_everyone()\n"
     '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 3703, in barrier\n'
     "    work.wait()\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for "
     "recv operation to complete\n"),
])
def test_near_misses_are_not_save_checkpoint_on_some_ranks(text):
    assert sig(text) != "ds-save-ckpt-not-all-ranks"


@pytest.mark.parametrize("text", [
    # torch 1.x's _open_file (super(_open_file, self)), a Lightning checkpoints/ directory (facebookresearch/fastMRI#83)
    ('    return _open_file(name_or_buffer, mode)\n'
     '  File "/home/user/anaconda3/lib/python3.8/site-packages/torch/serialization.py", line 210, in __init__\n'
     "    super(_open_file, self).__init__(open(name, mode))\n"
     "IsADirectoryError: [Errno 21] Is a directory: '/home/user/experiments/lightning_logs/version_12/checkpoints/'\n"),
    # torch 2.x's words, an unzipped checkpoint archive (Mohinta2892/catena#24)
    ('  File "/home/tom/.local/lib/python3.10/site-packages/torch/serialization.py", line 468, in _open_file_like\n'
     "    return _open_file(name_or_buffer, mode)\n"
     '  File "/home/tom/.local/lib/python3.10/site-packages/torch/serialization.py", line 449, in __init__\n'
     "    super().__init__(open(name, mode))\n"
     "IsADirectoryError: [Errno 21] Is a directory: '/home/tom/lsd_checkpoints/run_1/model_checkpoint_300000/data'\n"),
])
def test_torch_load_of_a_directory(text):
    assert sig(text) == "torch-load-directory"


@pytest.mark.parametrize("text", [
    # a script's own open() of a directory (its data path), not torch.load's
    ('  File "/workspace/prepare.py", line 14, in read_corpus\n'
     "    with open(args.train_file, encoding=\"utf-8\") as f:\n"
     "IsADirectoryError: [Errno 21] Is a directory: '/data/corpus'\n"),
    # torch.load of a path that does not exist at all (file-missing's, not a directory)
    ('  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 449, in __init__\n'
     "    super().__init__(open(name, mode))\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/best.pt'\n"),
])
def test_near_misses_are_not_torch_load_of_a_directory(text):
    assert sig(text) != "torch-load-directory"


@pytest.mark.parametrize("text", [
    # a script's own torch.save({...}) loaded whole (ohhhyeahhh/SiamCAR#95)
    ("RuntimeError: Error(s) in loading state_dict for ModelBuilder:\n"
     '\tMissing key(s) in state_dict: "backbone.conv1.weight", "backbone.bn1.weight". \n'
     '\tUnexpected key(s) in state_dict: "epoch", "optimizer", "state_dict". \n'),
    # a GAN's generator saved under its own key (adymaharana/VLCStoryGan#11)
    ("RuntimeError: Error(s) in loading state_dict for StoryMarttGAN:\n"
     '\tMissing key(s) in state_dict: "recurrent.weight_ih", "recurrent.weight_hh". \n'
     '\tUnexpected key(s) in state_dict: "epoch", "netG_state_dict", "optimizer_state_dict". \n'),
    # torch before 0.4: the first unexpected key alone (starimeL/PytorchConverter#16)
    ('  File "/home/user/pytorch_env/lib/python3.6/site-packages/torch/nn/modules/module.py", line 355, in '
     "load_state_dict\n"
     "    .format(name))\n"
     "KeyError: 'unexpected key \"epoch\" in state_dict'\n"),
])
def test_whole_checkpoint_dict_given_to_load_state_dict(text):
    assert sig(text) == "ckpt-whole-dict-as-state-dict"


@pytest.mark.parametrize("text", [
    # an optimizer's state_dict loaded into the model (s6juncheng/BERTMHC#2): another mistake, no weights key
    ("RuntimeError: Error(s) in loading state_dict for BERTMHC:\n"
     '\tMissing key(s) in state_dict: "bert.embeddings.word_embeddings.weight". \n'
     '\tUnexpected key(s) in state_dict: "state", "param_groups". \n'),
    # DDP's module. prefix: parameter names with dots, ckpt-model-mismatch's
    ("RuntimeError: Error(s) in loading state_dict for ResNet:\n"
     '\tMissing key(s) in state_dict: "conv1.weight", "bn1.weight". \n'
     '\tUnexpected key(s) in state_dict: "module.conv1.weight", "module.bn1.weight", "module.optimizer.step". \n'),
])
def test_near_misses_are_not_whole_checkpoint_dict(text):
    assert sig(text) != "ckpt-whole-dict-as-state-dict"


@pytest.mark.parametrize("text", [
    # torch 0.4's SGD after an Adam checkpoint (pytorch/pytorch#7499)
    ('  File "/usr/lib/python3.6/site-packages/torch/optim/sgd.py", line 84, in step\n'
     "    momentum = group['momentum']\n"
     "KeyError: 'momentum'\n"),
    # torch 1.x's Adam after an SGD checkpoint, on Windows (ultralytics/yolov3#80): a per-parameter buffer
    ('  File "F:\\Anaconda\\anaconda3-5.2.0\\lib\\site-packages\\torch\\optim\\adam.py", line 82, in step\n'
     "    exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']\n"
     "KeyError: 'exp_avg'\n"),
    # torch 2.x's Adam after SGD (its betas), rank-prefixed
    ('[rank1]:   File "/opt/conda/lib/python3.11/site-packages/torch/optim/adam.py", line 236, in step\n'
     '[rank1]:     beta1, beta2 = group["betas"]\n'
     "[rank1]:                    ~~~~~^^^^^^^^^\n"
     "[rank1]: KeyError: 'betas'\n"),
])
def test_optimizer_state_of_another_optimizer(text):
    assert sig(text) == "optim-state-other-optimizer"


@pytest.mark.parametrize("text", [
    # the LR scheduler's own KeyError when resuming without initial_lr (lr_scheduler.py), not an optimizer's
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/optim/lr_scheduler.py", line 41, in __init__\n'
     "    raise KeyError(\"param 'initial_lr' is not specified \"\n"
     "KeyError: \"param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer\"\n"),
    # a checkpoint without the optimizer's key at all (maudzung/SFA3D#48): the script's own dict lookup
    ('  File "train.py", line 132, in main_worker\n'
     "    optimizer.load_state_dict(utils_state_dict['optimizer'])\n"
     "KeyError: 'optimizer'\n"),
    # Optimizer.load_state_dict given a scheduler's state (bl0/moco#8): optimizer.py's own lookup, another mistake
    ('  File "/home/anaconda3/envs/dl/lib/python3.7/site-packages/torch/optim/optimizer.py", line 108, in '
     "load_state_dict\n"
     "    saved_groups = state_dict['param_groups']\n"
     "KeyError: 'param_groups'\n"),
])
def test_near_misses_are_not_optimizer_state_of_another_optimizer(text):
    assert sig(text) != "optim-state-other-optimizer"


@pytest.mark.parametrize("text", [
    # the zero_to_fp32.py script copied into the checkpoint folder, a ZeRO-0 run's checkpoint
    ("Processing zero checkpoint './global_step2000'\n"
     "Traceback (most recent call last):\n"
     '  File "zero_to_fp32.py", line 601, in <module>\n'
     "    convert_zero_checkpoint_to_fp32_state_dict(args.checkpoint_dir,\n"
     '  File "zero_to_fp32.py", line 205, in _get_fp32_state_dict_from_zero_checkpoint\n'
     "    zero_model_states = parse_model_states(model_files)\n"
     '  File "zero_to_fp32.py", line 132, in parse_model_states\n'
     "    for s in param_shapes:\n"
     "TypeError: 'NoneType' object is not iterable\n"),
    # parse_optim_states' own words for an optimizer file without zero_stage (deepspeed/utils/zero_to_fp32.py)
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/utils/zero_to_fp32.py", line 188, in '
     "parse_optim_states\n"
     '    raise ValueError(f"{files[0]} is not a zero checkpoint")\n'
     "ValueError: ./ckpt/global_step500/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt is not a zero checkpoint\n"),
])
def test_zero_to_fp32_on_a_checkpoint_without_zero(text):
    assert sig(text) == "zero-to-fp32-not-zero"


@pytest.mark.parametrize("text", [
    # the tag directory given without `latest` (zero-ckpt-dir's)
    ('  File "zero_to_fp32.py", line 505, in get_fp32_state_dict_from_zero_checkpoint\n'
     '    raise ValueError(f"Unable to find \'latest\' file at {latest_path}")\n'
     "ValueError: Unable to find 'latest' file at ./global_step2000/latest\n"),
    # a script's own loop over None shapes, outside zero_to_fp32
    ('  File "/workspace/export.py", line 40, in collect\n'
     "    for s in param_shapes:\n"
     "TypeError: 'NoneType' object is not iterable\n"),
])
def test_near_misses_are_not_zero_to_fp32_without_zero(text):
    assert sig(text) != "zero-to-fp32-not-zero"
