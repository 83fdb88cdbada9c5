"""`dscluster data prepare SRC... --out DIR`: text files -> memory-mapped token shards for the trainer."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from dscluster.console import OK, WARN, next_steps, table
from dscluster.i18n import tr, tr_n


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help=tr("prepare training data (token shards)"),
                                   description=tr("Prepare text for the reference trainer."))
    verbs = parser.add_subparsers(dest="data_command", metavar="ACTION")
    prep = verbs.add_parser(
        "prepare", help=tr("tokenize .txt/.md/.py/.rst/.jsonl files into token shards + meta.json"),
        description=tr("Tokenize text files (directories are searched recursively, in sorted order) into "
                       "memory-mapped token shards and meta.json. Each document goes to train or val by a hash "
                       "of its name, so the split is the same on every machine."))
    prep.add_argument("sources", nargs="*", metavar="SRC", help=tr("files or directories (default: the stdlib corpus)"))
    prep.add_argument("--out", help=tr("output directory (required with SRC; default <shared>/data/stdlib)"))
    prep.add_argument("--tokenizer", default="byte",
                      help=tr("'byte' (default: UTF-8 bytes, nothing to download) or a local tokenizer.json"))
    prep.add_argument("--val-fraction", type=float, default=0.05, help=tr("share of documents held out (default 0.05)"))
    prep.add_argument("--text-field", default="text", help=tr("field holding the text in .jsonl lines (default text)"))
    prep.add_argument("--force", action="store_true", help=tr("replace --out if it already holds prepared data"))
    prep.set_defaults(func=cmd_prepare)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_prepare(args: argparse.Namespace) -> int:
    from dscluster.data.corpus import ensure_stdlib_corpus
    from dscluster.data.prepare import prepare
    from dscluster.data.shards import read_meta
    from dscluster.data.tokenizer import load_tokenizer
    from dscluster.errors import UsageError

    if args.sources:
        if not args.out:
            raise UsageError(tr("--out DIR is required with SRC"), tr("dscluster data prepare SRC... --out DIR"))
        tokenizer = load_tokenizer(args.tokenizer)
        meta = prepare(args.sources, args.out, tokenizer, val_fraction=args.val_fraction, text_field=args.text_field,
                       force=args.force)
        out = args.out
    else:
        if args.out:
            raise UsageError(tr("--out needs SRC files"), tr("dscluster data prepare SRC... --out DIR"))
        out, _ = ensure_stdlib_corpus()
        meta = read_meta(out)
    rows = [[split, f"{sum(info['tokens']):,}", str(info["documents"]), str(len(info["files"]))]
            for split, info in meta["splits"].items()]
    print(f"{OK} " + tr("prepared {out} ({tok} tokenizer, vocab {v}, {dtype})", out=out,
                         tok=meta["tokenizer"]["type"], v=meta["vocab_size"], dtype=meta["dtype"]))
    print(table([tr("split"), tr("tokens"), tr("documents"), tr("shards")], rows))
    skipped = meta["sources"].get("skipped_binary", 0) if isinstance(meta.get("sources"), dict) else 0
    if skipped:
        print(f"{WARN} " + tr_n(skipped, "skipped {n} binary file among the sources (a NUL byte: not text)",
                                 "skipped {n} binary files among the sources (a NUL byte: not text)"))
    # Absolute: the ranks may start in another directory (or on another node of a shared mount).
    # --local 2: without a cluster spec, launch has no hosts; the trainer builds its own ds_config.
    where = shlex.quote(str(Path(out).resolve()))
    print(next_steps(f"dscluster demo --data {where}",
                     f"dscluster launch --local 2 -m dscluster.train --data {where} --deepspeed"))
    return 0
