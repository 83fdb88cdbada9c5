"""The training run inside one rank: validate everything, build the engine, train, save, evaluate, sample.

Everything that can be wrong with the input (options, ds_config, data, checkpoint directory) is
checked before the process group is created, identically on every rank, so bad input stops every
rank at once with the same message instead of hanging the others in a collective.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster import dsconfig
from dscluster.data.corpus import ensure_stdlib_corpus
from dscluster.data.shards import Dataset, open_dataset
from dscluster.data.tokenizer import tokenizer_from_meta
from dscluster.errors import ConfigError, DsclusterError, ExitCode
from dscluster.fsutil import atomic_write_json
from dscluster.train import attention, checkpoint, fp8, mlp_kernels, perf
from dscluster.train.dssetup import prepare_config
from dscluster.train.metrics import MetricsWriter, peak_flops
from dscluster.train.model import GPT, PRESET_LR, GPTConfig, flops_per_token, param_count
from dscluster.train.options import Fault, check_numbers, check_run_dir, model_config, parse
from dscluster.train.sampler import WindowSampler, eval_batches


@dataclass
class Plan:
    """Everything decided before distributed init."""

    args: object
    fault: Fault
    rank: int
    local_rank: int
    world_size: int
    device_type: str
    data: Dataset
    model_cfg: GPTConfig
    ds_config: dict
    notes: list[str]
    torch_adamw: dict | None
    resume_step: int | None


def _zero_stage(ds_config: dict) -> int:
    return int(ds_config.get("zero_optimization", {}).get("stage", 0))


def plan(argv: list[str] | None = None) -> Plan:
    import torch  # noqa: PLC0415 - keep `python -m dscluster.train --help` fast

    args = parse(argv)
    fault = check_numbers(args)
    rank, world = launcher_env(os.environ)
    device_type = "cuda" if torch.cuda.is_available() else "cpu"

    data_dir = Path(args.data) if args.data else ensure_stdlib_corpus()[0]
    data = open_dataset(data_dir)
    model_cfg = model_config(args, data.vocab_size)
    user_cfg = dsconfig.load(args.deepspeed_config) if args.deepspeed_config else None
    preset_lr = PRESET_LR.get(args.preset, 3e-4)
    bf16_ok = device_type == "cuda" and torch.cuda.is_bf16_supported()
    prepared = prepare_config(user_cfg, device_type=device_type, bf16_ok=bf16_ok, lr=args.lr, preset_lr=preset_lr,
                              steps=args.steps)
    resolved = dsconfig.validate(prepared.config, world)
    if args.precision == "fp8":  # refused here, before any process group or GPU memory
        fp8.check(half="fp16" if resolved.get("fp16", {}).get("enabled") else None)
    if args.attention == "fa4":
        attention.check(device_type)
    if args.kernels == "quack":
        mlp_kernels.check(device_type, args.precision, _zero_stage(resolved), model_cfg)
    # Fails early (DataError) when the corpus is smaller than one global batch.
    WindowSampler(data.train, model_cfg.seq_len, resolved["train_micro_batch_size_per_gpu"],
                  resolved["gradient_accumulation_steps"], world, args.seed)
    if rank == 0:
        check_run_dir(args.run_dir)
    checkpoint.check_writable(args.save_dir)
    resume_step = checkpoint.resolve_resume(args.save_dir, args.resume)
    return Plan(args, fault, rank, args.local_rank, world, device_type, data, model_cfg, resolved, prepared.notes,
                prepared.torch_adamw, resume_step)


def _param_groups(model, weight_decay: float | None = None):
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
    if weight_decay is not None:
        groups[0]["weight_decay"] = weight_decay
    return groups


def distributed_port_kwargs(env) -> dict:
    """The run's own rendezvous port for DeepSpeed's MPI discovery (OpenMPI launches carry no MASTER_PORT,
    and discovery would otherwise use 29500 for every run: two concurrent runs collide). dscluster's
    supervisor exports DSCLUSTER_MASTER_PORT per attempt; without it DeepSpeed's default stays."""
    value = env.get("DSCLUSTER_MASTER_PORT", "")
    return {"distributed_port": int(value)} if value.isdigit() and 0 < int(value) < 65536 else {}


