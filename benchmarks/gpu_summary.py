"""Markdown tables from gpu_throughput.py's JSON lines (what RESULTS.md shows)."""

from __future__ import annotations

from typing import Any

Rec = dict[str, Any]


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join("" if c is None else str(c) for c in cells) + " |"


def _table(head: list[str], rows: list[list[Any]]) -> str:
    return "\n".join([_row(head), _row(["---"] * len(head))] + [_row(r) for r in rows])


def _vocab(r: Rec) -> int:
    """The padded vocabulary a row trained with (trainer rows: 0 = the byte vocabulary, 257 -> 320)."""
    cfg = r.get("config", {})
    v = cfg.get("vocab_size") if r.get("bench") == "hf_baseline" else (cfg.get("vocab") or 257)
    return (int(v or 257) + 63) // 64 * 64


def _run(r: Rec) -> str:
    """Which results file (one per device call) a row came from: raw/h200_s2_call3.jsonl -> s2_call3."""
    name = str(r.get("_source", "")).rsplit("/", 1)[-1]
    return name.removeprefix("h200_").removesuffix(".jsonl")


def _options(cfg: dict) -> str:
    """A row's speed options: the SwiGLU (Triton kernel or Inductor's), attention layout, precision.
    Rows from before these keys existed ran Inductor's SwiGLU in the (B,H,T,hd) layout, in bf16."""
    kernels = {"off": "inductor-swiglu"}.get(cfg.get("kernels", "off"), cfg.get("kernels"))
    if "argv" in cfg and "--kernels" not in cfg["argv"]:
        kernels = "trainer-default"  # a trainer_cli row that left --kernels to the trainer
    return "+".join([kernels, cfg.get("layout", "bhtd"), cfg.get("precision", "bf16")])


def _key(r: Rec) -> tuple:
    return (r.get("preset"), r.get("micro_batch"), r.get("seq_len"), _vocab(r), r.get("grad_accum", 1))


