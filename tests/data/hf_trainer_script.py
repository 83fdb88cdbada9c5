"""A Hugging Face Trainer script as users write them: TrainingArguments from the command line
(`--output_dir OUT --deepspeed ds_config.json --save_steps N ...`, or the output directory set in the code), a tiny Llama built from a config,
random tokens, and the usual resume from the newest checkpoint-N in the output directory.

Test-only fault: with KILL_RANK_AT_SAVE=R:STEP, rank R of attempt 1 kills itself (SIGKILL) in the middle of
the save of checkpoint-STEP: after the model weights and DeepSpeed's shards are written, before the
Trainer's trainer_state.json, the save's last file. Nothing else differs from a user's script.
"""

import os
import signal
import sys

import torch
from transformers import HfArgumentParser, LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n: int, length: int, vocab: int):
        g = torch.Generator().manual_seed(0)
        self.data = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return {"input_ids": self.data[i], "labels": self.data[i]}


def fault_injection(trainer: Trainer) -> None:
    spec = os.environ.get("KILL_RANK_AT_SAVE", "")
    if not spec or os.environ.get("DSCLUSTER_ATTEMPT", "1") != "1":
        return
    rank, step = (int(x) for x in spec.split(":"))
    save_rng = trainer._save_rng_state

    def dying(output_dir):  # after model + DeepSpeed shards + optimizer, before trainer_state.json
        if int(os.environ.get("RANK", "0")) == rank and trainer.state.global_step == step:
            os.kill(os.getpid(), signal.SIGKILL)
        return save_rng(output_dir)

    trainer._save_rng_state = dying


def training_args() -> TrainingArguments:
    """From the command line; with OUTPUT_DIR_IN_CODE=DIR, as many scripts do it: the output directory set
    in the script itself (the command line names none)."""
    in_code = os.environ.get("OUTPUT_DIR_IN_CODE")
    if not in_code:
        return HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(args=["--output_dir", in_code,
                                                                                    *sys.argv[1:]])
    return args


def main() -> None:
    args = training_args()
    torch.manual_seed(0)
    # Tiny by default (CPU tests); MODEL_DIM / MODEL_LAYERS / SEQ_LEN / N_SAMPLES size it for a GPU.
    dim, layers = int(os.environ.get("MODEL_DIM", 32)), int(os.environ.get("MODEL_LAYERS", 2))
    seq, samples, vocab = int(os.environ.get("SEQ_LEN", 16)), int(os.environ.get("N_SAMPLES", 192)), 256
    config = LlamaConfig(vocab_size=vocab, hidden_size=dim, intermediate_size=2 * dim, num_hidden_layers=layers,
                         num_attention_heads=max(2, dim // 64), num_key_value_heads=max(2, dim // 64),
                         max_position_embeddings=max(64, seq))
    model = LlamaForCausalLM(config)
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(samples, seq, vocab),
                      eval_dataset=RandomTokens(12, seq, vocab))
    fault_injection(trainer)
    last = get_last_checkpoint(args.output_dir) if os.path.isdir(args.output_dir) else None
    trainer.train(resume_from_checkpoint=last)
    if args.do_eval:
        trainer.evaluate()
    # Leave as PyTorch asks (every rank destroys its process group), then without Python's finalization.
    # Seen in CI, with core dumps to prove it: after a finished run, a gloo worker thread released a finished
    # ZeRO all-gather's tensors (through a barrier's work, with a barrier) only once Python was finalizing; it
    # could not take the GIL and the rank aborted ("terminate called without an active exception", exit 134).
    # destroy_process_group() does not stop that thread while DeepSpeed still holds its groups; os._exit after
    # the barrier skips the finalization it races with. dscluster's explanation of that abort says the same.
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

if __name__ == "__main__":
    main()
