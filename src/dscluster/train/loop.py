"""The reference trainer's training loop, read top to bottom as nanoGPT's or torchtitan's: one `Training`
per rank holds the engine, the data and the metrics; `trainer.run` builds it and calls

    start = training.resume()            # the newest committed step, or 0
    for step in range(start, steps):
        training.train_step(step)        # accum micro-batches: forward, backward, engine.step()
        training.after_step(step + 1)    # log, evaluate, save as their intervals say
    training.finish(start)               # final evaluation, the sample, the last save, shutdown

Everything that needs torch, DeepSpeed or the process group is imported inside: the module loads without them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from dscluster.errors import DsclusterError, ExitCode
from dscluster.train import checkpoint, perf
from dscluster.train.metrics import MetricsWriter, peak_flops
from dscluster.train.model import PRESET_LR, flops_per_token
from dscluster.train.sampler import WindowSampler, eval_batches


class Training:
    def __init__(self, p, engine, device, zero_stage: int, log):
        import torch  # noqa: PLC0415

        self.p, self.args, self.engine, self.device, self.zero_stage, self.log = p, p.args, engine, device, zero_stage, log
        self.micro = p.ds_config["train_micro_batch_size_per_gpu"]
        self.accum = p.ds_config["gradient_accumulation_steps"]
        self.seq = p.model_cfg.seq_len
        self.sampler = WindowSampler(p.data.train, self.seq, self.micro, self.accum, p.world_size, self.args.seed)
        self.tokens_per_step = self.sampler.global_batch * self.seq
        self.metrics = MetricsWriter(self.args.run_dir, enabled=p.rank == 0)
        self.flops_per_token = flops_per_token(p.model_cfg, self.seq)
        self.peak = peak_flops(torch.cuda.get_device_name(device)) if p.device_type == "cuda" else None
        # What a resumed run must share with the one that saved, or it silently trains something else.
        self.run_facts = {"global_batch": self.sampler.global_batch, "seq_len": self.seq,
                          "scheduler": (p.ds_config.get("scheduler") or {}).get("type")}
        self.mode = self.args.checkpoint_mode if self.args.checkpoint_mode != "auto" else \
            ("async" if p.device_type == "cuda" else "sync")
        self.lr_setting = self.args.lr or PRESET_LR.get(self.args.preset)  # named in the hint if the loss diverges
        self.loss_acc = torch.zeros(1, device=device)
        self.window_start, self.window_steps = time.time(), 0
        self.last_loss: float | None = None
        self.val_loss: float | None = None
        self.prefetch: Any = None

    # ---- the loop's steps ---------------------------------------------------------------------
    def resume(self) -> int:
        """Every rank: load the newest committed step (or the one --resume names); returns the step to start at."""
        p = self.p
        resumed = checkpoint.resume(self.engine, self.args.save_dir, p.resume_step, rank=p.rank,
                                    world_size=p.world_size, zero_stage=self.zero_stage, device=self.device,
                                    via="dscluster.train")
        start = 0
        if resumed is not None:
            start = resumed.step
            self.log(f"resumed from {checkpoint.tag_for(start)}")
            for warning in resume_differences(resumed.client_state, self.run_facts):
                self.log(f"warning: {warning}")
        self.engine.train()
        # The next micro-batches are gathered and pinned on a thread: taking one is an asynchronous copy.
        self.prefetch = perf.BatchPrefetcher(lambda s, m: self.sampler.batch(s, p.rank, m), start, self.accum,
                                             self.device)
        return start

    def train_step(self, step: int) -> None:
        engine = self.engine
        for m in range(self.accum):
            batch = self.prefetch.next(step, m)
            with perf.attention_backend(self.args.attention):
                loss = engine(batch[:, :-1], batch[:, 1:])
                engine.backward(loss)
            engine.step()
            self.loss_acc += loss.detach().float()
        self.window_steps += 1

    def after_step(self, done: int) -> None:
        """What the intervals ask for after step `done`: the log line, an evaluation, a committed save."""
        args = self.args
        if done % args.log_interval == 0 or done == args.steps:
            self.log_progress(done)
        if args.eval_interval and done % args.eval_interval == 0 and done != args.steps:
            self.evaluate_and_record(done)
            self.window_start = time.time()  # eval time is not training throughput
        if done == args.steps or (args.save_interval and done % args.save_interval == 0):
            self.save(done)
            self.window_start = time.time()
        if args.step_sleep:
            time.sleep(args.step_sleep)

    def finish(self, start: int) -> None:
        """The final evaluation (unless the run had nothing left to train and was evaluated already), the
        sample, the save still in flight, the `done` record; then the process group goes, cleanly."""
        import torch.distributed as dist  # noqa: PLC0415

        args, p = self.args, self.p
        if start < args.steps or self.val_loss is None:
            self.evaluate_and_record(args.steps)
        self.prefetch.close()
        with perf.eager(self.engine.module):
            # rank 0 keeps the sample; the others generate it too only where ZeRO-3 needs every rank in a forward
            sample = sample_text(self.engine.module, p, self.device) \
                if args.sample_tokens and (p.rank == 0 or self.zero_stage == 3) else ""
        if (written := checkpoint.wait_pending()) is not None:
            self.log(f"saved {checkpoint.tag_for(written)}")
        self.metrics.write({"event": "done", "step": args.steps, "loss": self.last_loss, "val_loss": self.val_loss,
                            "sample": sample, "checkpoint": str(args.save_dir / checkpoint.tag_for(args.steps))})
        if sample:
            self.log("sample:\n" + sample)
        self.metrics.close()
        dist.barrier()
        dist.destroy_process_group()  # a clean NCCL shutdown: no leak warning, no seconds spent in exit handlers

    # ---- what the steps do --------------------------------------------------------------------
    def log_progress(self, done: int) -> None:
        import torch  # noqa: PLC0415
        import torch.distributed as dist  # noqa: PLC0415

        p = self.p
        dist.all_reduce(self.loss_acc)  # the only host sync in the loop: once per log interval
        self.last_loss = self.loss_acc.item() / (p.world_size * self.accum * self.window_steps)
        check_finite(self.last_loss, done, self.lr_setting)
        tps = self.tokens_per_step * self.window_steps / (time.time() - self.window_start)
        lr = self.engine.get_lr()[0]
        record = {"step": done, "loss": self.last_loss, "lr": lr, "tokens_per_s": round(tps, 1)}
        if self.peak:
            tflops = self.flops_per_token * tps / p.world_size / 1e12
            record.update(tflops=round(tflops, 2), mfu=round(tflops * 1e12 / self.peak, 4),
                          gpu_mem_gb=round(torch.cuda.max_memory_allocated(self.device) / 2**30, 2))
        self.metrics.write(record)
        self.log(f"step {done}/{self.args.steps} loss {self.last_loss:.4f} lr {lr:.3g} tok/s {tps:,.0f}")
        self.loss_acc.zero_()
        self.window_start, self.window_steps = time.time(), 0

    def evaluate(self) -> float | None:
        import torch  # noqa: PLC0415
        import torch.distributed as dist  # noqa: PLC0415

        p, engine = self.p, self.engine
        engine.eval()
        total = torch.zeros(2, device=self.device)
        with torch.no_grad(), perf.eager(engine.module):
            for batch in eval_batches(p.data.val, self.seq, self.micro, self.args.eval_batches, p.rank, p.world_size):
                t = torch.from_numpy(batch).to(self.device)
                total[0] += engine(t[:, :-1], t[:, 1:]).float() * len(batch)
                total[1] += len(batch)
        engine.train()
        dist.all_reduce(total)
        return (total[0] / total[1]).item() if total[1].item() > 0 else None

    def evaluate_and_record(self, step: int) -> None:
        self.val_loss = self.evaluate()
        if self.val_loss is not None:
            self.metrics.write({"step": step, "val_loss": self.val_loss})
            self.log(f"step {step}/{self.args.steps} val_loss {self.val_loss:.4f}")

    def save(self, step: int) -> None:
        """A committed checkpoint of `step`; never of a diverged state (the steps since the last log are
        checked first)."""
        import torch.distributed as dist  # noqa: PLC0415

        p, args = self.p, self.args
        if self.window_steps:  # steps since the last log: a diverged state must never be committed
            pending = self.loss_acc.clone()
            dist.all_reduce(pending)
            check_finite(pending.item(), step, self.lr_setting)
        checkpoint.save(self.engine, args.save_dir, step, rank=p.rank, world_size=p.world_size,
                        zero_stage=self.zero_stage, keep=args.keep,
                        client_state={"step": step, "seed": args.seed, "data": str(p.data.path),
                                      "model": dataclasses.asdict(p.model_cfg), **self.run_facts},
                        barrier=dist.barrier, crash_in_save=p.fault.crash_in_save_step == step, mode=self.mode)
        self.log(f"writing {checkpoint.tag_for(step)} in the background" if checkpoint.pending_step() == step
                 else f"saved {checkpoint.tag_for(step)}")


def sample_text(module, p, device) -> str:
    """The sample rank 0 prints (under ZeRO-3 every rank generates the same tokens: each forward needs all)."""
    import torch  # noqa: PLC0415

    from dscluster.data.tokenizer import tokenizer_from_meta  # noqa: PLC0415

    tok = tokenizer_from_meta(p.data.meta["tokenizer"])
    prompt = tok.encode(p.args.sample_prompt) or [tok.eos_id]
    gen = torch.Generator().manual_seed(p.args.seed)
    module.eval()
    idx = torch.tensor([prompt], dtype=torch.long, device=device)
    out = module.generate(idx, p.args.sample_tokens, generator=gen)
    return tok.decode(out[0].tolist())


def resume_differences(saved: dict, now: dict) -> list[str]:
    """What differs between the run that saved a checkpoint and this one (checkpoints from before these
    facts were recorded compare as equal)."""
    words = {"global_batch": "global batch (sequences per step)", "seq_len": "sequence length",
             "scheduler": "learning-rate scheduler"}
    return [f"{words[k]} was {saved[k]} when step-{saved.get('step')} was saved, now {now[k]}: the run continues "
            f"with the new value from here" for k in words if k in saved and saved[k] != now.get(k)]


class TrainingDiverged(DsclusterError):
    """The loss became NaN or infinite: every later step, and a checkpoint of it, would be garbage."""

    exit_code = ExitCode.RUN


def check_finite(loss: float, step: int, lr: float | None) -> None:
    if math.isfinite(loss):
        return
    raise TrainingDiverged(
        f"the loss is {loss} at step {step}: training diverged (nothing from this step is saved)",
        f"lower the learning rate (--lr, now {lr}) or add warmup, check the data; `dscluster restart RUN` "
        "resumes from the last committed checkpoint")
