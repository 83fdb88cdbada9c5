"""Which collective timed out and which ranks never arrived, read from the ranks' logs (explain.py's answer to a
collective timeout fills its cause with these): pure parsing, no I/O."""

from __future__ import annotations

import re

from dscluster import rankerror

_WORK = re.compile(r"Work(?:NCCL|Gloo)\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)")
_RANK_OF = re.compile(r"\[(?:PG [^\][]*?)?Rank (?P<rank>\d+)\]")
_RECV = re.compile(r"Timed out waiting \d+ms for (?P<op>recv|send) operation")
_MONITORED = re.compile(r"Ranks? (?P<ranks>[\d, ]+) failed to pass monitoredBarrier")


def collective_params(streams: list[rankerror.Stream]) -> dict:
    """Which collective timed out and which ranks never arrived, where the logs say so: NCCL's watchdog names
    the operation and its sequence number on each waiting rank; a rank that reports an earlier sequence number,
    or none, among the ranks seen, did not reach it."""
    waiting: dict[int, int] = {}
    ops: dict[int, str] = {}
    seen: set[int] = set()
    missing: set[int] = set()
    for st in streams:
        if st.rank is not None:
            seen.add(st.rank)
        for line in st.lines:
            m = _WORK.search(line)
            if m and "timeout" in line.lower():
                r = _RANK_OF.search(line)
                rank = int(r.group("rank")) if r else st.rank
                seq = int(m.group("seq") or 0)
                ops[seq] = m.group("op").lower()
                if rank is not None:
                    seen.add(rank)
                    waiting[rank] = max(seq, waiting.get(rank, -1))
                continue
            m = _RECV.search(line)
            if m:
                ops.setdefault(-1, m.group("op"))
            m = _MONITORED.search(line)
            if m:
                missing |= {int(x) for x in re.findall(r"\d+", m.group("ranks"))}
    op_text = missing_text = ""
    if ops:
        top = max(ops)
        op_text = f"{ops[top]}" + (f" (sequence number {top})" if top > 0 else "") + ". "
        if waiting:
            missing |= {r for r in seen if waiting.get(r, -1) < top}
    if missing:
        missing_text = "Ranks that never arrived: " + ", ".join(str(r) for r in sorted(missing)) + ". "
    return {"op_text": op_text, "missing_text": missing_text}