def summarize(records: list[Rec]) -> str:
    # MFU ÷ ceiling uses the ceiling timed in the same run (same machine, same moment) when there is one.
    by_source = {r.get("_source"): r["tflops"] for r in records if r.get("bench") == "matmul_ceiling"}
    ceilings = sorted(by_source.values())
    runs = [r for r in records if r.get("bench") in ("trainer", "trainer_cli", "hf_baseline", "recipe")]
    out = []
    if ceilings:
        out.append(f"Measured bf16 matmul ceiling: **{' / '.join(str(c) for c in ceilings)} TFLOP/s** "
                   f"({ceilings[0] / 989:.1%}–{ceilings[-1] / 989:.1%} of the 989 TFLOP/s peak; one per run)\n")
    rows = []
    for r in runs:
        cfg = r.get("config", {})
        mfu = r.get("mfu")
        ceiling = by_source.get(r.get("_source")) or (ceilings[-1] if ceilings else None)
        rows.append([_run(r), r["bench"], r.get("label") or "", r.get("preset"), _vocab(r), r.get("world_size"), r.get("micro_batch"),
                     r.get("grad_accum", 1), r.get("zero_stage"), r.get("compile", "off"), cfg.get("attn", ""),
                     cfg.get("ckpt_act", 0), cfg.get("inductor") or "", _options(cfg) if r["bench"] != "hf_baseline" else "-", f"{r['tokens_per_s']:,.0f}", f"{r['tokens_per_s_per_gpu']:,.0f}",
                     r.get("tflops_per_gpu"), f"{mfu:.1%}" if mfu is not None else "",
                     f"{mfu * 989 / ceiling:.2f}" if (ceiling and mfu is not None) else "", r.get("peak_mem_gib")])
    if rows:
        out.append(_table(["run", "what", "label", "preset", "vocab", "GPUs", "micro-batch", "grad-accum", "ZeRO", "compile",
                           "attention", "act-ckpt", "inductor", "kernels/layout/precision", "tok/s", "tok/s/GPU", "TFLOP/s/GPU", "MFU", "MFU÷ceiling", "peak GiB"], rows))
    # trainer vs baseline at the same size and batch, one GPU
    best: dict[tuple, Rec] = {}
    for r in runs:
        # against the baseline in its own precision: bf16 rows only
        if r["bench"] in ("trainer", "trainer_cli") and r.get("world_size") == 1 \
                and r.get("config", {}).get("precision", "bf16") == "bf16":
            k = _key(r)
            if k not in best or r["tokens_per_s"] > best[k]["tokens_per_s"]:
                best[k] = r
    cmp_rows = []
    for r in runs:
        if r["bench"] == "hf_baseline" and r.get("world_size") == 1 and _key(r) in best:
            t = best[_key(r)]
            cmp_rows.append([r["preset"], _vocab(r), r["micro_batch"], r.get("grad_accum", 1),
                             f"{t['tokens_per_s']:,.0f}", f"{r['tokens_per_s']:,.0f}",
                             f"{t['tokens_per_s'] / r['tokens_per_s']:.2f}×"])
    if cmp_rows:
        out.append("\n" + _table(["preset", "vocab", "micro-batch", "grad-accum", "trainer tok/s", "HF baseline tok/s",
                                  "speed-up"], cmp_rows))
    # scaling: per-GPU throughput on N GPUs over one GPU, same bench/preset/batch/ZeRO stage when present
    sc_rows = []
    for r in runs:
        if r.get("world_size", 1) > 1:
            ones = [o for o in runs if o["bench"] == r["bench"] and o.get("world_size") == 1 and _key(o) == _key(r)]
            same = [o for o in ones if o.get("zero_stage") == r.get("zero_stage")] or ones
            # the one-GPU figure from the same session (same machine), when there is one
            same = [o for o in same if o.get("_source") == r.get("_source")] or same
            if same:
                o = max(same, key=lambda x: x["tokens_per_s"])
                sc_rows.append([r["bench"], r["preset"], r["micro_batch"], r.get("zero_stage"), r["world_size"],
                                f"{o['tokens_per_s_per_gpu']:,.0f}", f"{r['tokens_per_s_per_gpu']:,.0f}",
                                f"{r['tokens_per_s_per_gpu'] / o['tokens_per_s_per_gpu']:.1%}"])
    if sc_rows:
        out.append("\n" + _table(["what", "preset", "micro-batch", "ZeRO", "GPUs", "tok/s/GPU on 1",
                                  "tok/s/GPU on N", "scaling efficiency"], sc_rows))
    disk = [r for r in records if r.get("bench") == "disk_write"]
    ck = [r for r in records if r.get("bench") == "checkpoint"]
    if disk or ck:
        # each save is compared with the disk speed measured in the same session
        disk_of = {x.get("_source"): x["gb_per_s"] for x in disk}
        d = max(disk_of.values(), default=None)
        ck_rows = []
        for c in ck:
            dd = disk_of.get(c.get("_source"), d)
            ck_rows.append([_run(c), c["preset"], c.get("serialization", "default"), f"{c['bytes'] / 1e9:.1f}", c["save_s"],
                            c["save_gb_per_s"], c["load_s"], c["load_gb_per_s"], dd,
                            f"{c['save_gb_per_s'] / dd:.0%}" if dd else ""])
        out.append("\n" + _table(["run", "preset", "torch.save", "state GB", "save s (fsync'd)", "save GB/s", "load s", "load GB/s",
                                  "disk dd GB/s", "save ÷ disk"], ck_rows or [["", "", "", "", "", "", "", "", d, ""]]))
    errors = [r for r in records if r.get("bench") == "error"]
    if errors:
        out.append("\nFailed cases:\n" + "\n".join(f"- `{e['case']}`: {e['error']}" for e in errors))
    return "\n".join(out)