def ninja_first_path(path: str, python: str) -> str:
    """PATH with this interpreter's bin directory first when it holds a `ninja`, so every JIT build of a
    DeepSpeed op (the CPU comm op at every start on CPU) uses one ninja. pip's ninja 1.13 and Debian's 1.11
    hash build commands differently: alternating between them rebuilds the op, about 20 s, at each start."""
    bin_dir = os.path.dirname(python)
    if not os.path.exists(os.path.join(bin_dir, "ninja")):
        return path
    return os.pathsep.join([bin_dir, *[d for d in path.split(os.pathsep) if d and d != bin_dir]])


def skip_shm_comm_op() -> None:
    """On CPU, DeepSpeed's communication setup JIT-builds its shared-memory comm op (C++: 20 s to several
    minutes on a small CPU, once per user, again whenever ninja or the compiler changes), which only
    `inference_all_reduce` uses: training's collectives are torch.distributed's (gloo). DeepSpeed keeps
    its ops' compatibility answers in one dict made to be edited (deepspeed/ops/__init__.py); the op
    marked unavailable there is never built."""
    import deepspeed.ops  # noqa: PLC0415

    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False


def run(p: Plan) -> int:
    import deepspeed  # noqa: PLC0415
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    args = p.args
    os.environ["PATH"] = ninja_first_path(os.environ.get("PATH", ""), sys.executable)
    if p.device_type == "cpu" and "OMP_NUM_THREADS" not in os.environ:
        local_size = int(os.environ.get("LOCAL_SIZE", os.environ.get("LOCAL_WORLD_SIZE", 1)))
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(1, local_size)))
    if p.device_type == "cuda":
        torch.cuda.set_device(p.local_rank)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    if p.device_type == "cpu":
        skip_shm_comm_op()
    deepspeed.init_distributed(dist_backend="nccl" if p.device_type == "cuda" else "gloo",
                               **distributed_port_kwargs(os.environ))
    device = torch.device(p.device_type, p.local_rank) if p.device_type == "cuda" else torch.device("cpu")
    log = (lambda *a: print(*a, flush=True)) if p.rank == 0 else (lambda *a: None)

    torch.manual_seed(args.seed)
    zero_stage = _zero_stage(p.ds_config)
    if zero_stage == 3:
        # Partition while constructing, so no rank ever holds the whole model (6.7B fp32 = 27 GB per
        # rank otherwise); then initialise module by module, each gathered only while it is written.
        with deepspeed.zero.Init(config_dict_or_path=p.ds_config):
            model = GPT(p.model_cfg)
        model.reset_parameters(gather=lambda params: deepspeed.zero.GatheredParameters(params, modifier_rank=0))
    else:
        model = GPT(p.model_cfg)
    if args.activation_checkpointing:
        perf.checkpoint_blocks(model)
    if args.micro_batch_search and p.device_type == "cuda" and zero_stage != 3:
        p.ds_config = _searched_micro_batch(model, p, device, zero_stage, log)
    log(f"kernels: {perf.use_kernels(model, args.kernels, p.device_type, args.precision, zero_stage)}")
    log(f"attention: {attention.use_attention(model, args.attention, p.device_type)}")
    if args.precision == "fp8":
        log(f"precision: fp8 (torchao float8, tensorwise scales) in {fp8.convert(model)} linear layers, bf16 elsewhere")
    log(f"compile: {perf.compile_model(model, args.compile, p.device_type, zero_stage)}")
    if p.torch_adamw is not None:
        wd = p.torch_adamw.pop("weight_decay")
        optimizer = torch.optim.AdamW(_param_groups(model, wd), **p.torch_adamw)
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=p.ds_config)
    else:
        wd = p.ds_config["optimizer"].get("params", {}).get("weight_decay")
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=_param_groups(model, wd), config=p.ds_config)

    micro, accum = p.ds_config["train_micro_batch_size_per_gpu"], p.ds_config["gradient_accumulation_steps"]
    seq = p.model_cfg.seq_len
    sampler = WindowSampler(p.data.train, seq, micro, accum, p.world_size, args.seed)
    tokens_per_step = sampler.global_batch * seq
    metrics = MetricsWriter(args.run_dir, enabled=p.rank == 0)
    fpt = flops_per_token(p.model_cfg, seq)
    peak = peak_flops(torch.cuda.get_device_name(device)) if p.device_type == "cuda" else None

    if p.rank == 0:
        for note in p.notes:
            log(f"config: {note}")
        atomic_write_json(args.run_dir / "ds_config.resolved.json", p.ds_config)
        log(f"model: {param_count(p.model_cfg) / 1e6:.2f}M parameters ({args.preset}, {p.model_cfg.n_layer} layers, "
            f"d_model {p.model_cfg.d_model}, seq {seq}); world size {p.world_size} on {p.device_type}; "
            f"global batch {sampler.global_batch} x {seq} tokens; ZeRO stage {zero_stage}")

    # What a resumed run must share with the one that saved, or it silently trains something else.
    run_facts = {"global_batch": sampler.global_batch, "seq_len": seq,
                 "scheduler": (p.ds_config.get("scheduler") or {}).get("type")}
    start_step = 0
    resumed = checkpoint.resume(engine, args.save_dir, p.resume_step, rank=p.rank, world_size=p.world_size,
                                zero_stage=zero_stage, device=device, via="dscluster.train")
    if resumed is not None:
        start_step = resumed.step
        log(f"resumed from {checkpoint.tag_for(start_step)}")
        for warning in resume_differences(resumed.client_state, run_facts):
            log(f"warning: {warning}")

    def barrier():
        dist.barrier()

    mode = args.checkpoint_mode if args.checkpoint_mode != "auto" else ("async" if p.device_type == "cuda" else "sync")

    def save(step: int):
        checkpoint.save(engine, args.save_dir, step, rank=p.rank, world_size=p.world_size, zero_stage=zero_stage,
                        keep=args.keep, client_state={"step": step, "seed": args.seed, "data": str(p.data.path),
                                                      "model": dataclasses.asdict(p.model_cfg), **run_facts},
                        barrier=barrier, crash_in_save=p.fault.crash_in_save_step == step, mode=mode)
        log(f"writing {checkpoint.tag_for(step)} in the background" if checkpoint.pending_step() == step
            else f"saved {checkpoint.tag_for(step)}")

    def evaluate() -> float | None:
        engine.eval()
        total = torch.zeros(2, device=device)
        with torch.no_grad(), perf.eager(engine.module):
            for batch in eval_batches(p.data.val, seq, micro, args.eval_batches, p.rank, p.world_size):
                t = torch.from_numpy(batch).to(device)
                total[0] += engine(t[:, :-1], t[:, 1:]).float() * len(batch)
                total[1] += len(batch)
        engine.train()
        dist.all_reduce(total)
        return (total[0] / total[1]).item() if total[1].item() > 0 else None

    engine.train()
    loss_acc = torch.zeros(1, device=device)
    window_start, window_steps = time.time(), 0
    lr_setting = args.lr or PRESET_LR.get(args.preset)  # named in the hint if the loss diverges
    last_loss = None
    val_loss = None
    # The next micro-batches are gathered and pinned on a thread: taking one is an asynchronous copy.
    prefetch = perf.BatchPrefetcher(lambda s, m: sampler.batch(s, p.rank, m), start_step, accum, device)
    for step in range(start_step, args.steps):
        for m in range(accum):
            batch = prefetch.next(step, m)
            with perf.attention_backend(args.attention):
                loss = engine(batch[:, :-1], batch[:, 1:])
                engine.backward(loss)
            engine.step()
            loss_acc += loss.detach().float()
        window_steps += 1
        done = step + 1
        if done % args.log_interval == 0 or done == args.steps:
            dist.all_reduce(loss_acc)  # the only host sync in the loop: once per log interval
            last_loss = loss_acc.item() / (p.world_size * accum * window_steps)
            check_finite(last_loss, done, lr_setting)
            elapsed = time.time() - window_start
            tps = tokens_per_step * window_steps / elapsed
            lr = engine.get_lr()[0]
            record = {"step": done, "loss": last_loss, "lr": lr, "tokens_per_s": round(tps, 1)}
            if peak:
                tflops = fpt * tps / p.world_size / 1e12
                record.update(tflops=round(tflops, 2), mfu=round(tflops * 1e12 / peak, 4),
                              gpu_mem_gb=round(torch.cuda.max_memory_allocated(device) / 2**30, 2))
            metrics.write(record)
            log(f"step {done}/{args.steps} loss {last_loss:.4f} lr {lr:.3g} tok/s {tps:,.0f}")
            loss_acc.zero_()
            window_start, window_steps = time.time(), 0
        if args.eval_interval and done % args.eval_interval == 0 and done != args.steps:
            val_loss = evaluate()
            if val_loss is not None:
                metrics.write({"step": done, "val_loss": val_loss})
                log(f"step {done}/{args.steps} val_loss {val_loss:.4f}")
            window_start = time.time()  # eval time is not training throughput
        if done == args.steps or (args.save_interval and done % args.save_interval == 0):
            if window_steps:  # steps since the last log: a diverged state must never be committed
                pending = loss_acc.clone()
                dist.all_reduce(pending)
                check_finite(pending.item(), done, lr_setting)
            save(done)
            window_start = time.time()
        if args.step_sleep:
            time.sleep(args.step_sleep)

    if start_step < args.steps or val_loss is None:
        val_loss = evaluate()
        if val_loss is not None:
            metrics.write({"step": args.steps, "val_loss": val_loss})
            log(f"step {args.steps}/{args.steps} val_loss {val_loss:.4f}")
    prefetch.close()
    with perf.eager(engine.module):
        # rank 0 keeps the sample; the others generate it too only where ZeRO-3 needs every rank in a forward
        sample = _sample(engine.module, p, device) if args.sample_tokens and (p.rank == 0 or zero_stage == 3) else ""
    if (written := checkpoint.wait_pending()) is not None:
        log(f"saved {checkpoint.tag_for(written)}")
    metrics.write({"event": "done", "step": args.steps, "loss": last_loss, "val_loss": val_loss, "sample": sample,
                   "checkpoint": str(args.save_dir / checkpoint.tag_for(args.steps))})
    if sample:
        log("sample:\n" + sample)
    metrics.close()
    dist.barrier()
    dist.destroy_process_group()  # a clean NCCL shutdown: no leak warning, no seconds spent in exit handlers
    return 0


