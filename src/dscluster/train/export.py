"""A committed step as a model that loads without DeepSpeed: fp32 state dict, safetensors, or a
Hugging Face-style directory for the reference GPT.

The ZeRO shards are merged by DeepSpeed's own `zero_to_fp32` (get_fp32_state_dict_from_zero_checkpoint
in lazy mode: one tensor is materialised at a time, so a multi-GB model is not held twice); a ZeRO
stage 0 step already holds the whole module in mp_rank_00_model_states.pt and is cast to fp32.

Layouts (what `load_state_dict` / `load_gpt` read back):
    fp32          step-N.pt: torch.save of the fp32 state dict (torch.load(..., weights_only=True))
    safetensors   model.safetensors, or model-0000k-of-0000n.safetensors + model.safetensors.index.json
                  past SHARD_BYTES (Hugging Face's sharding convention); tensors that share storage are
                  stored once, their other names in the metadata's "aliases"
    hf            the safetensors layout + config.json (model_type "dscluster-gpt", the GPTConfig fields,
                  tie_word_embeddings), for the reference GPT only: `load_gpt(dir)` builds the model
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from dscluster import fsutil
from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.train.checkpoint import load_problems
from dscluster.train.commits import CheckpointError, damage, fsync_tree, read_commit, step_of
from dscluster.trust import load_tensors, open_out_dir, refuse_symlinks, weights_only_loads

FORMATS = ("fp32", "safetensors", "hf")
SHARD_BYTES = 4 << 30
MODEL_TYPE = "dscluster-gpt"
INDEX_FILE = "model.safetensors.index.json"


@dataclass(frozen=True)
class Exported:
    path: Path
    format: str
    tensors: int
    bytes: int
    seconds: float


def _model_states_file(step_dir: Path, zero_stage: int) -> Path:
    name = "zero_pp_rank_0_mp_rank_00_model_states.pt" if zero_stage == 3 else "mp_rank_00_model_states.pt"
    path = step_dir / name
    if not path.is_file():
        raise CheckpointError(tr("{path} is missing: not a DeepSpeed checkpoint", path=path),
                              tr("export a committed step of a DeepSpeed run (dscluster ckpt RUN lists them)"),
                              setting="--step")
    return path


def saved_state(step_dir: Path) -> dict:
    """The non-tensor part of the model states file: client state (step, model config), ZeRO stage, ..."""
    commit = read_commit(step_dir) or {}
    states = load_tensors(_model_states_file(step_dir, int(commit.get("zero_stage") or 0)))
    return {k: v for k, v in states.items() if k not in ("module", "optimizer", "lr_scheduler")}


def consolidated(step_dir: Path) -> dict:
    """name -> tensor (or DeepSpeed's lazy tensor: `.contiguous()` materialises it) of the full fp32 model.
    The step's files are the node user's: every load is weights-only with dscluster.trust's allow-list,
    DeepSpeed's own (which asks for weights_only=False) included."""
    stage = int((read_commit(step_dir) or {}).get("zero_stage") or 0)
    if stage > 0:
        from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint  # noqa: PLC0415

        refuse_symlinks(step_dir, "*.pt")  # DeepSpeed opens them by name
        with weights_only_loads(step_dir):
            return get_fp32_state_dict_from_zero_checkpoint(str(step_dir.parent), tag=step_dir.name, lazy_mode=True)
    path = _model_states_file(step_dir, 0)
    states = load_tensors(path)
    module = states.get("module") if isinstance(states, dict) else None
    if not isinstance(module, dict):  # it loads, but it is not DeepSpeed's model states (a damaged pickle)
        raise damaged_error(step_dir, tr("{name} holds no model weights (no 'module' entry in it)", name=path.name))
    return {k: v.float() if v.is_floating_point() else v for k, v in module.items()}


def _nbytes(t) -> int:
    import torch  # noqa: PLC0415

    numel = 1
    for d in t.shape:
        numel *= int(d)
    dtype = t.dtype if not t.dtype.is_floating_point else torch.float32
    return numel * dtype.itemsize


def _dedupe(state: dict) -> tuple[list[str], dict[str, str]]:
    """Names to store, and alias -> stored name for entries that are the same tensor (safetensors refuses
    shared storage)."""
    seen: dict[int, str] = {}
    keep, aliases = [], {}
    for name, t in state.items():
        # A torch tensor by the memory it views; DeepSpeed's lazy tensor by identity (shared = same object).
        key = hash((t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride())
                   if hasattr(t, "untyped_storage") and t.numel() else id(t))
        if key in seen:
            aliases[name] = seen[key]
        else:
            seen[key] = name
            keep.append(name)
    return keep, aliases


def _shards(names: list[str], sizes: dict[str, int], limit: int) -> list[list[str]]:
    shards: list[list[str]] = [[]]
    total = 0
    for name in names:
        if shards[-1] and total + sizes[name] > limit:
            shards.append([])
            total = 0
        shards[-1].append(name)
        total += sizes[name]
    return shards


def _write_safetensors(state: dict, folder: Path, progress: Callable[[int, int], None], limit: int) -> tuple[int, int]:
    from safetensors.torch import save_file  # noqa: PLC0415

    names, aliases = _dedupe(state)
    sizes = {n: _nbytes(state[n]) for n in names}
    shards = _shards(names, sizes, limit)
    total, done = sum(sizes.values()), 0
    weight_map = {}
    meta = {"format": "pt", "aliases": json.dumps(aliases)}
    for i, shard in enumerate(shards, 1):
        file = "model.safetensors" if len(shards) == 1 else f"model-{i:05d}-of-{len(shards):05d}.safetensors"
        tensors = {}
        for name in shard:
            t = state[name].contiguous()
            tensors[name] = t.float() if t.is_floating_point() else t
        save_file(tensors, str(folder / file), metadata=meta)
        del tensors
        for name in shard:
            weight_map[name] = file
            done += sizes[name]
        progress(done, total)
    if len(shards) > 1:
        (folder / INDEX_FILE).write_text(json.dumps({"metadata": {"total_size": total, "aliases": aliases},
                                                     "weight_map": weight_map}, indent=1), encoding="utf-8")
    return len(names), total


def _exists_at(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def gpt_config_json(model: dict, step: int) -> dict:
    return {"architectures": ["GPT"], "model_type": MODEL_TYPE, "torch_dtype": "float32",
            "tie_word_embeddings": True, **model, "dscluster_step": step}


def export(step_dir: Path, out: Path, fmt: str, progress: Callable[[int, int], None] | None = None,
           shard_bytes: int = SHARD_BYTES) -> Exported:
    """Write step_dir's model to `out` (a file for fp32, a directory otherwise). Written beside `out` under a
    temporary name, fsynced, then renamed: an interrupted export leaves nothing that looks finished, and a
    failed one nothing at all. A step whose files differ from COMMIT.json's sizes, or that does not load,
    is refused naming the step and the file."""
    if fmt not in FORMATS:
        raise ConfigError(tr("--format {v!r} is not one of {choices}", v=fmt, choices=", ".join(FORMATS)),
                          tr("e.g. --format safetensors"), setting="--format")
    if os.path.lexists(out):  # checked again through the folder's descriptor below
        raise ConfigError(tr("{path} already exists; an export never overwrites", path=out),
                          tr("remove it, or pass another --out"), setting="--out")
    progress = progress or (lambda done, total: None)
    t0 = time.monotonic()
    if problem := damage(step_dir):
        raise damaged_error(step_dir, problem)
    made = [d for d in (out.parent, *out.parent.parents) if not d.exists()]
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        return _export(step_dir, out, tmp, fmt, progress, shard_bytes, t0)
    except BaseException as exc:
        # Nothing an export started is left behind: its temporary file or directory, the folders it made.
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(exc, (CheckpointError, ConfigError)) or not isinstance(exc, Exception):
            raise
        raise unreadable_error(step_dir, exc) from exc


def damaged_error(step_dir: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        tr("{tag} is damaged: {problem} ({path})", tag=step_dir.name, problem=problem, path=step_dir),
        tr("export another committed step (dscluster ckpt RUN lists them, --step N), or restore the file from a "
           "backup; dscluster ckpt verify RUN --step {n} checks every file", n=step_of(step_dir.name)),
        setting="--step")


def unreadable_error(step_dir: Path, exc: BaseException) -> CheckpointError:
    """What an export that failed while reading the step says: the files of the step that do not load
    (each opened on its own), else the step and the error."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return CheckpointError(tr("no space left on device while exporting {tag}: {err}", tag=step_dir.name, err=exc),
                               tr("free space there, or pass another --out"), setting="--out")
    bad = load_problems(step_dir)
    what = "; ".join(bad[:3]) if bad else f"{type(exc).__name__}: {exc}"[:300]
    return damaged_error(step_dir, tr("it cannot be read: {what}", what=what))


def _export(step_dir: Path, out: Path, tmp: Path, fmt: str, progress: Callable[[int, int], None],
            shard_bytes: int, t0: float) -> Exported:
    import torch  # noqa: PLC0415

    info = saved_state(step_dir)
    model = info.get("model") if isinstance(info.get("model"), dict) else None
    if fmt == "hf" and model is None:
        raise ConfigError(tr("{path} has no reference-GPT model config: --format hf is for dscluster.train runs",
                             path=step_dir),
                          tr("use --format safetensors (any model) and your model's own config"), setting="--format")
    state = consolidated(step_dir)
    # The default destination is inside the run directory, the node user's: the folder is reached by
    # fsutil's no-symlink rule and every name in it is made, written and renamed through its descriptor
    # (a planted `export` symlink, or a name swapped meanwhile, is refused, never written through).
    dfd = open_out_dir(out.parent)
    try:
        if _exists_at(dfd, out.name):
            raise ConfigError(tr("{path} already exists; an export never overwrites", path=out),
                              tr("remove it, or pass another --out"), setting="--out")
        tmp = f".{out.name}.partial-{os.getpid()}"
        if fmt == "fp32":
            full = {}
            names = list(state)
            for i, name in enumerate(names, 1):
                full[name] = state[name].contiguous()
                progress(i, len(names))
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
            with os.fdopen(fd, "wb") as f:
                torch.save(full, f)
                f.flush()
                os.fsync(f.fileno())
                count, size = len(full), os.fstat(f.fileno()).st_size
        else:
            os.mkdir(tmp, 0o755, dir_fd=dfd)
            tfd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            try:
                # Our own new folder (only we write it), named by its descriptor: writers that take a path
                # (safetensors) cannot be sent elsewhere by a rename in the folder above.
                folder = Path(f"/proc/self/fd/{tfd}")
                count, size = _write_safetensors(state, folder, progress, shard_bytes)
                if fmt == "hf":
                    step = int(info.get("step") or 0)
                    (folder / "config.json").write_text(json.dumps(gpt_config_json(model, step), indent=1),
                                                        encoding="utf-8")
                fsync_tree(folder)
                os.fsync(tfd)
            finally:
                os.close(tfd)
        os.replace(tmp, out.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        with fsutil.opened_dir(dfd) as rfd:
            os.fsync(rfd)
    finally:
        os.close(dfd)
    return Exported(out, fmt, count, size, time.monotonic() - t0)


def load_state_dict(path: str | os.PathLike) -> dict:
    """The state dict of an export: a .pt file (fp32) or a safetensors file / directory (safetensors, hf),
    aliases restored. Needs torch and safetensors, not DeepSpeed or dscluster's training code."""
    import torch  # noqa: PLC0415

    path = Path(path)
    if path.is_file() and path.suffix == ".pt":
        return torch.load(path, map_location="cpu", weights_only=True)
    from safetensors import safe_open  # noqa: PLC0415
    from safetensors.torch import load_file  # noqa: PLC0415

    files = [path] if path.is_file() else sorted(path.glob("*.safetensors"))
    if not files:
        raise ConfigError(tr("{path} holds no export (no .pt or .safetensors file)", path=path),
                          tr("pass the path that dscluster ckpt export printed"), setting="path")
    state: dict = {}
    aliases: dict = {}
    for f in files:
        state.update(load_file(str(f)))
        with safe_open(str(f), framework="pt") as handle:
            aliases.update(json.loads((handle.metadata() or {}).get("aliases") or "{}"))
    for alias, target in aliases.items():
        state[alias] = state[target]
    return state


def load_gpt(path: str | os.PathLike):
    """The reference GPT from an `hf` export directory, in eval mode on CPU (the loader that
    transformers-style code calls like from_pretrained)."""
    from dscluster.train.model import GPT, GPTConfig  # noqa: PLC0415

    path = Path(path)
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(tr("{path} is not an hf export (config.json: {err})", path=path, err=exc),
                          tr("export with: dscluster ckpt export RUN --format hf"), setting="path") from exc
    if config.get("model_type") != MODEL_TYPE:
        raise ConfigError(tr("{path} holds a {kind!r} model, not {ours!r}", path=path, kind=config.get("model_type"),
                             ours=MODEL_TYPE), tr("load it with the library that wrote it"), setting="path")
    names = {f.name for f in fields(GPTConfig)}
    model = GPT(GPTConfig(**{k: v for k, v in config.items() if k in names}))
    model.load_state_dict(load_state_dict(path))
    return model.eval()


__all__ = ["FORMATS", "Exported", "export", "load_gpt", "load_state_dict"]
