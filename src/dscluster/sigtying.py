"""Failure signatures of weight tying and state_dict surgery in a user's script, from round 218 of issue 45 (live:
broken users' scripts run for real on torch 2.13 under DDP, gloo): a checkpoint's keys cut at the wrong place by the
script's own renaming (a fixed-length slice meant for DDP's 'module.' prefix on keys that have none). The round's other
new failure, a plain tensor (an embedding's transpose, .data, a copy) assigned to a registered parameter to tie it, is
read by sigmodule.py's module-assign-tensor-to-parameter (round 214, whose texts name the tying). Each pattern is the
wording of the component that prints it (nn.Module.load_state_dict), never one log's. sigrounds.py places
this table with the other round tables, before the exception messages' (sigmessages.py, whose ckpt-model-mismatch
reads every load_state_dict report)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# nn.Module.load_state_dict's report (torch/nn/modules/module.py): "\tUnexpected key(s) in state_dict: ...", each key
# quoted; the keys before the one read are skipped a whole key at a time (linear on a line of them).
_UNEXPECTED = r"Unexpected key\(s\) in state_dict: (?:\"[\w.]{1,200}\", ){0,500}?"

TYING_SIGNATURES: tuple[Signature, ...] = (
    # nn.Module.load_state_dict's report with an unexpected key that begins with a dot: no module names a parameter
    # that way, so the script's renaming cut the checkpoint's keys at the wrong place (k[7:] meant for 'module.' on
    # keys without it; k.replace('module', '') leaving the dot).
    _sig("state-dict-keys-cut", _UNEXPECTED + r"\"\.\w[\w.]{0,200}\"",
         "The checkpoint's keys were renamed by the script and cut at the wrong place: load_state_dict found keys "
         "that begin with a dot, which no module's parameter has, beside the model's own keys missing. Most often a "
         "prefix stripped by position (k[7:] or k[len('module.'):] for DDP's 'module.', k.split('.', 1)[1]) from "
         "keys that never had it (a checkpoint saved from the unwrapped model, model.module.state_dict()), or a "
         "replace that left the dot (k.replace('module', '')): the first characters of every real key are gone.",
         "Strip a prefix only where it is: {k.removeprefix('module.'): v for k, v in sd.items()} (or "
         "torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, 'module.')), which leaves other keys "
         "unchanged; print a few keys of the file and of model.state_dict() to see what each has. A restart fails "
         "the same way.", retry=False),
)
