"""Failure signatures of convolution models and image tensors, from round 206 of issue 45 (live: broken users' scripts
run for real on torch 2.13 under DDP, CPU and gloo): an image batch in numpy's/PIL's (H, W, C) layout or of another
colour mode than the first convolution's in_channels, a feature map pooled or convolved below its kernel's size or
reflect-padded beyond its size, F.interpolate given one image without its batch dimension, a view of a channels_last
(or permuted) feature map, a U-Net's skip connection one pixel off its upsampled map, globally pooled features given
to a Linear without a flatten, and PIL images given to the DataLoader's default collate. Each pattern is the wording
of torch's own check (ATen's convolution, pooling, padding, cat, view and linear checks, torch/nn/functional.py's
interpolate, torch/utils/data/_utils/collate.py), never one log's. sigrounds.py places this table with the other
round tables, after the normalization one (the normalization table's BatchNorm channel checks and the libraries'
linear-shape-mismatch stay theirs: this table reads only the words named here, or is placed before the general one it
narrows)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

_WEIGHT = r"weight of size \[\d+(?:, \d+){2,4}\], expected input\["


def _not_one_apart(m: re.Match, texts: Iterable[str]) -> bool:
    """A concatenation's two sizes one apart (the floor of a pooling of an odd side, then an upsampling by 2): else
    another cause."""
    return abs(int(m.group("a")) - int(m.group("b"))) != 1


def _not_pooled_rows(m: re.Match, texts: Iterable[str]) -> bool:
    """A (N, C, 1, 1) input flattened by the matrix product into N*C rows of one feature: its rows a multiple of the
    layer's in_features (C). Else another cause (a one-column input)."""
    rows, inner = int(m.group("rows")), int(m.group("inner"))
    return rows < inner or rows % inner != 0


