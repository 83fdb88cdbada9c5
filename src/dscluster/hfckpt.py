"""The Hugging Face Trainer's and Accelerate's checkpoints, judged complete or torn: `<output_dir>/checkpoint-N`,
Accelerate's automatic `checkpoints/checkpoint_N` and the no_trainer scripts' `step_N` / `epoch_N`
(dscluster.ckptlayout names the layouts).

HF's save is neither atomic nor fsynced, and `get_last_checkpoint` / `resume_from_checkpoint=True` take
the highest-numbered `checkpoint-N` whether its save finished or not: a rank killed during the save of
checkpoint-60 leaves a directory that every restart loads and dies on, with a complete checkpoint-30
beside it. The rules here tell the two apart, from the files alone (nothing is unpickled):

- complete: `trainer_state.json` (written by rank 0 after the model, DeepSpeed's shards and the
  optimizer: the last file of a save) parses as JSON; the model's weights are there (`model.safetensors`,
  or every shard its `model.safetensors.index.json` lists, or `pytorch_model.bin`, or a PEFT adapter);
  and when DeepSpeed saved its engine there, `latest` names a `global_stepN` directory holding model
  states and one optimizer shard per data-parallel rank (0..k-1, none missing);
- with `dscluster.hf.Callback()` in the script, a `.dscluster-commit.json` written after HF's save has
  returned (on every rank) makes it complete exactly, with each file's size recorded;
- an Accelerate `save_state` folder (every layout but `checkpoint-N`, and a `checkpoint-N` holding Accelerate's
  files): complete when DeepSpeed's part (`pytorch_model/`), when there is one, is complete as above and
  every process's `random_states_R.pkl` (Accelerate's last files) is there;
- anything else is torn, with the reason.

The supervisor moves torn ones aside before a restart, to `<output_dir>/.torn/checkpoint-N-<time>` (never
deleted; HF's own `checkpoint-*` patterns do not see them), so a script that resumes from the newest
`checkpoint-N` resumes from the newest complete one. Stdlib only: the ranks import it (dscluster.hf).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster.ckptlayout import AUTOMATIC_PARENT, is_accelerate_layout, layout

PREFIX = "checkpoint-"
COMMIT_FILE = ".dscluster-commit.json"
TORN_DIR = ".torn"
STATE_FILE = "trainer_state.json"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors", "adapter_model.bin")
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
_OPTIM_RE = re.compile(r"zero_pp_rank_(\d+)_mp_rank_\d+_optim_states\.pt$")


@dataclass(frozen=True)
class HfCheckpoint:
    step: int
    path: Path
    complete: bool
    why: str | None = None  # what makes it torn (None when complete)
    exact: bool = False  # dscluster.hf's commit marker says so (not only the files' presence)

    @property
    def name(self) -> str:
        return self.path.name

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file() and not p.is_symlink())

    def to_json(self) -> dict:
        return {"step": self.step, "name": self.name, "path": str(self.path), "complete": self.complete,
                "why": self.why, "exact": self.exact}


def _json(path: Path) -> dict | None:
    try:
        if path.is_symlink():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _weights_problem(folder: Path) -> str | None:
    for name in _WEIGHTS:
        if (folder / name).is_file():
            return None if (folder / name).stat().st_size > 0 else f"{name} is empty"
    for name in _INDEXES:
        index = _json(folder / name)
        if index is not None:
            shards = sorted(set((index.get("weight_map") or {}).values()))
            missing = [s for s in shards if not (folder / s).is_file()]
            return f"{missing[0]} (listed in {name}) is missing" if missing else None
    return "no model weights (model.safetensors, pytorch_model.bin or an adapter)"


def _deepspeed_problem(folder: Path) -> str | None:
    """DeepSpeed's part of an HF checkpoint (`latest` + global_stepN/), when it has one."""
    tags = [p for p in folder.glob("global_step*") if p.is_dir()]
    latest = folder / "latest"
    if not tags and not latest.exists():
        return None  # no DeepSpeed engine saved here (plain DDP / FSDP)
    try:
        tag = latest.read_text(encoding="utf-8").strip()
    except OSError:
        return "DeepSpeed's `latest` is missing"
    if not tag or not (folder / tag).is_dir():
        return f"DeepSpeed's `latest` names {tag or 'nothing'}, which is not there"
    files = [p.name for p in (folder / tag).iterdir()]
    if not any(n.endswith("model_states.pt") for n in files):
        return f"{tag} has no model states"
    ranks = sorted(int(m.group(1)) for n in files if (m := _OPTIM_RE.search(n)))
    if ranks and ranks != list(range(ranks[-1] + 1)):
        missing = sorted(set(range(ranks[-1] + 1)) - set(ranks))
        return f"{tag} lacks the optimizer shard of rank {missing[0]}"
    return None


