"""An Accelerate script as users write them, under DeepSpeed's own launcher (no `accelerate launch`):
`--deepspeed ds_config.json` (HF's "auto" config) handed to DeepSpeedPlugin, a tiny Llama from a config,
random tokens, `accelerator.save_state(OUT/checkpoint-N)` every --save_steps and a resume from the newest
checkpoint-N. It prints the Trainer's kind of log dict on the main process.

Test-only fault: with KILL_RANK_AT_SAVE=R:STEP, rank R of attempt 1 kills itself (SIGKILL) in the save of
checkpoint-STEP, after DeepSpeed's engine was saved and before Accelerate's random states (its last files).
"""

import argparse
import os
import re
import signal

import accelerate.accelerator as acc_mod
import torch
from accelerate import Accelerator, DeepSpeedPlugin
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
    args = p.parse_args()
    plugin = DeepSpeedPlugin(hf_ds_config=args.deepspeed, gradient_accumulation_steps=1, gradient_clipping=1.0)
    accelerator = Accelerator(cpu=True, deepspeed_plugin=plugin)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64))
    data = torch.randint(0, 256, (192, 16), generator=torch.Generator().manual_seed(0))
    loader = torch.utils.data.DataLoader(data, batch_size=args.per_device_train_batch_size, shuffle=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    spec = os.environ.get("KILL_RANK_AT_SAVE", "")
    if spec and os.environ.get("DSCLUSTER_ATTEMPT", "1") == "1":
        rank, at = (int(x) for x in spec.split(":"))
        save_states = acc_mod.save_accelerator_state

        def dying(output_dir, *a, **k):
            if accelerator.process_index == rank and output_dir.endswith(f"checkpoint-{at}"):
                os.kill(os.getpid(), signal.SIGKILL)
            return save_states(output_dir, *a, **k)

        acc_mod.save_accelerator_state = dying

    step = 0
    done = [int(m.group(1)) for n in (os.listdir(args.output_dir) if os.path.isdir(args.output_dir) else ())
            if (m := re.match(r"^checkpoint-(\d+)$", n))]
    if done:
        accelerator.load_state(os.path.join(args.output_dir, f"checkpoint-{max(done)}"))
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
            accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{step}"))
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