VISION_SIGNATURES: tuple[Signature, ...] = (
    # ATen's convolution check (aten/src/ATen/native/Convolution.cpp check_shape_forward): "Given groups=1, weight of
    # size [16, 3, 3, 3], expected input[8, 32, 32, 3] to have 3 channels, but got 32 channels instead". Here the
    # input's LAST dimension is the channel count the layer expects: the channels are last, not in dimension 1.
    _sig("conv-input-channels-last",
         _WEIGHT + r"\d+(?:, \d+){0,3}, (?P<c>\d+)\] to have (?P=c) channels, but got (?!(?P=c) )\d+ channels",
         "A convolution got its input with the channels in the last dimension (channels-last: (N, H, W, C) images as "
         "numpy and PIL lay them out, np.array(img) / torch.from_numpy without a permute, or (N, L, C) sequences for "
         "Conv1d), while torch's convolutions take them in dimension 1 ((N, C, H, W), (N, C, L)): the message's input "
         "shape ends with the channel count the layer expects and it reads another dimension as the channels.",
         "Put the channels first where the tensor is made: torch.from_numpy(np.array(img)).permute(2, 0, 1) for one "
         "image (x.permute(0, 3, 1, 2) for a batch, x.transpose(1, 2) for (N, L, C) sequences), as torchvision's "
         "ToTensor does; memory_format=torch.channels_last changes only the strides, never the shape. A restart "
         "fails the same way.", retry=False),
    _sig("conv-input-colour-mode",
         _WEIGHT + r"\d+(?:, \d+){1,4}\] to have (?:3 channels, but got [14] channels|1 channels, but got [34] "
         r"channels|4 channels, but got [13] channels)",
         "An image batch's colour mode does not match the first convolution's in_channels (the message gives both): "
         "grayscale images (PIL mode \"L\", one channel) given to a model whose stem takes RGB (3), RGB or RGBA (4: "
         "PNGs with transparency) images to a model built for grayscale, or RGBA to an RGB stem: PIL's Image.open "
         "keeps each file's own mode.",
         "Convert every image to the mode the model takes where it is loaded: Image.open(p).convert(\"RGB\") (or "
         ".convert(\"L\") for a grayscale model), or build the stem with the data's channels (nn.Conv2d(1, ...)); to "
         "reuse an RGB model on grayscale, repeat the channel (x.expand(-1, 3, -1, -1)). A restart fails the same "
         "way.", retry=False),
    # ATen's pooling shape check (aten/src/ATen/native/Pool.h pool2d_shape_check / pool3d: "Given input size:
    # (64x1x1). Calculated output size: (64x0x0). Output size is too small") and the convolution's (Convolution.cpp:
    # "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than
    # actual input size").
    _sig("feature-map-too-small",
         r"Calculated output size: \([\dx]+\)\. Output size is too small|Kernel size can't be greater than actual "
         r"input size",
         "A pooling or convolution layer got a feature map smaller than its kernel (the message gives the sizes): "
         "the images are smaller than the network was designed for, so its downsampling stages (MaxPool2d(2), "
         "stride-2 convolutions) halve them down to 1x1 or 0 before the last stage: a network for 224x224 photos "
         "given 28x28 or 32x32 images, or a model's input resized or cropped smaller than its config.",
         "Give the network images of the size it was built for (resize in the dataset), or fit the network to the "
         "images: fewer downsampling stages (or no pooling in the last ones), padding=1 in the pooling, and an "
         "nn.AdaptiveAvgPool2d before the classifier so it does not depend on the image size. A restart fails the "
         "same way.", retry=False),
    # ATen's reflection padding check (aten/src/ATen/native/ReflectionPad.cpp: "Argument #4: Padding size should be
    # less than the corresponding input dimension, but got: padding (2, 2) at dimension 3 of input [2, 8, 2, 2]"),
    # reached from Conv2d(padding_mode="reflect") or F.pad(mode="reflect").
    _sig("reflect-padding-too-large",
         r"Padding size should be less than the corresponding input dimension, but got: padding \(\d+, \d+\) at "
         r"dimension \d+ of input",
         "Reflect padding (a convolution built with padding_mode=\"reflect\", or F.pad(..., mode=\"reflect\")) got a "
         "feature map no larger than its padding (the message gives both): reflection mirrors the map's inner "
         "pixels, so each side must be larger than the padding. Most often a deep layer's map after several "
         "stride-2 downsamplings of small images or crops (a 5x5 kernel's padding 2 on a 2x2 map).",
         "Train on larger images or crops (or downsample fewer times), use a smaller kernel (padding) in the deep "
         "layers, or pad them with padding_mode=\"replicate\" or \"zeros\", which take any size. A restart fails the "
         "same way.", retry=False),
    # torch/nn/functional.py interpolate's checks: "Input and output must have the same number of spatial dimensions,
    # but got input with spatial dimensions of [32] and output size of (64, 64). Please provide input tensor in (N, C,
    # d1, d2, ...,dK) format" (torch 1.x-2.x, a size=) and "Got 3D input, but bilinear mode needs 4D input" (a
    # scale_factor=, and older releases).
    _sig("interpolate-input-dims",
         r"Input and output must have the same number of spatial dimensions, but got input with spatial dimensions "
         r"of \[[\d, ]*\] and output size of|Got [345]D input, but (?:bilinear|bicubic|trilinear) mode needs [45]D "
         r"input",
         "F.interpolate (nn.Upsample) was given a tensor without the batch dimension: it takes (N, C, H, W) for "
         "bilinear/bicubic (N, C, D, H, W for trilinear) and reads dimension 0 as the batch and 1 as the channels, so "
         "one (C, H, W) image, as a Dataset resizes it, leaves one spatial dimension against the two of size=(H, W) "
         "or the mode.",
         "Give one image a batch dimension for the call and take it off after: F.interpolate(img[None], size=(H, W), "
         "mode=\"bilinear\", align_corners=False)[0] (unsqueeze(0) / squeeze(0)), or resize with PIL (img.resize) "
         "before converting to a tensor. A restart fails the same way.", retry=False),
    # ATen's view check (aten/src/ATen/native/TensorShape.cpp, computeStride: "view size is not compatible with input
    # tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...)
    # instead.").
    _sig("view-non-contiguous",
         r"view size is not compatible with input tensor's size and stride \(at least one dimension spans across two "
         r"contiguous subspaces\)",
         "Tensor.view was called on a tensor whose memory is not laid out in its dimensions' order, which view cannot "
         "reinterpret without a copy: a feature map in memory_format=torch.channels_last (a model and batch moved to "
         "channels_last, then x.view(x.size(0), -1) to flatten), or a tensor after permute/transpose (attention's "
         "heads, an image's HWC to CHW) viewed as another shape.",
         "Use x.reshape(...) (or x.flatten(1) / nn.Flatten() before a Linear), which copies only where it must, or "
         "x.contiguous().view(...); with channels_last, flatten with reshape or flatten, never view. A restart "
         "fails the same way.", retry=False),
    # ATen's cat check (aten/src/ATen/native/TensorShape.cpp check_cat_shape_except_dim: "Sizes of tensors must match
    # except in dimension 1. Expected size 14 but got size 15 for tensor number 1 in the list."): feature maps joined
    # along the channels, one pixel apart (a pooling's floor of an odd side, then an upsampling by 2).
    _sig("skip-connection-size-mismatch",
         r"Sizes of tensors must match except in dimension 1\. Expected size (?P<a>\d+) but got size (?P<b>\d+) for "
         r"tensor number \d+ in the list",
         "Two feature maps joined along the channels (torch.cat(..., dim=1): a U-Net's or FPN's skip connection) "
         "differ by one pixel (the message gives both sizes): the input's side is not divisible by 2 at every level, "
         "so a pooling or stride-2 convolution rounded an odd side down (15 -> 7) and the upsampling by 2 gives one "
         "less (14) than the skip connection it is joined to.",
         "Give the network inputs whose sides are divisible by 2**depth (resize, crop or pad the images: e.g. 64 for "
         "three levels), or pad/crop the upsampled map to the skip connection's size before the cat (F.pad by the "
         "difference, or F.interpolate(x, size=skip.shape[2:])). A restart fails the same way.", retry=False,
         aside_if=_not_one_apart),
    # addmm's check (aten/src/ATen/native/LinearAlgebra.cpp) on a (N, C, 1, 1) input: "mat1 and mat2 shapes cannot be
    # multiplied (4096x1 and 512x10)". Before linear-shape-mismatch (siglibs), which reads every such shape pair.
    _sig("linear-input-not-flattened",
         r"mat1 and mat2 shapes cannot be multiplied \((?P<rows>\d+)x1 and (?P<inner>(?![01]x)\d+)x(?!0\))\d+\)",
         "A Linear layer got an input whose last dimension is 1 against the layer's C inputs (the message: N*C rows "
         "of 1 feature, then C): most often globally pooled features given to it without a flatten, as "
         "nn.AdaptiveAvgPool2d(1) (or a global pooling) leaves them (N, C, 1, 1) and a Linear multiplies the last "
         "dimension; otherwise a one-column input (N, 1) given to a layer built for C features.",
         "Flatten between the pooling and the Linear: x = torch.flatten(x, 1) (or x.flatten(1)) in forward, "
         "nn.Flatten() in an nn.Sequential; for a one-column input, build the layer with in_features=1 or give it "
         "the C features it expects. A restart fails the same way.", retry=False, aside_if=_not_pooled_rows),
    # torch/utils/data/_utils/collate.py's default_collate on an item it has no rule for: "default_collate: batch must
    # contain tensors, numpy arrays, numbers, dicts or lists; found <class 'PIL.Image.Image'>" (also PIL's format
    # subclasses: PngImageFile, JpegImageFile).
    _sig("collate-pil-images",
         r"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class "
         r"'PIL\.\w+\.\w*Image\w*'>",
         "The Dataset returns PIL images and the DataLoader's default collate cannot batch them: nothing converted "
         "each image to a tensor (torchvision's transforms.ToTensor() / PILToTensor, left out of the transform, or a "
         "transform that only resizes or crops with PIL).",
         "Convert each image in the Dataset: torch.from_numpy(np.array(img, dtype=np.float32) / 255).permute(2, 0, 1) "
         "(or torchvision's transforms.ToTensor() at the end of the transform), after resizing all images to one size; "
         "or pass a collate_fn that does it. A restart fails the same way.", retry=False),
    # A uint8 input to a float32 layer: ATen's convolution check (Convolution.cpp: "Input type (unsigned char) and bias
    # type (float) should be the same"; a bias-free one's "expected scalar type Byte but found Float"), its older
    # "Input type (torch.ByteTensor) and weight type (torch.FloatTensor)", and addmm's "mat1 and mat2 must have the same
    # dtype, but got Byte and Float". Before dtype-mismatch (siglibs), which reads half-precision mixes.
    _sig("image-uint8-input",
         r"Input type \(unsigned char\) and (?:bias|weight) type \(float\) should be the same|Input type "
         r"\(torch\.(?:cuda\.)?ByteTensor\) and weight type \(torch\.(?:cuda\.)?FloatTensor\)|expected scalar type "
         r"Byte but found Float|mat1 and mat2 must have the same dtype, but got Byte and Float",
         "The model got a uint8 tensor (raw 0-255 pixels, as np.array(img) of a PIL image or an image file's decoded "
         "bytes give them) where its float32 weights need float input: the image was converted to a tensor without "
         "converting its dtype (torch.from_numpy(np.array(img)) keeps uint8).",
         "Convert the pixels to float and scale them where the image becomes a tensor: "
         "torch.from_numpy(np.array(img)).permute(2, 0, 1).float() / 255 (then normalize with the model's mean and "
         "std), as torchvision's ToTensor does. A restart fails the same way.", retry=False),
)
