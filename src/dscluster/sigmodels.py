"""Failure signatures from the threads of model repositories whose users fine-tune on several GPUs (round 28 of issue
45: ChatGLM, GLM-4, Qwen, their Chinese-language issues): a fine-tuning script written for an older Python refused by
Python 3.11's dataclasses, and a process killed while transformers loads a checkpoint's shards into host memory; and
(round 32) Llama's loader, whose model-parallel shards must match the number of processes. Each
pattern is the wording of the component that prints it (CPython's Lib/dataclasses.py, transformers' modeling_utils.py
progress bar, the shell's and torch elastic's report of a SIGKILL), never one log's. sigmessages.py places this table
with PyTorch's own (sigtorch.py), before the training stack's and the last resorts: more specific than a Python error's
type and than a bare kill (`killed`, which restarts once). The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

MODEL_SIGNATURES: tuple[Signature, ...] = (
    # CPython's dataclasses (Lib/dataclasses.py, _get_field): "mutable default {type(f.default)} for field {f.name} is
    # not allowed: use default_factory". Up to 3.10 it is raised only for a list, dict or set default; since 3.11
    # (python/cpython e029c53, bpo-44674) for any default whose class is unhashable, such as an instance of another
    # dataclass (a TrainingArguments): code that imported on 3.10 fails at import on 3.11+. A list/dict/set default
    # is the code's own mistake on every Python and is left to the exception's type.
    _sig("python-too-new", r"ValueError: mutable default <class '(?!(?:list|dict|set)')[\w.]+'> for field \w+ is not "
         r"allowed: use default_factory",
         "The code was written for Python 3.10 or older and runs on Python 3.11+: since 3.11 a dataclass field's "
         "default must be hashable, so a default that is an instance of another class (a dataclass such as "
         "TrainingArguments) is refused when the module is imported.",
         "Run it with the Python version the code was written for (3.10), or change that field to "
         "field(default_factory=...) in the file the traceback names; every rank fails the same way until then.",
         retry=False),
    # transformers' from_pretrained shows a progress bar "Loading checkpoint shards:  NN%|...| i/n" (modeling_utils.py,
    # logging.tqdm(..., desc="Loading checkpoint shards")) while it reads the shards into host memory; a bar cut
    # before 100% on the same line as the shell's "Killed" or torch elastic's "failed (exitcode: -9)" is a SIGKILL
    # while the weights filled RAM: the kernel's OOM killer.
    _sig("memcg-oom", then(r"Loading checkpoint shards:\s+[1-9]?\d%", r"\bKilled\b|\(exitcode: -9\)"),
         "A process was killed while loading the model's checkpoint shards into host memory: the machine (or the "
         "container's or batch job's memory limit) has less free RAM than the weights need, times the number of "
         "processes on the node that load them at once, and the kernel's OOM killer stopped it.",
         "Give the node more host memory or load less at once: fewer processes per node, a quantized or smaller "
         "model, low_cpu_mem_usage=True, loading straight onto the GPU (device_map to the rank's GPU), or ZeRO-3's "
         "zero.Init; `free -g` while it loads shows it. A restart runs out of memory the same way.", retry=False),
    # Llama's loader (meta-llama/llama: example.py's load() in the first release, llama/generation.py's Llama.build in
    # Llama 2) lists the checkpoint's model-parallel shards, sorted(Path(ckpt_dir).glob("*.pth")), and asserts one
    # process per shard: f"Loading a checkpoint for MP={len(checkpoints)} but world size is {world_size}"; the
    # repositories that copy the loader keep the words. MP=0: no *.pth at all in the directory given.
    _sig("ckpt-files-missing", r"Loading a checkpoint for MP=0 but world size is \w+",
         "The loader found no checkpoint file (*.pth) in the checkpoint directory it was given (MP=0 in its check "
         "that the shards match the processes): the path is wrong or relative to another working directory, the "
         "weights were never downloaded or converted there, or that directory is not on this node.",
         "Point the checkpoint directory (--ckpt_dir) at the folder that holds the consolidated.*.pth files (ls it "
         "on every node), or download the weights there; a restart fails the same way.", retry=False),
    _sig("ckpt-mp-size", r"Loading a checkpoint for MP=[1-9]\d* but world size is \d+",
         "The checkpoint is split into model-parallel shards (consolidated.NN.pth, one per process) and the loader "
         "needs exactly one process per shard, but the launcher started another number of processes (the MP=N and "
         "world size in the message).",
         "Start as many processes as the checkpoint has shards: torchrun --nproc_per_node N (nodes x GPUs per node = "
         "N); Llama 2's are 7B: 1, 13B: 2, 70B: 8. With fewer GPUs, reshard the checkpoint or use a converted "
         "(Hugging Face) copy; a restart fails the same way.", retry=False),
    # Round 164: a __getattr__ override that calls itself. Python calls __getattr__ only for attributes its normal
    # lookup does not find; nn.Module keeps submodules, parameters and buffers in self._modules / _parameters /
    # _buffers (torch/nn/modules/module.py, Module.__getattr__), not in the instance dict, so a wrapper's
    # `return getattr(self.model, name)` reads self.model through __getattr__ again; so does any __getattr__ reading
    # an attribute not set yet (before super().__init__(), an object being unpickled or copied). CPython prints the
    # repeated frame once, then "[Previous line repeated N more times]" (traceback.py, since 3.6) and "RecursionError:
    # maximum recursion depth exceeded" (3.5+; "... while calling a Python object", "... in comparison"; RuntimeError
    # before 3.5). The repeated frame must be a __getattr__: other recursions (a recursive function, __setattr__, a
    # property calling itself) stay the Python error.
    _sig("module-getattr-recursion", r", in __getattr__\n(?:[^\n]*\n){1,3}?[ \t]*\[Previous line repeated \d+ more "
         r"times\]\n(?:[^\n]*\n){0,6}?[^\n]*(?:Recursion|Runtime)Error: maximum recursion depth exceeded",
         "A __getattr__ method calls itself without end (RecursionError): it reads an attribute of self that Python's "
         "normal lookup does not find, so Python calls __getattr__ for it again. In a torch.nn.Module subclass, "
         "submodules, parameters and buffers live in self._modules, _parameters and _buffers, not in the instance, "
         "so a wrapper's `getattr(self.model, name)` inside __getattr__ recurses; so does a __getattr__ that reads "
         "an attribute not set yet (before super().__init__(), or while the object is unpickled or copied).",
         "In an nn.Module, try the module's own lookup first and fall back to the inner model: `try: return "
         "super().__getattr__(name)` / `except AttributeError: return getattr(super().__getattr__(\"model\"), "
         "name)`; elsewhere read attributes inside __getattr__ through self.__dict__ and raise AttributeError for "
         "missing names (and call super().__init__() first). A restart fails the same way.", retry=False),
    # Round 174 (live): model weight files. safetensors' save_file refusing tensors that share storage (tied weights):
    # safetensors/torch.py _evaluate_tensors_for_save, "Some tensors share memory, this will lead to duplicate memory
    # on disk and potential differences when loading them again: [...]"; transformers 4.3x's save_pretrained refusing
    # the same (modeling_utils.py): "The weights trying to be saved contained shared tensors [...] that are mismatching
    # the transformers base configuration."
    _sig("safetensors-shared-tensors", r"Some tensors share memory, this will lead to duplicate memory on disk|"
         r"The weights trying to be saved contained shared tensors",
         "safetensors refused to save a state_dict in which some tensors share memory: tied weights (an LM head tied "
         "to the token embedding, the pairs the message lists), which safetensors' save_file cannot store as two "
         "tensors.",
         "Save with safetensors.torch.save_model(model, path) (it keeps one of each shared set; load_model re-ties "
         "them), or model.save_pretrained(dir) for a transformers model; or drop the duplicate keys (or .clone() "
         "them) before save_file. A restart fails the same way.", retry=False),
    # transformers' AutoConfig.from_pretrained on a directory with no config.json, or one without model_type
    # (models/auto/configuration_auto.py: "Unrecognized model in {path}. Should have a `model_type` key in its
    # config.json" — 4.x adds ", or contain one of the following strings in its name: ..."), and the 4.x hub lookup
    # (utils/hub.py cached_file: "{path} does not appear to have a file named config.json.").
    _sig("hf-config-missing", r"Unrecognized model in [^\n]{1,300}?\. Should have a `model_type` key in its config\.json|"
         r"does not appear to have a file named config\.json",
         "from_pretrained found no usable config.json in the directory (or Hub repo) it was given: only the weights "
         "were saved there (torch.save of the state_dict, a Trainer or DeepSpeed checkpoint folder, a PEFT adapter "
         "with adapter_config.json), or its config.json has no model_type.",
         "Save the model with model.save_pretrained(dir) (it writes config.json with the weights), or copy the base "
         "model's config.json into the directory, or pass config=AutoConfig.for_model(...)/the base config to "
         "from_pretrained; load a PEFT adapter with PeftModel.from_pretrained. A restart fails the same way.",
         retry=False),
    # A pickle (torch.load of a whole object saved with torch.save(model), pickle.load) that names a class by its
    # module, and that module is not importable here: torch/serialization.py's UnpicklerWrapper.find_class (or the
    # unpickler.load() / pickle.load( line of older torch and plain pickle) followed by "ModuleNotFoundError: No
    # module named". numpy's own modules (numpy._core from numpy 2) are a version mismatch, left to other tables.
    _sig("pickle-module-missing", r"(?:, in find_class|\bunpickler\.load\(\)|\bpickle\.loads?\([^\n()]{0,200}\))\n(?:[^\n]*\n){0,4}?"
         r"[^\n]*ModuleNotFoundError: No module named '(?!numpy\b)[\w.]+'",
         "The file loaded (torch.load, pickle.load) holds a whole pickled object, which names its class by module "
         "(torch.save(model) pickles the model this way), and that module, the one in the message, cannot be "
         "imported where it loads: the training code's own file is not on this script's path or has another name.",
         "Save model.state_dict() instead and load it into a model the script builds (model.load_state_dict("
         "torch.load(path))); to read this file, run where the module imports under the same name (its directory on "
         "PYTHONPATH, or the training code's directory). A restart fails the same way.", retry=False),
    # A weights file written by a newer PyTorch: caffe2/serialize/inline_container.cc (PyTorchStreamReader::init),
    # "Attempted to read a PyTorch file with version N, but the maximum supported version for reading is M." (then
    # "Your PyTorch installation may be too old." / "The version of your PyTorch installation may be too old, ...").
    _sig("ckpt-newer-torch", r"Attempted to read a PyTorch file with version \d+, but the maximum supported version "
         r"for reading is \d+",
         "The file was written by a newer PyTorch than the one installed here: its archive records a format version "
         "this torch cannot read (the two numbers in the message).",
         "Install on every node a torch at least as new as the one that saved the file (pip show torch on both "
         "sides), or load it with that newer torch and save again (the state_dict) for this one. A restart fails "
         "the same way.", retry=False),
    # Round 179 (text data for language models). A sequence longer than the model's position table, read where the
    # model's embeddings fail on it: transformers' BERT-family embeddings (BertEmbeddings and its copies, RoBERTa,
    # ELECTRA...: `buffered_token_type_ids.expand(batch_size, seq_length)` on a buffer of max_position_embeddings
    # columns, then torch's "The expanded size of the tensor (N) must match the existing size (M)"), or, in older
    # releases and with token_type_ids given, the sum with the position embeddings (`embeddings += position_embeddings`,
    # "The size of tensor a (N) must match the size of tensor b (M)"). Only under those code lines: the same torch
    # words elsewhere are another shape mistake. (GPT-2-style models index their position table: embedding-index.)
    _sig("positions-exceeded",
         r"(?:buffered_token_type_ids\.expand\([\w\[\]., ]{0,60}\)|\bembeddings \+?= [^\n]{0,60}?position_embeddings)"
         r"[ \t]*\n"
         r"(?:[^\n]*\n){0,2}?[^\n]*?(?P<ev>RuntimeError: The (?:expanded size of the tensor \(\d+\) must match the "
         r"existing size|size of tensor a \(\d+\) must match the size of tensor b) \(\d+\) at non-singleton dimension 1)",
         "The batch's sequences are longer than the model's position embeddings: the tokenizer pads or truncates "
         "to a max_length (or model_max_length) larger than the config's max_position_embeddings (a small config "
         "built by hand, a long max_length kept from another model), or long texts are not truncated; the first "
         "number in the message is the sequence length, the second the model's positions.",
         "Tokenize with truncation=True and max_length at most config.max_position_embeddings (and padding to that "
         "length, not more), or build the model with max_position_embeddings at least the longest sequence (a "
         "pretrained model's cannot grow without new position weights). A restart fails the same way.", retry=False),
    # Round 189 (live): merging LoRA adapters into the base weights by hand, in place (W += delta, W.add_(delta),
    # W.data += ...) with a delta built from LoRA's two factors under their conventional names (peft's and loralib's
    # lora_A / lora_B), and torch's broadcast check refusing it ("The size of tensor a (N) must match the size of tensor
    # b (M) at non-singleton dimension D"): the delta's shape is not the weight's. Only under such a code line.
    _sig("lora-merge-shape",
         r"\bweight(?:\.data)?\s*(?:\+=|-=|\.(?:add_|sub_|copy_)\()[^\n]{0,200}?\blora_[AB]\b[^\n]{0,200}\n"
         r"(?:[^\n]*\n){0,2}?[^\n]*?(?P<ev>RuntimeError: The size of tensor a \(\d+\) must match the size of tensor b "
         r"\(\d+\) at non-singleton dimension \d+)",
         "The LoRA merge adds to a base weight a delta of another shape: a Linear's weight is (out_features, "
         "in_features) and its delta is lora_B @ lora_A, (out, r) times (r, in); the factors were multiplied in the "
         "other order or transposed (lora_A.T @ lora_B.T is the delta's transpose, (in, out)), or a weight stored "
         "transposed (GPT-2's Conv1D, peft's fan_in_fan_out) was merged as a Linear's (or the reverse).",
         "Build the delta as the forward pass uses the factors: for x @ lora_A.T @ lora_B.T the delta is (lora_B @ "
         "lora_A) * scaling, of the weight's shape; for a weight stored (in, out) add its transpose; check "
         "delta.shape == weight.shape before adding. A restart fails the same way.", retry=False),
    # transformers' *ForSequenceClassification of decoder models (modeling_gpt2.py, modeling_layers.py's generic
    # classifier for Llama/Mistral/Qwen, bloom, gpt_neox, opt...): "Cannot handle batch sizes > 1 if no padding token
    # is defined." when config.pad_token_id is None, the words of transformers 4.x and 5.x.
    _sig("seqcls-no-pad-token-id", r"Cannot handle batch sizes > 1 if no padding token is defined",
         "A decoder model's sequence-classification head (GPT-2, Llama, Mistral, Qwen... ForSequenceClassification) "
         "finds each row's last real token by the pad token id in model.config.pad_token_id, and that is None: "
         "setting tokenizer.pad_token (= eos_token) pads the batch but does not tell the model.",
         "Set model.config.pad_token_id = tokenizer.pad_token_id after choosing the pad token (or build/load the "
         "model with pad_token_id=tokenizer.pad_token_id); batch size 1 only hides it. A restart fails the same way.",
         retry=False),
    # torch's attention masks (torch/nn/functional.py, _canonical_mask, for nn.MultiheadAttention and nn.Transformer's
    # layers: "only bool and floating types of {mask_name} are supported", mask_name key_padding_mask, attn_mask,
    # src_key_padding_mask, mask, ...; torch 1.x's multi_head_attention_forward: "Only float, byte, and bool types are
    # supported for attn_mask, not torch.int64"; F.scaled_dot_product_attention's input check, aten/src/ATen/native/
    # transformers/attention.cpp validate_sdpa_input: "Expected attn_mask dtype to be bool or float or to match query
    # dtype, but got attn_mask.dtype: long int ...").
    _sig("attention-mask-dtype", r"\bonly bool and floating types of \w*mask are supported|"
         r"\bOnly float, byte,? and bool types are supported for \w*mask\b|"
         r"\bExpected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask\.dtype: "
         r"(?:long|int|short|unsigned char|signed char)",
         "torch's attention (nn.MultiheadAttention, nn.TransformerEncoder/Decoder layers, "
         "F.scaled_dot_product_attention) was given an integer mask, most often a tokenizer's attention_mask "
         "(int64, 1 = a real token) passed as src_key_padding_mask / key_padding_mask / attn_mask; torch takes a "
         "bool mask or a float one added to the attention scores, and a bool mask's sense differs by caller: True = "
         "ignore (padding) for nn.MultiheadAttention and nn.Transformer's masks, True = attend for "
         "scaled_dot_product_attention's attn_mask.",
         "Convert the mask with the caller's sense: src_key_padding_mask=(attention_mask == 0) for nn.Transformer "
         "layers and nn.MultiheadAttention; attn_mask=attention_mask.bool()[:, None, None, :] for "
         "F.scaled_dot_product_attention. Transformers' own models take attention_mask as the tokenizer gives it. "
         "A restart fails the same way.", retry=False),
    # torch's nll_loss / cross_entropy (aten/src/ATen/native/LossNLL.cpp): "Expected input batch_size (N) to match
    # target batch_size (M)." - the loss's input rows and its targets differ in number; in transformers' causal LM
    # loss (loss_utils.py ForCausalLMLoss flattens logits and labels) labels of another length than input_ids.
    _sig("loss-target-batch-mismatch", r"\bExpected input batch_size \(\d+\) to match target batch_size \(\d+\)",
         "The loss got a different number of predictions and targets: labels of another shape than the model's "
         "output, such as labels shifted by hand (input_ids[:, 1:]) for a Hugging Face causal LM that shifts them "
         "itself, labels padded or truncated to another length than input_ids, labels of input_ids' length while "
         "the model sees a longer sequence (prompt tuning's virtual tokens or a prefix prepended to inputs_embeds), "
         "one label per token given to a per-sequence classifier (or the reverse), or logits and labels flattened "
         "with different dimensions, or a contrastive similarity matrix of every rank's gathered queries (world x B "
         "rows) against labels for the local batch.",
         "Give labels the shape the loss expects: for a transformers causal LM pass labels with the same shape as "
         "input_ids (labels = input_ids, -100 at padding; the model shifts them), and where embeddings are "
         "prepended (virtual tokens, a prefix) pad the labels with -100 at those positions (torch.cat([torch.full(("
         "batch, n_virtual), -100), labels], 1)); for sequence classification one label per row; in a hand-written "
         "loss flatten logits to (N, vocab) and labels to (N,) from the same positions; for in-batch negatives across "
         "ranks multiply the local queries by the gathered documents (B x world*B) with labels arange(B) + rank * B. A "
         "restart fails the same way.", retry=False),
    # Round 187 (live): transformers' resize_token_embeddings (modeling_utils.py _get_resized_embeddings:
    # `old_num_tokens, old_embedding_dim = old_embeddings.weight.size()`; _get_resized_lm_head: `old_num_tokens,
    # old_lm_head_dim = (old_lm_head.weight.size() ...`) meeting a 1-D weight: ZeRO-3's partition placeholder, where
    # the model was wrapped by deepspeed.initialize before it was resized and transformers does not know ZeRO-3 is on
    # (no HfDeepSpeedConfig / Trainer), so it does not gather the weight first.
    _sig("zero3-param-partitioned", r"_get_resized_(?:embeddings|lm_head)\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"old_\w+\.weight\.(?:size\(\)|t\(\)\.size\(\))[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"(?P<ev>ValueError: not enough values to unpack \(expected 2, got 1\))",
         "resize_token_embeddings found the embedding (or LM head) weight 1-D: DeepSpeed ZeRO-3 had already "
         "partitioned the model (deepspeed.initialize ran before the resize, or zero.Init built it), so each rank "
         "holds an empty placeholder, and transformers, not told that ZeRO-3 is on, did not gather it.",
         "Resize before deepspeed.initialize (add the tokens, resize_token_embeddings, then initialize and build the "
         "optimizer); where the model is built under ZeRO-3 (zero.Init), keep an HfDeepSpeedConfig (or the Trainer's "
         "TrainingArguments with the DeepSpeed config) alive so transformers gathers the weight while resizing. A "
         "restart fails the same way.", retry=False),
)
