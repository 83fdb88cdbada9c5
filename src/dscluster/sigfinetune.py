"""Failure signatures of the fine-tuning frameworks people run on several GPUs, in their own words (round 27 of
issue 45): Unsloth refusing a multi-GPU setup, FSDP's transformer auto-wrap given a layer class the model does not
have (transformers' Trainer, accelerate's FSDP plugin and the frameworks that copy their check), LLaMA-Factory refusing
a run no launcher started, ms-swift refusing DeepSpeed in a process that sees several GPUs (round 56), LitGPT and
LLaMA-Factory refusing a quantized model where it would be sharded or spread over GPUs (round 111), and
transformers' lazy import wrapping an ImportError of a name the installed package lacks; and (round 112) the FSDP
wrap list Alpha-VLLM's training scripts ask of a model class that lacks it, and OneTrainer's UI reading a model from its
multi-GPU trainer that has none; (round 137) LLaMA-Factory refusing Unsloth under ZeRO-3; (round 146) a collective
without a CPU backend inside Unsloth's own import-time patching on several GPUs; (round 139) ms-swift 2.x finding a
--dataset entry among none of its datasets. Each pattern is the wording
of the code that prints it, cited above it, never one log's; `retry=False` throughout: the same command meets the same
check again. sigmessages.py places this table after Hugging Face's. The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

FINETUNE_SIGNATURES: tuple[Signature, ...] = (
    # Unsloth's own refusals: unsloth/models/llama.py (and _utils.py) `raise RuntimeError('Unsloth currently does not
    # work on multi GPU setups - sadly we are a 2 brother team so ...')` when the Trainer's loop is not its patched one,
    # and tokenizer_utils.py `raise RuntimeError('Unsloth currently does not support multi GPU setups - but we are
    # working on it!')` when more than one GPU is in use. Round 137: LLaMA-Factory's hparams/parser.py (since May 2024)
    # `if model_args.use_unsloth and is_deepspeed_zero3_enabled(): raise ValueError("Unsloth is incompatible with
    # DeepSpeed ZeRO-3.")` (its maintainer: Unsloth's free release does not support multi-GPU training); not its
    # other "X is incompatible with DeepSpeed ZeRO-3." (KTransformers: sigmessages' ds-incompatible). Round 146:
    # torch's ProcessGroup::getBackend (torch/csrc/distributed/c10d/ProcessGroup.hpp, "No backend type associated with
    # device type ") raised where a traceback of the same log runs through Unsloth's own files (unsloth/ or
    # unsloth_zoo/: its import-time patching, models/rl.py PatchFastRL, in every rank of a multi-GPU launch of a
    # release without multi-GPU support, unslothai/unsloth#2584); the same words without an Unsloth frame (a CPU
    # tensor given to a collective; Unsloth's banner alone is no frame) stay siglibs' collective-cpu-tensor.
    _sig("single-gpu-only", r"Unsloth currently does not (?:work on|support) multi[- ]?GPU setups|"
         r"\bUnsloth is incompatible with DeepSpeed ZeRO-3|"
         r"\A(?=[\s\S]*?File \"[^\"\n]*/unsloth(?:_zoo)?/[^\"\n]*\")[\s\S]*?"
         r"(?P<ev>No backend type associated with device type cpu)",
         "Unsloth (its free release) trains on one GPU only: it found a multi-GPU setup (several GPUs visible to the "
         "process, or several ranks started by a distributed launcher) and refused to train, or the framework that "
         "loads it (LLaMA-Factory under DeepSpeed ZeRO-3) refused it.",
         "Train on one GPU (CUDA_VISIBLE_DEVICES=0, one plain python process, no torchrun or accelerate launch over "
         "several GPUs); for several GPUs, train without Unsloth (transformers or TRL with DeepSpeed or FSDP) or with "
         "an Unsloth release that supports multi-GPU training. A restart fails the same way.", retry=False),
    # FSDP's transformer-based auto-wrap, by class name: transformers' trainer.py (_wrap_model) and accelerate's
    # utils/dataclasses.py (FullyShardedDataParallelPlugin.set_auto_wrap_policy) `raise Exception("Could not find the
    # transformer layer class to wrap in the model.")`; accelerate's FSDP2 path (utils/fsdp_utils.py) `raise
    # ValueError(f"Could not find the transformer layer class {layer_class} in the model.")`; verl and axolotl copy the
    # first wording.
    _sig("fsdp-wrap-class", r"Could not find the transformer layer class (?:to wrap in the model|[\w.]+ in the model)",
         "FSDP's transformer auto-wrap was given a layer class name that is no class of the loaded model "
         "(fsdp_transformer_layer_cls_to_wrap, the accelerate config's fsdp_transformer_layer_cls_to_wrap, or the "
         "model's _no_split_modules): another architecture's layer (LlamaDecoderLayer for a GPT-NeoX model), or a "
         "name the installed transformers spells otherwise (LLaMADecoderLayer before its rename).",
         "Name the loaded model's own decoder-layer class (print type(m).__name__ of the model's modules: "
         "GPTNeoXLayer, LlamaDecoderLayer, Qwen2DecoderLayer, BloomBlock, ...), or leave it unset so the model's "
         "_no_split_modules are used, or wrap by size (fsdp_min_num_params). A restart fails the same way.",
         retry=False),
    # Alpha-VLLM's training scripts (Lumina-Video train.py, Lumina-T2X's lumina_t2i, lumina_next_t2i, Next-DiT and
    # Flag-DiT train.py, setup_fsdp_sync) build FSDP's auto-wrap policy from the model's own list,
    # `lambda_fn=lambda m: m in model.get_fsdp_wrap_module_list()`; a model class without it fails in
    # torch.nn.Module.__getattr__ ("'{type}' object has no attribute '{name}'") on every rank. The wrappers' own names
    # (DDP, FSDP) are ddp-wrapped-attribute's (sigframeworks.py).
    _sig("fsdp-wrap-list-missing",
         r"'(?!(?:DistributedDataParallel|DataParallel|FullyShardedDataParallel)')\w+' object has no attribute "
         r"'get_fsdp_wrap_module_list'",
         "The training script wraps the model with FSDP by the list of blocks the model class returns from "
         "get_fsdp_wrap_module_list, and the model class it built has no such method: a release of the repository "
         "whose model file lacks it (Lumina-Video's MultiScaleNextDiT until 2025-02-21), or a model class of your own "
         "or from another version of the code. Every rank fails at the wrapping, whatever the cluster.",
         "Update the repository (git pull) so that the model file and train.py are of the same version, or add the "
         "method to the model class, returning the list of its transformer blocks (return list(self.layers)). "
         "A restart fails the same way.", retry=False),
    # OneTrainer's modules/ui/TrainUI.py (__training_thread_function) read `trainer.model.train_progress` before
    # trainer.train() from PR #1175 (merged 2025-12-02) until its revert, #1188 (2025-12-04: "it breaks Multi-GPU and
    # Cloud training", issue #1187): only GenericTrainer sets .model; MultiTrainer (the Multi-GPU option) and
    # CloudTrainer (cloud training) derive from BaseTrainer without it.
    _sig("onetrainer-multitrainer-attribute", r"'(?:MultiTrainer|CloudTrainer)' object has no attribute 'model'",
         "OneTrainer's training window read the model's progress from the trainer before training started, which only "
         "its single-GPU trainer has: a OneTrainer from early December 2025 (its pull request #1175) fails this way "
         "whenever Multi-GPU or cloud training is on, before any GPU work. Not the GPUs or their P2P matrix.",
         "Update OneTrainer (git pull; the change was reverted on 2025-12-04, #1188), or until then train on one GPU "
         "with Multi-GPU off. A restart fails the same way.", retry=False),
    # LLaMA-Factory's hparams/parser.py (get_train_args): `if training_args.parallel_mode ==
    # ParallelMode.NOT_DISTRIBUTED: raise ValueError("Please launch distributed training with `llamafactory-cli` or
    # `torchrun`.")` (several GPUs visible to one process no launcher started) and, next to it, `if
    # training_args.deepspeed and training_args.parallel_mode != ParallelMode.DISTRIBUTED: raise ValueError("Please
    # use `FORCE_TORCHRUN=1` to launch DeepSpeed training.")`.
    _sig("not-launched", r"Please launch distributed training with `?llamafactory-cli`? or `?torchrun`?|"
         r"Please use `?FORCE_TORCHRUN=1`? to launch DeepSpeed training",
         "LLaMA-Factory refused to train: the run needs ranks (several GPUs visible to the process, or a DeepSpeed "
         "config) but it was started as one plain python process (python src/train.py, or llamafactory-cli without "
         "its torchrun for DeepSpeed), so no launcher set the variables each rank needs (RANK, LOCAL_RANK, "
         "WORLD_SIZE).",
         "Start it with llamafactory-cli train CONFIG (FORCE_TORCHRUN=1 for DeepSpeed, NNODES, NODE_RANK and "
         "MASTER_ADDR for several nodes) or torchrun --nproc_per_node N src/train.py CONFIG; to train in one plain "
         "python process, show it one GPU (CUDA_VISIBLE_DEVICES=0) and no DeepSpeed config.", retry=False),
    # ms-swift's own refusal of DeepSpeed when one process sees several GPUs (is_mp(): n_gpu // local_world_size >= 2,
    # so it would split the model with device_map): 3.x swift/llm/argument/train_args.py (_init_deepspeed) `raise
    # ValueError('DeepSpeed is not compatible with `device_map`. ' f'n_gpu: {get_device_count()}, ' f'local_world_size:
    # {self.local_world_size}.')`; 2.x swift/llm/utils/argument.py (__post_init__ / _init_deepspeed) the same with `MP`
    # for `device_map`; 1.x/2.0 `assert not is_mp(), 'DeepSpeed is not compatible with MP.'`. `MP\b`: not another
    # program's `DeepSpeed is not compatible with MPS` (Apple's GPU backend).
    _sig("swift-deepspeed-multi-gpu-process",
         r"DeepSpeed is not compatible with (?:MP\b|`?device_map`?(?=\.|\s*n_gpu))",
         "ms-swift refused DeepSpeed because one process sees several GPUs (n_gpu larger than local_world_size): it "
         "would split the model over them with device_map, which DeepSpeed cannot train. The launch started one "
         "process where one per GPU was meant: NPROC_PER_NODE was not set, or did not reach swift (set on a line of "
         "its own without the continuation backslash, cut off by an empty line after a backslash, written after "
         "`swift sft`), or a launcher swift does not read started it.",
         "Start one process per GPU: put NPROC_PER_NODE=<GPUs per node> (with CUDA_VISIBLE_DEVICES, and NNODES, "
         "NODE_RANK, MASTER_ADDR for several nodes) in the same command, before swift sft/rlhf, each continued line "
         "ending in a backslash and no empty line in between; or leave --deepspeed out to train one process over the "
         "GPUs with device_map. A restart fails the same way.", retry=False),
    # Round 111: LitGPT's (lit-gpt's) fine-tuning scripts, finetune/{lora,lora_legacy,adapter,adapter_v2}.py setup():
    # `if devices * num_nodes > 1: if quantize: raise NotImplementedError("Quantization is currently not supported for
    # multi-GPU training. Please set devices=1 and num_nodes=1 when using the --quantize flag.")` (2023's lit-gpt:
    # "Please set devices=1 when using the --quantize flag."). Not LitGPT's other refusal, "Quantization and mixed
    # precision is not supported."
    _sig("quantize-multi-gpu-unsupported", r"Quantization is currently not supported for multi-GPU training",
         "LitGPT refused to fine-tune: --quantize (bitsandbytes 4-bit/8-bit, QLoRA) was asked for together with more "
         "than one device (devices > 1 or num_nodes > 1), and its fine-tuning scripts train a quantized model on one "
         "GPU only (a bitsandbytes-quantized model is not sharded across GPUs there).",
         "Run the quantized fine-tune on one GPU (devices=1 and num_nodes=1, --quantize kept); for several GPUs drop "
         "--quantize and let the data-parallel or FSDP strategy spread the bf16/fp16 model instead (lower the micro "
         "batch size or the context length if one GPU runs out of memory). A restart fails the same way.",
         retry=False),
    # Round 111: LLaMA-Factory's model/model_utils/quantization.py (configure_quantization, on-the-fly bitsandbytes):
    # without a device map under DeepSpeed ZeRO-3 or FSDP (or quantization_device_map=auto), `if
    # model_args.quantization_bit != 4: raise ValueError("Only 4-bit quantized model can use fsdp+qlora or auto device
    # map.")` (v1/plugins/model_plugins/quantization.py the same); from April to June 2024 "Only 4-bit quantized model
    # can use auto device map." (ZeRO-3 or the auto map). Not after a quote: the traceback's own `raise` line.
    _sig("fsdp-qlora-needs-4bit", r"(?<![\"'])Only 4-bit quantized model can use (?:fsdp\+qlora or )?auto device map",
         "LLaMA-Factory refused an on-the-fly bitsandbytes quantization other than 4-bit (quantization_bit: 8) where "
         "the model is loaded without a device map to be sharded: under FSDP (FSDP+QLoRA) or DeepSpeed ZeRO-3, or "
         "with quantization_device_map: auto. Only 4-bit weights can be stored in the compute dtype "
         "(bnb_4bit_quant_storage) and sharded; 8-bit ones cannot.",
         "Use quantization_bit: 4 with FSDP or ZeRO-3 (bitsandbytes >= 0.43); to train an 8-bit model, launch it "
         "without FSDP and ZeRO-3 (plain DDP or ZeRO-0/2 with llamafactory-cli, each rank holding the whole 8-bit "
         "model) and without quantization_device_map: auto. A restart fails the same way.", retry=False),
    # transformers' utils/import_utils.py (_LazyModule._get_module): `raise RuntimeError(f"Failed to import
    # {self.__name__}.{module_name} because of the following error (look up to see its traceback):\n{e}")`, so
    # ImportError's own words `cannot import name 'X' from 'pkg'` stand on the next line (or, pasted, the same one).
    _sig("import-name", r"because of the following error \(look up to see its\s+traceback\):\s*"
         r"cannot import name '\w+' from '[\w.]+'",
         "transformers could not import one of its own modules: that module imports a name (the `cannot import "
         "name 'X' from 'package'` line) that the installed package does not have, so transformers and that "
         "package (accelerate, torch, peft, ...) are of versions that do not go together.",
         "Install versions that go together: upgrade the package the line names after `from` (pip install -U "
         "accelerate), or install the transformers release written for it; the same versions on every node "
         "(pip show transformers accelerate on each). A restart fails the same way.", retry=False),
    # Round 139: ms-swift 1.x/2.x's swift/llm/utils/dataset.py get_dataset (up to the 3.0 refactor, modelscope/ms-swift
    # #2030): `use_hf, dataset_name, subsets, dataset_sample = parse_dataset_name(dataset_name)` then `dataset_info =
    # DATASET_MAPPING[dataset_name]`, so an entry of --dataset that is no registered name raises a bare KeyError there
    # (_dataset_id_to_name registers hub ids and files on the fly as `_0`, `_1`, ...; a key with a space in it carried
    # further words). The KeyError line is the evidence, within a few lines (Python 3.11's ~~~^^^ markers, rank prefixes).
    _sig("swift-dataset-name-unknown", r"dataset_info = DATASET_MAPPING\[dataset_name\]\s*\n(?:[^\n]{0,200}\n){0,3}?"
         r"[^\n]{0,40}?(?P<ev>KeyError: '[^'\n]{1,200}')",
         "ms-swift (1.x/2.x) found an entry of --dataset among none of its datasets: the value reached swift as "
         "a string that is no registered dataset name, hub id or existing file. Most often it carried stray words of "
         "the launch script (a commented-out line or text after a backslash inside the continued swift sft command "
         "became part of the arguments); else a misspelt name.",
         "Write the swift sft command without comment lines between its backslash-continued lines (comments above or "
         "below it, nothing after a trailing backslash), and give --dataset one word per dataset: a name swift "
         "lists, a hub id or the path of an existing file (check the dataset values in the arguments swift prints). "
         "A restart fails the same way.", retry=False),
)
