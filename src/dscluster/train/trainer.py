"""The training run inside one rank: validate everything, build the engine, train, save, evaluate, sample.

Everything that can be wrong with the input (options, ds_config, data, checkpoint directory) is
checked before the process group is created, identically on every rank, so bad input stops every
rank at once with the same message instead of hanging the others in a collective.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from dscluster import dsconfig
from dscluster.data.corpus import ensure_stdlib_corpus
from dscluster.data.shards import Dataset, open_dataset
from dscluster.errors import ConfigError
from dscluster.fsutil import atomic_write_json
from dscluster.train import attention, checkpoint, fp8, mlp_kernels, perf
from dscluster.train.dssetup import prepare_config
from dscluster.train.loop import Training
from dscluster.train.model import GPT, PRESET_LR, GPTConfig, param_count
from dscluster.train.options import Fault, check_numbers, check_run_dir, model_config, parse
from dscluster.train.sampler import WindowSampler


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
    """The run's own rendezvous port for DeepSpeed's MPI discovery (an MPI launcher's ranks carry no MASTER_PORT,
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
    """One rank's whole run: the process group, the engine, then the loop (train/loop.py)."""
    device = _start(p)
    log = (lambda *a: print(*a, flush=True)) if p.rank == 0 else (lambda *a: None)
    engine, zero_stage = _engine(p, device, log)
    training = Training(p, engine, device, zero_stage, log)
    _announce(p, training, zero_stage, log)
    start = training.resume()
    for step in range(start, p.args.steps):
        training.train_step(step)
        training.after_step(step + 1)
    training.finish(start)
    return 0


def _start(p: Plan):
    """Threads, TF32 and the process group (NCCL on GPUs, gloo on CPUs); returns this rank's device."""
    import deepspeed  # noqa: PLC0415
    import torch  # noqa: PLC0415

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
    return torch.device(p.device_type, p.local_rank) if p.device_type == "cuda" else torch.device("cpu")


def _engine(p: Plan, device, log):
    """The model (partitioned while it is built under ZeRO-3), its kernels, attention, precision and
    compilation, then DeepSpeed's engine with the optimizer; returns (engine, ZeRO stage)."""
    import deepspeed  # noqa: PLC0415
    import torch  # noqa: PLC0415

    args = p.args
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
    return engine, zero_stage


def _announce(p: Plan, training: Training, zero_stage: int, log) -> None:
    """Rank 0: the config notes, the resolved ds_config beside the run, the model and batch in one line."""
    if p.rank != 0:
        return
    for note in p.notes:
        log(f"config: {note}")
    atomic_write_json(p.args.run_dir / "ds_config.resolved.json", p.ds_config)
    seq = p.model_cfg.seq_len
    log(f"model: {param_count(p.model_cfg) / 1e6:.2f}M parameters ({p.args.preset}, {p.model_cfg.n_layer} layers, "
        f"d_model {p.model_cfg.d_model}, seq {seq}); world size {p.world_size} on {p.device_type}; "
        f"global batch {training.sampler.global_batch} x {seq} tokens; ZeRO stage {zero_stage}")


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


def describe(p: Plan) -> str:
    return json.dumps({"model": p.model_cfg.to_dict(), "ds_config": p.ds_config}, indent=2)


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
