"""Round 206's rules (issue 45, live: convolution models and image tensors): an image batch left in numpy's (H, W, C)
layout (conv-input-channels-last) or in another colour mode than the stem's (conv-input-colour-mode), a network's
pooling stages for larger images (feature-map-too-small), reflect padding on a 2x2 map (reflect-padding-too-large),
F.interpolate of one unbatched image (interpolate-input-dims), a view of a channels_last feature map
(view-non-contiguous), a U-Net's skip connection one pixel off (skip-connection-size-mismatch), pooled features not
flattened before a Linear (linear-input-not-flattened), PIL images to the default collate (collate-pil-images) and
uint8 pixels to a float model (image-uint8-input). The cases' own logs, second wordings and near misses that must stay
off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("conv-input-channels-last", "conv-input-colour-mode", "feature-map-too-small", "reflect-padding-too-large",
       "interpolate-input-dims", "view-non-contiguous", "skip-connection-size-mismatch", "linear-input-not-flattened",
       "collate-pil-images", "image-uint8-input")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-vision-hwc-numpy-image-conv2d", "conv-input-channels-last"),
    ("live-vision-grayscale-png-rgb-stem", "conv-input-colour-mode"),
    ("live-vision-pool-stages-small-images", "feature-map-too-small"),
    ("live-vision-reflect-padding-small-map", "reflect-padding-too-large"),
    ("live-vision-interpolate-unbatched-image", "interpolate-input-dims"),
    ("live-vision-channels-last-view-flatten", "view-non-contiguous"),
    ("live-vision-unet-odd-input-size", "skip-connection-size-mismatch"),
    ("live-vision-pooled-features-not-flattened", "linear-input-not-flattened"),
    ("live-vision-collate-pil-images", "collate-pil-images"),
    ("live-vision-uint8-image-conv", "image-uint8-input"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # Conv1d given (batch, seq, features) sequences
    (_TB + "RuntimeError: Given groups=1, weight of size [32, 12, 3], expected input[8, 128, 12] to have 12 channels, "
     "but got 128 channels instead\n", "conv-input-channels-last"),
    # a depthwise (grouped) convolution given an HWC batch
    (_TB + "RuntimeError: Given groups=3, weight of size [3, 1, 3, 3], expected input[4, 64, 64, 3] to have 3 "
     "channels, but got 64 channels instead\n", "conv-input-channels-last"),
    # RGBA PNGs to an RGB stem
    (_TB + "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[16, 4, 224, 224] to have 3 "
     "channels, but got 4 channels instead\n", "conv-input-colour-mode"),
    # a convolution's kernel larger than the map
    (_TB + "RuntimeError: Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't "
     "be greater than actual input size\n", "feature-map-too-small"),
    # F.pad(mode="reflect") of a 1-D signal
    (_TB + "RuntimeError: Argument #4: Padding size should be less than the corresponding input dimension, but got: "
     "padding (8, 8) at dimension 2 of input [4, 1, 5]\n", "reflect-padding-too-large"),
    # a scale_factor on one image
    (_TB + "NotImplementedError: Got 3D input, but bilinear mode needs 4D input\n", "interpolate-input-dims"),
    # the skip connection first
    (_TB + "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 7 but got size 6 for "
     "tensor number 1 in the list.\n", "skip-connection-size-mismatch"),
    # a 1-D CNN's pooled (N, C, 1) features
    (_TB + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2048x1 and 256x5)\n", "linear-input-not-flattened"),
    # the file's own PIL class
    (_TB + "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class 'PIL.JpegImagePlugin.JpegImageFile'>\n", "collate-pil-images"),
    # a bias-free convolution, a Linear on raw pixels
    (_TB + "RuntimeError: expected scalar type Byte but found Float\n", "image-uint8-input"),
    (_TB + "RuntimeError: mat1 and mat2 must have the same dtype, but got Byte and Float\n", "image-uint8-input"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a convolution built for another channel count (64 vs 128), channels first: neither channels-last nor a colour mode
    (_TB + "RuntimeError: Given groups=1, weight of size [128, 64, 3, 3], expected input[8, 128, 16, 16] to have 64 "
     "channels, but got 128 channels instead\n", "conv-input-channels-last"),
    (_TB + "RuntimeError: Given groups=1, weight of size [128, 64, 3, 3], expected input[8, 128, 16, 16] to have 64 "
     "channels, but got 128 channels instead\n", "conv-input-colour-mode"),
    # a Linear's in_features for another image size (many features), not a missing flatten
    (_TB + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x21632 and 25088x10)\n",
     "linear-input-not-flattened"),
    # one feature against 16 in a batch of 8: rows not a multiple of in_features
    (_TB + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x1 and 16x10)\n", "linear-input-not-flattened"),
    # a cat along dimension 1 of two batches of different sizes
    (_TB + "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 8 but got size 4 for "
     "tensor number 1 in the list.\n", "skip-connection-size-mismatch"),
    # half precision against float32: dtype-mismatch's, not raw pixels
    (_TB + "RuntimeError: Input type (c10::Half) and bias type (float) should be the same\n", "image-uint8-input"),
    # a default collate of a user's own object
    (_TB + "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class '__main__.Sample'>\n", "collate-pil-images"),
])
def test_near_misses(text, name):
    assert sig(text) != name