def _is_accelerate(folder: Path) -> bool:
    """Accelerate's `save_state(".../checkpoint-N")` (no Trainer): random_states_R.pkl, DeepSpeed's engine in
    pytorch_model/, and no training_args.bin."""
    return not (folder / "training_args.bin").exists() and not (folder / STATE_FILE).exists() and (
        (folder / "pytorch_model").is_dir() or any(folder.glob("random_states_*.pkl")))


def _accelerate_problem(folder: Path, world_size: int | None) -> str | None:
    """Accelerate writes each process's random_states_R.pkl last (after the model and optimizer)."""
    problem = _deepspeed_problem(folder / "pytorch_model") if (folder / "pytorch_model").is_dir() else None
    if problem:
        return problem
    ranks = range(world_size or 1)
    missing = [r for r in ranks if not (folder / f"random_states_{r}.pkl").is_file()]
    return f"random_states_{missing[0]}.pkl is missing (the save did not finish)" if missing else None


def judge(folder: Path, world_size: int | None = None) -> HfCheckpoint | None:
    """One checkpoint folder of any layout (dscluster.ckptlayout), complete or torn (None: not one)."""
    kind = layout(folder.name, folder.parent.name)
    if kind is None or folder.is_symlink() or not folder.is_dir():
        return None
    step = kind[1]
    marker = _json(folder / COMMIT_FILE)
    if marker is not None:
        for name, size in (marker.get("files") or {}).items():
            try:
                if (folder / name).stat().st_size != size:
                    return HfCheckpoint(step, folder, False, f"{name} changed size since the save finished")
            except OSError:
                return HfCheckpoint(step, folder, False, f"{name} is missing (it was there when the save finished)")
        return HfCheckpoint(step, folder, True, exact=True)
    if is_accelerate_layout(kind[0]) or _is_accelerate(folder):
        problem = _accelerate_problem(folder, world_size)
        return HfCheckpoint(step, folder, problem is None, problem)
    state = _json(folder / STATE_FILE)
    if state is None:
        why = f"{STATE_FILE} is missing" if not (folder / STATE_FILE).exists() else f"{STATE_FILE} is unreadable"
        return HfCheckpoint(step, folder, False, why + " (the save did not finish)")
    problem = _weights_problem(folder) or _deepspeed_problem(folder)
    if problem is None and world_size:
        tag = (folder / "latest").read_text(encoding="utf-8").strip() if (folder / "latest").is_file() else ""
        shards = [n for n in (os.listdir(folder / tag) if tag and (folder / tag).is_dir() else ())
                  if _OPTIM_RE.search(n)]
        if shards and len(shards) < world_size:
            problem = f"{tag} has {len(shards)} optimizer shards for {world_size} ranks"
    return HfCheckpoint(step, folder, problem is None, problem)


def checkpoints(output_dir: Path, world_size: int | None = None) -> list[HfCheckpoint]:
    """Every checkpoint folder (any layout) of an output directory, oldest first."""
    try:
        entries = sorted(Path(output_dir).iterdir())
    except OSError:
        return []
    found = [c for c in (judge(p, world_size) for p in entries) if c is not None]
    return sorted(found, key=lambda c: c.step)


def newest_complete(output_dir: Path, world_size: int | None = None) -> HfCheckpoint | None:
    done = [c for c in checkpoints(output_dir, world_size) if c.complete]
    return done[-1] if done else None


