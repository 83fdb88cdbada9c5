"""Round 29's rules (issue 45), from threads where an answer established the cause (sigworld.py): Gloo refusing to
pair an IPv4 address with an IPv6 one, and DeepSpeed's batch-size check made while it counts a world of one process:
a second wording of each, in another version's or another caller's words than the corpus case it was written from,
and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigworld import WORLD_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # the other rank's side of the same pair (IPv6 here, IPv4 there), prefixed by torchrun, pytorch/pytorch#135355
    ("[rank1]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] "
     "ss1.ss_family == ss2.ss_family. 10 vs 2\n", "ip-family-mismatch"),
    # Gloo's later Device::isInitiator, another line of device.cc, as a C++ what() torch rethrows
    ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
     "  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:327] ss1.ss_family == "
     "ss2.ss_family. 2 vs 10\n", "ip-family-mismatch"),
    # DeepSpeed's check with another micro batch, under torchrun's rank prefix (DeepSpeed#6914's words)
    ("[rank0]: AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu "
     "* gradient_acc_step * world_size 8 != 2 * 1 * 1 \n", "ds-world-size-one"),
    # the same check inside a rich traceback box, the numbers wrapped over lines (starcoder#77's words)
    ("AssertionError: Check batch related parameters. train_batch_size is not\nequal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 64 != 4 *\n8 * 1\n", "ds-world-size-one"),
    # DeepSpeed before #1734 printed no space before the numbers
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size16 != 1 * 8 * 1\n", "ds-world-size-one"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # Gloo's other enforce failures on the same device.cc: an interface it cannot find, and a socket of an unknown family
    ("RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: "
     "^lo\n", "ip-family-mismatch"),
    ("OSError: [Errno 97] Address family not supported by protocol\n", "ip-family-mismatch"),
    # a world of several processes whose numbers do not add up is the batch check's own answer
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 256 != 2 * 18 * 7\n", "ds-world-size-one"),
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 256 != 1 * 16 * 16\n", "ds-world-size-one"),
    # dscluster's own config check in its own words
    ("error: train_batch_size 16 != train_micro_batch_size_per_gpu 1 x gradient_accumulation_steps 8 x world size 1\n",
     "ds-world-size-one"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
               "gradient_acc_step * world_size 256 != 2 * 18 * 7\n") == "ds-batch-assert"
    assert sig("RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find "
               "address for: ^lo\n") == "nccl-no-interface"
    zh = FAILURES_ZH
    for s in WORLD_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("ss1.ss_family == ss2.ss_family. 2 vs 10\n").retry is False