def _searched_micro_batch(model, p: Plan, device, zero_stage: int, log) -> dict:
    """The largest micro-batch that fits on every rank's GPU (the smallest answer over ranks)."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    found = perf.find_micro_batch(model, p.model_cfg.seq_len, p.model_cfg.vocab_size, device,
                                  zero_stage=zero_stage, world_size=p.world_size)
    t = torch.tensor([found], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    cfg = {k: v for k, v in p.ds_config.items() if k != "train_batch_size"}
    cfg["train_micro_batch_size_per_gpu"] = int(t.item())
    log(f"config: micro batch {int(t.item())} per rank (--micro-batch-search: the largest that fits)")
    return dsconfig.validate(cfg, p.world_size)


def _sample(module, p: Plan, device) -> str:
    """The sample rank 0 prints (under ZeRO-3 every rank generates the same tokens: each forward needs all)."""
    import torch  # noqa: PLC0415

    tok = tokenizer_from_meta(p.data.meta["tokenizer"])
    prompt = tok.encode(p.args.sample_prompt) or [tok.eos_id]
    gen = torch.Generator().manual_seed(p.args.seed)
    module.eval()
    idx = torch.tensor([prompt], dtype=torch.long, device=device)
    out = module.generate(idx, p.args.sample_tokens, generator=gen)
    return tok.decode(out[0].tolist())


def describe(p: Plan) -> str:
    return json.dumps({"model": p.model_cfg.to_dict(), "ds_config": p.ds_config}, indent=2)


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


def launcher_env(env) -> tuple[int, int]:
    """(RANK, WORLD_SIZE) as a launcher set them; none at all is a single process. Half a set would hang
    in the rendezvous or fail deep inside DeepSpeed, so it is named here instead."""
    values = {}
    for name, default in (("RANK", 0), ("WORLD_SIZE", 1)):
        raw = env.get(name)
        try:
            values[name] = default if raw is None else int(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a whole number",
                              "run through `dscluster launch` (or `deepspeed`), or unset it", setting=name) from None
    rank, world = values["RANK"], values["WORLD_SIZE"]
    # (MASTER_ADDR is not required here: under mpirun DeepSpeed derives it from OpenMPI's own variables.)
    missing = ["RANK"] if world > 1 and env.get("RANK") is None else []
    if world < 1 or not 0 <= rank < world or missing:
        what = f"{', '.join(missing)} not set" if missing else f"RANK={rank} with WORLD_SIZE={world}"
        raise ConfigError(f"the launcher environment is incomplete ({what})",
                          "run through `dscluster launch` (or `deepspeed`), which sets all of them; for one process "
                          "unset RANK and WORLD_SIZE", setting="WORLD_SIZE")
    return rank, world
