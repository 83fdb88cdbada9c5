"""Failure signatures of code written for transformers 4.x run with transformers 5.x (issue 45; live round 170): the
names later releases removed or renamed, in Python's own words for the call or import that used them, read only where
the words name transformers' class (TrainingArguments and its subclasses, the Trainer and its subclasses, `from
'transformers'`). Written from the installed transformers 5.23 (training_args.py's TrainingArguments fields,
trainer.py's Trainer.__init__, training_step and compute_loss, __init__.py's names). sigmessages.py places this table
right before sigsetup.py's, whose import-name reads any keyword these classes do not take (the generic answer). Each
is deterministic: none lets a restart help."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

# TrainingArguments fields of transformers 4.x that 5.x no longer has (training_args.py 5.23 against 4.57), only those
# there since 3.x or before, so the TypeError is never a transformers too old for them: include_inputs_for_metrics,
# save_safetensors, use_mps_device, torchdynamo, fsdp_min_num_params... (4.x additions, gone in 5.x) stay
# import-name's, whose fix goes either way. dispatch_batches and split_batches are sigmessages.OTHER_VERSION's.
_REMOVED_ARGS = (r"evaluation_strategy|no_cuda|overwrite_output_dir|per_gpu_(?:train|eval)_batch_size|logging_dir|"
                 r"tpu_num_cores|past_index")
# Python 3.10+ names the class (`TrainingArguments.__init__()`, a subclass: Seq2SeqTrainingArguments, TRL's
# SFTConfig, a user's dataclass); Python <= 3.9 says only `__init__()`, so there the code line above it must make one
# (`TrainingArguments(`, `...Config(`).
_BARE_INIT = r"\n(?:[^\n]*[~^][ \t~^]*\n)?(?:\[rank\d+\]: ?)?(?:TypeError: )?__init__\(\)"  # under 3.11's carets
_ARGS_INIT = (r"(?:(?:TrainingArguments|Config)\.__init__\(\)|" + then(r"TrainingArguments\(|Config\(", _BARE_INIT,
                                                                        r"[^\n]") + ")")
# The same for the Trainer (trainer.py's Trainer.__init__; Seq2SeqTrainer's, TRL's SFTTrainer/DPOTrainer, a user's).
_TRAINER_INIT = r"(?:Trainer\.__init__\(\)|" + then(r"Trainer\(", _BARE_INIT, r"[^\n]") + ")"
# Names transformers' top level had in 4.x and later releases removed (all there since 2.x or 3.x, so an older
# transformers never lacks them), as Python's ImportError says them (`from transformers import AutoModelWithLMHead`;
# the lazy module's AttributeError becomes it) or the lazy module's own AttributeError (`transformers.
# AutoModelWithLMHead`: `module transformers has no attribute AutoModelWithLMHead`, no quotes). transformers.AdamW
# (gone too) stays import-name's: round 161's live case reads it so. Modules are not read: `No module named
# 'transformers.deepspeed'` is a transformers too new (4.46+) or too old (before 4.6), and the log does not say which
# (the failure corpus holds both); transformers.generation_utils and transformers.onnx likewise.
_REMOVED_NAMES = (r"AutoModelWithLMHead|TFAutoModelWithLMHead|is_torch_tpu_available|TextDataset|"
                  r"LineByLineTextDataset|TextDatasetForNextSentencePrediction|top_k_top_p_filtering")

HF5_SIGNATURES: tuple[Signature, ...] = (
    # Round 170: a TrainingArguments argument of 4.x that later releases removed (the dataclass's own TypeError).
    # As a command-line flag, hf_argparser.py's parse_args_into_dataclasses refuses it: "Some specified arguments are
    # not used by the HfArgumentParser: [...]"; as a key of parse_dict/parse_json_file/parse_yaml_file: "Some keys are
    # not used by the HfArgumentParser: [...]" (a removed name among them; a flag of the script's own is another case).
    _sig("hf-trainingargs-removed", _ARGS_INIT + r" got an unexpected keyword argument '(?:" + _REMOVED_ARGS + r")'|"
         r"not used by the HfArgumentParser: \[[^\]\n]{0,400}?'(?:--)?(?:" + _REMOVED_ARGS + r")'",
         "TrainingArguments got an argument that transformers 5 no longer has: code written for an older transformers, "
         "where it was still accepted (most with a deprecation warning), runs with a newer one (late 4.x or 5.x) that "
         "removed or renamed it (the name in the message).",
         "Write the transformers 5 form: evaluation_strategy -> eval_strategy; no_cuda -> use_cpu=True; "
         "per_gpu_train_batch_size / per_gpu_eval_batch_size -> per_device_train_batch_size / "
         "per_device_eval_batch_size; logging_dir -> the TENSORBOARD_LOGGING_DIR environment variable; "
         "overwrite_output_dir, tpu_num_cores, past_index: delete them (the Trainer writes into an existing "
         "output_dir). Or pin the transformers the code was written for, the same on every node. A restart fails the "
         "same way.",
         retry=False),
    # Round 170: Trainer(tokenizer=...) of 4.x: renamed processing_class in 4.46, the old keyword removed in 5.x.
    _sig("hf-trainer-tokenizer-renamed", _TRAINER_INIT + r" got an unexpected keyword argument 'tokenizer'",
         "The Trainer was given tokenizer=, its transformers 4.x argument: renamed processing_class in transformers "
         "4.46 and removed in 5.x (TRL's trainers did the same), so code written for 4.x fails with transformers 5.",
         "Pass it as processing_class=tokenizer (Trainer(model=..., args=..., processing_class=tokenizer)), and read "
         "trainer.processing_class where the code read trainer.tokenizer; or pin transformers<5 (and the TRL of that "
         "time) for this code, the same on every node. A restart fails the same way.", retry=False),
    # Round 170: a Trainer subclass's compute_loss or training_step with the signature of transformers before 4.46,
    # which the Trainer (trainer.py: `self.training_step(model, inputs, num_items_in_batch)`, `self.compute_loss(
    # model, inputs, num_items_in_batch=num_items_in_batch)`) now calls with num_items_in_batch. Python <= 3.9 drops
    # the class name. Not a model's forward() given the keyword (a model that does not take loss kwargs).
    # training_step's TypeError names no keyword: a class named ...Trainer (Python 3.10+), or the Trainer's own call
    # line above it (PyTorch Lightning 1.x says the same words of a LightningModule given optimizer_idx).
    _sig("hf-trainer-override-signature", r"(?<![\w.])(?:\w+\.)?compute_loss\(\) got an unexpected keyword argument "
         r"'num_items_in_batch'|Trainer\.training_step\(\) takes 3 positional arguments but 4 were given|"
         r"self\.training_step\(model, inputs, num_items_in_batch\)\n(?:[^\n]*[~^][ \t~^]*\n)?[^\n]{0,60}?TypeError: "
         r"training_step\(\) takes 3 positional arguments but 4 were given",
         "A Trainer subclass overrides compute_loss or training_step with the signature of transformers before 4.46: "
         "the Trainer (4.46 and later, 5.x) calls them with one more argument, num_items_in_batch (the batch's token "
         "count, to average the loss over gradient accumulation), which the override does not take. The subclass is "
         "the script's own, or a library's written for an older transformers (an old TRL).",
         "Add the argument to the override and pass it on: def compute_loss(self, model, inputs, return_outputs=False, "
         "num_items_in_batch=None) and def training_step(self, model, inputs, num_items_in_batch=None) (calling "
         "super().training_step(model, inputs, num_items_in_batch)); where the subclass is a library's, upgrade that "
         "library to a release for this transformers, or pin transformers<4.46 for it. A restart fails the same way.",
         retry=False),
    # Round 170: a name of transformers 4.x that later releases removed (AutoModelWithLMHead: deprecated since 4.0,
    # gone in 5.0; is_torch_tpu_available: for is_torch_xla_available; TextDataset: for the datasets library).
    _sig("hf-removed-import", r"cannot import name '(?:" + _REMOVED_NAMES + r")' from[ \n]'transformers'|module "
         r"'?transformers'? has no attribute '?(?:" + _REMOVED_NAMES + r")\b'?",
         "The code imports from transformers a name of transformers 4.x, deprecated there, that later releases "
         "removed (the name in the message; all are gone in transformers 5): code written for an older transformers "
         "runs with a newer one.",
         "Import its replacement: AutoModelWithLMHead -> AutoModelForCausalLM (or AutoModelForMaskedLM, "
         "AutoModelForSeq2SeqLM; TFAutoModelWithLMHead likewise, in PyTorch); is_torch_tpu_available -> "
         "is_torch_xla_available; TextDataset, LineByLineTextDataset, TextDatasetForNextSentencePrediction -> the "
         "datasets library (load_dataset(\"text\", ...) and a tokenizing map); top_k_top_p_filtering -> "
         "TopKLogitsWarper/TopPLogitsWarper or generate's top_k/top_p. Or pin the transformers the code was written "
         "for, the same on every node. A restart fails the same way.", retry=False),
)
