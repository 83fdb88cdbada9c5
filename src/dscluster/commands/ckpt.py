"""`dscluster ckpt RUN` (the committed steps), `dscluster ckpt verify RUN` and `dscluster ckpt export RUN`: a
committed step checked, or written as a model that loads without DeepSpeed. The work is in train/checkpoint.py (verify) and train/export.py."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dscluster import console
from dscluster.commands.runview import find_run
from dscluster.errors import ExitCode, UsageError
from dscluster.i18n import tr
from dscluster.runs.records import store


def chosen_step(save_dir: Path, step: int | None, run_id: str) -> int:
    from dscluster.train.commits import (
        COMMIT_FILE,
        commit_problem,
        committed_steps,
        not_committed_error,
        step_dirs,
        tag_for,
    )

    steps = committed_steps(save_dir)
    if step is not None and step not in steps and (save_dir / tag_for(step) / COMMIT_FILE).exists():
        # A COMMIT.json that does not read (truncated by a full disk, a disk fault, a hand edit) commits nothing.
        raise not_committed_error(save_dir / tag_for(step), commit_problem(save_dir / tag_for(step)) or "?", run_id)
    broken = [s for s in step_dirs(save_dir) if s.committed and s.step not in steps and (not steps or s.step > steps[-1])]
    if step is None and broken:
        # The newest step's COMMIT.json does not read: never taken silently, never taken at all.
        if not steps:
            raise not_committed_error(broken[-1].path, commit_problem(broken[-1].path) or "?", run_id)
        print(f"{console.WARN} " + tr("{tag} is not committed ({problem}): using step-{n}", tag=broken[-1].tag,
                                      problem=commit_problem(broken[-1].path), n=steps[-1]), file=sys.stderr)
    if not steps:
        raise UsageError(tr("run {id} has no committed checkpoint in {path}", id=run_id, path=save_dir),
                         tr("a step is committed when every rank has saved it; list them with: dscluster ckpt {id}",
                            id=run_id), setting="RUN")
    if step is None:
        return steps[-1]
    if step not in steps:
        raise UsageError(tr("run {id} has no committed step-{n}", id=run_id, n=step),
                         tr("committed steps: {have}", have=", ".join(f"step-{s}" for s in steps)), setting="--step")
    return step


def _locate(args) -> tuple[Path, Path, str, int]:

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    save_dir = store.save_dir(run_dir, record)
    return run_dir, save_dir, record.id, chosen_step(save_dir, args.step, record.id)


def _hf_chosen(args):
    """(run dir, run id, the chosen checkpoint-N) when the run holds a Hugging Face Trainer's checkpoints and
    no dscluster-committed step; else None. `--step N` picks checkpoint-N, else the newest complete one."""
    from dscluster.runs.views.hfview import hf_checkpoints
    from dscluster.train.commits import committed_steps

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    if committed_steps(store.save_dir(run_dir, record)):
        return None
    found = hf_checkpoints(record, run_dir)
    if not found:
        return None
    if args.step is not None:
        chosen = [c for c in found if c.step == args.step]
        if not chosen:
            raise UsageError(tr("run {id} has no checkpoint-{n}", id=record.id, n=args.step),
                             tr("its checkpoints: {have}", have=", ".join(c.name for c in found)), setting="--step")
        return run_dir, record.id, chosen[-1]
    complete = [c for c in found if c.complete]
    if not complete:
        raise UsageError(tr("run {id} has no complete checkpoint-N ({n} torn)", id=record.id, n=len(found)),
                         tr("list them with: dscluster ckpt {id}", id=record.id), setting="RUN")
    return run_dir, record.id, complete[-1]


def _hf_verify(args, run_id: str, ckpt) -> int:
    from dscluster.hfckpt import verify as hf_verify
    from dscluster.train.commits import CheckpointError

    t0 = time.monotonic()
    problems = hf_verify(ckpt)
    seconds = time.monotonic() - t0
    if args.json:
        print(json.dumps({**ckpt.to_json(), "problems": problems, "seconds": round(seconds, 2)}, indent=2))
        return ExitCode.OK if not problems else ExitCode.FAILURE
    if problems:
        for problem in problems:
            print(f"  {console.FAIL} {problem}")
        raise CheckpointError(tr("{tag} of run {id} is not usable ({n} problem(s) above)", tag=ckpt.name, id=run_id,
                                 n=len(problems)),
                              tr("a restart moves torn checkpoints aside (never deleted) and resumes from the newest "
                                 "complete one"), setting="--step")
    print(f"{console.OK} " + tr("{tag}: complete ({how}); its weights read ({s:.1f} s)", tag=ckpt.name,
                                how=tr("committed by dscluster.hf") if ckpt.exact else
                                tr("trainer_state.json, weights and DeepSpeed's shards are there"), s=seconds))
    print(console.next_steps(f"dscluster ckpt export {run_id} --step {ckpt.step}"))
    return ExitCode.OK


def cmd_verify(args) -> int:
    from dscluster.train.checkpoint import load_problems
    from dscluster.train.commits import CheckpointError, read_commit, tag_for, verify

    hf = _hf_chosen(args)
    if hf is not None:
        return _hf_verify(args, hf[1], hf[2])
    _run_dir, save_dir, run_id, step = _locate(args)
    t0 = time.monotonic()
    for _ in range(5):
        step_dir = save_dir / tag_for(step)
        commit = read_commit(step_dir) or {}  # chosen_step took a committed step: its COMMIT.json reads
        problems = verify(step_dir)
        if not problems:
            problems = load_problems(step_dir)
        if not problems or step_dir.exists():
            break
        # Gone while it was read: a live run's retention removed it (it keeps its newest steps). Not
        # damage: the newest committed step is verified instead, unless --step asked for this one.
        if args.step is not None:
            raise CheckpointError(
                tr("{tag} of run {id} was removed while it was being verified: the run's retention keeps only its "
                   "newest checkpoints", tag=tag_for(step), id=run_id),
                tr("list the steps it has now: dscluster ckpt {id}", id=run_id), setting="--step")
        step = chosen_step(save_dir, None, run_id)
    hashed = isinstance(commit.get("sha256"), dict)
    files = commit.get("files") or {}
    size = sum(files.values())
    seconds = time.monotonic() - t0
    if args.json:
        print(json.dumps({"step": step, "path": str(step_dir), "files": len(files), "bytes": size, "hashed": hashed,
                          "problems": problems, "seconds": round(seconds, 2)}, indent=2))
        return ExitCode.OK if not problems else ExitCode.FAILURE
    if problems:
        for problem in problems:
            print(f"  {console.FAIL} {problem}")
        raise CheckpointError(
            tr("{tag} of run {id} is damaged ({n} problem(s) above)", tag=tag_for(step), id=run_id, n=len(problems)),
            tr("move it aside (mv {path} {path}.damaged): a restart then resumes from the committed step before it",
               path=step_dir), setting="--step")
    how = tr("sizes and content hashes match COMMIT.json") if hashed else \
        tr("sizes match COMMIT.json (committed before content hashes were recorded)")
    print(f"{console.OK} " + tr("{tag}: {n} files, {mib:,.1f} MiB: {how}; loads on CPU ({s:.1f} s)", tag=tag_for(step),
                                n=len(files), mib=size / 2**20, how=how, s=seconds))
    print(console.next_steps(f"dscluster ckpt export {run_id} --step {step}", f"dscluster restart {run_id}"))
    return ExitCode.OK


class Progress:
    """A one-line progress bar on stderr for a terminal, a line per 10% otherwise."""

    def __init__(self, label: str):
        self.label, self.tty, self.shown = label, sys.stderr.isatty(), -1

    def __call__(self, done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if self.tty:
            bar = "#" * (pct // 4) + "." * (25 - pct // 4)
            print(f"\r{self.label} [{bar}] {pct:3d}% {done / 2**20:,.0f}/{total / 2**20:,.0f} MiB", end="",
                  file=sys.stderr, flush=True)
            if done >= total:
                print(file=sys.stderr)
        elif pct // 10 != self.shown // 10 or done >= total:
            self.shown = pct
            print(f"{self.label} {pct}%", file=sys.stderr, flush=True)


def default_out(run_dir: Path, step: int, fmt: str) -> Path:
    return run_dir / "export" / (f"step-{step}.pt" if fmt == "fp32" else f"step-{step}-{fmt}")


def cmd_export(args) -> int:
    from dscluster.train.commits import tag_for
    from dscluster.train.export import export

    hf = _hf_chosen(args)
    if hf is not None:
        from dscluster.hfckpt import export as hf_export

        run_dir, run_id, ckpt = hf
        out = Path(args.out).absolute() if args.out else run_dir / "export" / ckpt.name
        files = hf_export(ckpt, out)
        if args.json:
            print(json.dumps({"path": str(out), "format": "hf", "files": [p.name for p in files]}, indent=2))
            return ExitCode.OK
        print(f"{console.OK} " + tr("{tag} exported as a Hugging Face model directory: {path} ({n} files)",
                                    tag=ckpt.name, path=out, n=len(files)))
        print("  " + tr("load it with: {code}", code=f"AutoModelForCausalLM.from_pretrained('{out}')"))
        return ExitCode.OK
    run_dir, save_dir, run_id, step = _locate(args)
    out = Path(args.out).absolute() if args.out else default_out(run_dir, step, args.format)
    done = export(save_dir / tag_for(step), out, args.format, progress=Progress(tr("exporting {tag}", tag=tag_for(step))))
    if args.json:
        print(json.dumps({"path": str(done.path), "format": done.format, "tensors": done.tensors, "bytes": done.bytes,
                          "seconds": round(done.seconds, 2)}, indent=2))
        return ExitCode.OK
    print(f"{console.OK} " + tr("{tag} exported as {fmt}: {path} ({n} tensors, {mib:,.1f} MiB, {s:.1f} s)",
                                tag=tag_for(step), fmt=done.format, path=done.path, n=done.tensors,
                                mib=done.bytes / 2**20, s=done.seconds))
    loader = {"fp32": f"torch.load('{done.path}', weights_only=True)",
              "safetensors": f"dscluster.train.export.load_state_dict('{done.path}')",
              "hf": f"dscluster.train.export.load_gpt('{done.path}')"}[done.format]
    print("  " + tr("load it with: {code}", code=loader))
    return ExitCode.OK


def checkpoints(save_dir: Path) -> list[dict]:
    """Committed checkpoints (runs.views.summary.checkpoints), oldest first, as `ckpt --json` prints them."""
    from dscluster.runs.views.summary import checkpoints as committed

    return [c.to_json() for c in committed(save_dir)]


CKPT_ACTIONS = ("verify", "export")


def cmd_ckpt(args) -> int:
    words = list(args.words)
    action = words.pop(0) if len(words) == 2 and words[0] in CKPT_ACTIONS else None
    if len(words) != 1:
        raise UsageError(tr("dscluster ckpt takes RUN, verify RUN or export RUN, not {words}",
                            words=" ".join(args.words)), tr("e.g. dscluster ckpt verify RUN --step 100"), setting="RUN")
    args.run = words[0]
    if action is not None:
        return cmd_verify(args) if action == "verify" else cmd_export(args)
    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    save_dir = store.save_dir(run_dir, record)
    items = checkpoints(save_dir)
    from dscluster.runs.views.hfview import hf_checkpoints

    hf = hf_checkpoints(record, run_dir)
    if args.json:
        print(json.dumps(items + [{**c.to_json(), "hf": True} for c in hf], indent=2))
        return ExitCode.OK
    if hf:  # a Hugging Face Trainer's checkpoint-N, complete or torn
        rows = [[c.name, f"{c.size() / 2**20:,.1f} MiB",
                 console.OK + (" " + tr("(committed by dscluster.hf)") if c.exact else "") if c.complete else
                 f"{console.WARN} " + tr("torn: {why}", why=c.why), str(c.path)] for c in hf]
        print(console.table([tr("checkpoint"), tr("size"), tr("complete"), tr("path")], rows))
    if not items and not hf:
        print(tr("no committed checkpoint yet in {path}", path=save_dir))
    elif items:
        rows = [[str(c["step"]), f"{c['bytes'] / 2**20:,.1f} MiB",
                 time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c["committed"])),
                 console.OK if not c["damage"] else f"{console.FAIL} " + tr("damaged: {why}", why=c["damage"]),
                 c["path"]] for c in items]
        print(console.table([tr("step"), tr("size"), tr("committed"), tr("intact"), tr("path")], rows))
    print(console.next_steps(f"dscluster restart {run_dir.name}   # " + tr("resumes from the newest intact one"),
                             f"dscluster ckpt verify {run_dir.name}", f"dscluster ckpt export {run_dir.name}",
                             f"dscluster status {run_dir.name}"))
    return ExitCode.OK
