"""An Accelerate script as users write them, under DeepSpeed's own launcher (no `accelerate launch`):
`--deepspeed ds_config.json` (HF's "auto" config) handed to DeepSpeedPlugin, a tiny Llama from a config,
random tokens, `accelerator.save_state(...)` every --save_steps and a resume from the newest save, in each of
Accelerate's layouts (--layout): `OUT/checkpoint-N` (the Trainer's naming), `checkpoint_N` under
`OUT/checkpoints` (Accelerate's automatic naming, ProjectConfiguration(project_dir=OUT)), `OUT/step_N` (HF's
no_trainer scripts). It prints the Trainer's kind of log dict on the main process.

Test-only fault: with KILL_RANK_AT_SAVE=R:STEP, rank R of attempt 1 kills itself (SIGKILL) in the save of
the save at step STEP, after DeepSpeed's engine was saved and before Accelerate's random states (its last files).
"""

import argparse
import logging
import os
import re
import signal
import sys

import accelerate.accelerator as acc_mod
import torch
from accelerate import Accelerator, DeepSpeedPlugin
from accelerate.utils import ProjectConfiguration
from transformers import LlamaConfig, LlamaForCausalLM


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--output_dir", required=True)
    p.add_argument("--deepspeed", required=True)
    p.add_argument("--save_steps", type=int, default=4)
    p.add_argument("--max_steps", type=int, default=12)
    p.add_argument("--logging_steps", type=int, default=2)
    p.add_argument("--per_device_train_batch_size", type=int, default=2)
    p.add_argument("--local_rank", type=int, default=0)
    p.add_argument("--layout", choices=("checkpoint-N", "automatic", "step_N"), default="checkpoint-N")
    args = p.parse_args()
    if args.layout == "step_N":  # as HF's no_trainer scripts set logging up: Accelerate's INFO lines shown
        logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    plugin = DeepSpeedPlugin(hf_ds_config=args.deepspeed, gradient_accumulation_steps=1, gradient_clipping=1.0)
    automatic = args.layout == "automatic"
    project = ProjectConfiguration(project_dir=args.output_dir, automatic_checkpoint_naming=automatic)
    accelerator = Accelerator(cpu=True, deepspeed_plugin=plugin, project_config=project)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64))
    data = torch.randint(0, 256, (192, 16), generator=torch.Generator().manual_seed(0))
    loader = torch.utils.data.DataLoader(data, batch_size=args.per_device_train_batch_size, shuffle=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    step = 0
    spec = os.environ.get("KILL_RANK_AT_SAVE", "")
    if spec and os.environ.get("DSCLUSTER_ATTEMPT", "1") == "1":
        rank, at = (int(x) for x in spec.split(":"))
        save_states = acc_mod.save_accelerator_state

        def dying(output_dir, *a, **k):
            if accelerator.process_index == rank and step == at:
                os.kill(os.getpid(), signal.SIGKILL)
            return save_states(output_dir, *a, **k)

        acc_mod.save_accelerator_state = dying

    # The newest save, as each layout's users resume: by name (checkpoint-N, step_N), or Accelerate's own pick
    # (load_state() with automatic naming), the iteration then set past it as Accelerate's docs say.
    if automatic and os.path.isdir(os.path.join(args.output_dir, "checkpoints")):
        saves = sorted(int(n.split("_")[1]) for n in os.listdir(os.path.join(args.output_dir, "checkpoints")))
        if saves:
            accelerator.load_state()
            accelerator.project_configuration.iteration = saves[-1] + 1
            step = (saves[-1] + 1) * args.save_steps
    elif not automatic:
        pattern = r"^checkpoint-(\d+)$" if args.layout == "checkpoint-N" else r"^step_(\d+)$"
        done = [int(m.group(1)) for n in (os.listdir(args.output_dir) if os.path.isdir(args.output_dir) else ())
                if (m := re.match(pattern, n))]
        if done:
            path = os.path.join(args.output_dir, args.layout.replace("N", str(max(done))))
            accelerator.print(f"Resumed from checkpoint: {path}")
            accelerator.load_state(path)
            step = max(done)
    batches = iter(loader)
    while step < args.max_steps:
        try:
            batch = next(batches)
        except StopIteration:
            batches = iter(loader)
            batch = next(batches)
        loss = model(input_ids=batch, labels=batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step % args.logging_steps == 0:
            accelerator.print({"loss": round(loss.item(), 4), "step": step})
        if step % args.save_steps == 0:
            accelerator.save_state(None if automatic else
                                   os.path.join(args.output_dir, args.layout.replace("N", str(step))))
    accelerator.wait_for_everyone()
    # Leave as PyTorch asks (every rank destroys its process group), then without Python's finalization, as
    # hf_trainer_script.py does and for the same reason, seen here in CI too: after a finished run a gloo thread of
    # DeepSpeed's groups still held work while Python finalized, and rank 2 aborted ("terminate called without an
    # active exception") after its last step, failing a run whose every rank had finished.
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
