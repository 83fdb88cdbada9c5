"""Round 44's rules (issue 45), numerics that end a run (signumerics.py, sigmessages.py): a training loop's own check
that the loss diverged, a rank's NaN gradients found before they are reduced, sampling from logits that overflowed
float16, and fairseq's minimum loss scale: a second wording of each, in another version's or another caller's words
than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.signumerics import NUMERIC_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # detectron2's newer trainer, the loss_dict as floats, in a rank's prefixed traceback
    ("[rank1]:   File \"detectron2/engine/train_loop.py\", line 339, in write_metrics\n"
     "[rank1]: FloatingPointError: Loss became infinite or NaN at iteration=0!\n"
     "loss_dict = {'loss_cls': 157.09, 'loss_box_reg': inf}\n", "training-diverged"),
    # the MAE/DeiT loop's print before sys.exit(1), under torchrun
    ("Epoch: [12]  [ 200/1251]  lr: 0.001500  loss: 0.6931 (0.6990)\nLoss is nan, stopping training\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 811)\n",
     "training-diverged"),
    # Megatron-Core's older wording (Pai-Megatron-Patch, 2023)
    ("AssertionError: Rank 3: found NaN in local grad norm in backwards pass. Device: 3, node: host-17\n",
     "nan-gradients"),
    # torch's clip_grad_norm_ with error_if_nonfinite=True
    ("RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
     "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
     "`error_if_nonfinite=False`\n", "nan-gradients"),
    # the CUDA kernel's wording, without the backquotes some releases print
    ("RuntimeError: probability tensor contains either inf, nan or element < 0\n", "fp16-overflow-sampling"),
    # fairseq's own exception, with its advice
    ("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the "
     "learning rate, using gradient clipping or increasing the batch size.\n", "loss-scale-minimum"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a NeMo warning: the run goes on (it ends at the next evaluation), no check has stopped it yet
    ("WARNING: Loss is NaN or inf, will terminate at next eval step\n", "training-diverged"),
    # a progress line with a nan loss is no framework's refusal
    ("[08/21 15:48:06 d2.utils.events]:  eta: 2:36:14  iter: 19  total_loss: nan  loss_cls: nan\n",
     "training-diverged"),
    # Megatron's iteration line with a nan grad norm: a log line, not the check's error
    (" iteration     5426/  250000 | loss scale: 1.0 | grad norm: nan | number of nan iterations:   0 |\n",
     "nan-gradients"),
    # NumPy's sampling with bad probabilities is another library's check
    ("ValueError: probabilities contain NaN\n", "fp16-overflow-sampling"),
    # fairseq's note while the scale still falls is not the end of the run
    ("NOTE: overflow detected, setting loss scale to: 0.00048828125\n", "loss-scale-minimum"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n") \
        == "loss-scale-minimum"
    assert sig("RuntimeError: Function 'PowBackward0' returned nan values in its 0th output.\n") == "autograd-nan"
    for s in NUMERIC_SIGNATURES:
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH, s.name