def move_torn(output_dir: Path, world_size: int | None = None, owner_uid: int | None = None) -> list[tuple[Path, Path]]:
    """Move every torn checkpoint folder (`checkpoint-N`, `step_N`, ...) to `<output_dir>/.torn/NAME-<time>`
    (`<project_dir>/.torn/` for Accelerate's `checkpoints/`; never deleted). Only while no rank runs (before a
    restart). Returns (from, to) pairs."""
    output_dir = Path(output_dir)
    if output_dir.is_symlink():
        return []
    moved = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for ckpt in checkpoints(output_dir, world_size):
        if ckpt.complete:
            continue
        # Accelerate's automatic naming lists every folder of checkpoints/ as a checkpoint_N (a `.torn` there
        # would break its resume): aside beside that folder, not in it.
        aside = (output_dir.parent if output_dir.name == AUTOMATIC_PARENT else output_dir) / TORN_DIR
        if aside.is_symlink():
            return moved  # never follow a link the node user may have planted
        if not aside.exists():
            aside.mkdir()
            if owner_uid is not None and os.geteuid() == 0:
                os.chown(aside, owner_uid, -1)
        target = aside / f"{ckpt.name}-{stamp}"
        n = 1
        while target.exists():
            n += 1
            target = aside / f"{ckpt.name}-{stamp}-{n}"
        os.rename(ckpt.path, target)
        moved.append((ckpt.path, target))
    return moved


def write_commit(folder: Path) -> Path:
    """The exact commit marker (dscluster.hf's on_save, after every rank's save returned): each file's size,
    fsynced, then the marker written atomically."""
    files = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.name != COMMIT_FILE:
            files[str(p.relative_to(folder))] = p.stat().st_size
            try:
                fd = os.open(p, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                pass
    tmp = folder / (COMMIT_FILE + ".tmp")
    tmp.write_text(json.dumps({"files": files, "time": time.time()}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / COMMIT_FILE)
    return folder / COMMIT_FILE


def output_dirs_from_args(args: list[str] | tuple[str, ...], cwd: str | Path) -> list[Path]:
    """The Trainer's `--output_dir X` / `--output_dir=X` (or `--output-dir`) in a script's arguments."""
    out = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        value = None
        if arg in ("--output_dir", "--output-dir") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(("--output_dir=", "--output-dir=")):
            value = arg.split("=", 1)[1]
        if value:
            path = Path(value) if os.path.isabs(value) else Path(cwd) / value
            if path not in out:
                out.append(path)
    return out


def _safetensors_problem(path: Path) -> str | None:
    """A safetensors file's header read as JSON and its tensors' byte ranges against the file's size
    (nothing unpickled: safetensors holds no code)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                return f"{path.name} is truncated"
            n = int.from_bytes(head, "little")
            if n > min(size - 8, 100 << 20):
                return f"{path.name}: its header is damaged"
            header = json.loads(f.read(n))
    except (OSError, ValueError) as err:
        return f"{path.name} does not read: {err}"
    ends = [int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)
            and isinstance(v.get("data_offsets"), list) and len(v["data_offsets"]) == 2]
    if ends and 8 + n + max(ends) > size:
        return f"{path.name} is {size:,} bytes, its tensors need {8 + n + max(ends):,}"
    return None


def verify(ckpt: HfCheckpoint) -> list[str]:
    """What is wrong with a checkpoint-N: torn, or a weights file that does not read (empty: intact)."""
    if not ckpt.complete:
        return [ckpt.why or "torn"]
    return [p for p in (_safetensors_problem(f) for f in sorted(ckpt.path.glob("*.safetensors"))) if p]


EXPORTED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json", "vocab.json", "merges.txt", "tokenizer.model", "chat_template.jinja")


def export(ckpt: HfCheckpoint, out: Path) -> list[Path]:
    """The checkpoint's model as a Hugging Face model directory (`from_pretrained(out)`, no DeepSpeed): its
    config, tokenizer files and safetensors weights, copied (files only, no pickles)."""
    from dscluster.trust import copy_into, open_out_dir

    weights = sorted(ckpt.path.glob("*.safetensors")) + sorted(ckpt.path.glob("*.safetensors.index.json"))
    if not weights:
        raise FileNotFoundError(f"{ckpt.path} holds no safetensors weights")
    # `out` is often <run>/export/NAME, in the node user's run directory: made and written through its
    # descriptor (dscluster.trust), so a planted `export` symlink is refused, never written through.
    dfd = open_out_dir(out)
    done = []
    try:
        for src in [*weights, *(ckpt.path / n for n in EXPORTED if (ckpt.path / n).is_file())]:
            if not src.is_symlink() and copy_into(src, dfd, src.name):
                done.append(out / src.name)
    finally:
        os.close(dfd)
    return done
