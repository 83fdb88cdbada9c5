"""Where every rank of a run is, right now: a py-spy dump of each rank on each node, grouped.

A hung collective is the most expensive failure of multi-node training, and the stall detector alone
only says that nothing moved. What tells the cause is the odd rank out: N-1 ranks wait in all_reduce,
one is somewhere else (data loading, a barrier nobody else reached, a sleep). So:

- on each node (`python -m dscluster.runs.views.stacks --node RUN_ID`, over the cluster's own ssh, as the node
  user that owns the ranks: same uid, so py-spy may read their memory without root or CAP_SYS_PTRACE),
  the run's ranks are found by their DSCLUSTER_RUN_ID (like teardown finds them) and RANK, and py-spy
  dumps each one's Python stack (no pause longer than a read of its memory: `--nonblocking`);
- here, the dumps are grouped by where each rank waits (its innermost frame) and the line of the user's
  own code that led there: "ranks 0-1 in all_reduce at train.py:88; rank 2 on node2 in load_batch at
  data.py:40 (time.sleep(3600))";
- `dscluster stacks RUN` prints that; the supervisor takes it when the stall detector fires, before the
  teardown, keeps it in <run>/stacks/, and the failure explanation quotes the odd rank out.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dscluster.safepython import module_argv

if TYPE_CHECKING:
    from dscluster.runs.records.record import RunRecord

STACKS_DIR = "stacks"
PY_SPY_TIMEOUT_S = 20.0
NODE_TIMEOUT_S = 45.0


@dataclass(frozen=True)
class Frame:
    function: str
    file: str  # as py-spy shows it: short (relative to sys.path) when it can
    line: int
    library: bool = False  # site-packages or the standard library: not the user's own code
    code: str = ""  # the source line, for the user's own frames


@dataclass(frozen=True)
class RankStack:
    node: str
    pid: int
    rank: int | None
    frames: tuple[Frame, ...] = ()  # the main thread's, innermost first
    idle: bool = False
    error: str | None = None

    def where(self) -> str:
        return self.frames[0].function if self.frames else "?"

    def user_frame(self) -> Frame | None:
        """The innermost frame of the user's own code: the line that led to where the rank waits."""
        return next((f for f in self.frames if not f.library), None)


@dataclass(frozen=True)
class Group:
    where: str
    at: str  # user file:line, or "" when no user frame
    code: str
    ranks: tuple[RankStack, ...]

    def describe(self, total_nodes: int) -> str:
        nums = sorted(r.rank for r in self.ranks if r.rank is not None)
        who = _ranks_text(nums) if nums else f"pid {', '.join(str(r.pid) for r in self.ranks)}"
        nodes = sorted({r.node for r in self.ranks})
        on = f" on {', '.join(nodes)}" if len(nodes) < total_nodes or total_nodes == 1 else ""
        text = f"{who}{on} in {self.where}"
        if self.at:
            text += f" at {self.at}"
        if self.code:
            text += f" ({self.code})"
        return text


@dataclass(frozen=True)
class StackReport:
    run_id: str
    taken: str  # ISO time
    seconds: float  # how long the collection took
    ranks: tuple[RankStack, ...]
    node_errors: Mapping[str, str] = field(default_factory=dict)  # node -> why it gave no stacks
    reason: str = "requested"  # requested | stalled

    def groups(self) -> list[Group]:
        """Ranks grouped by where they wait and the user line that led there; the largest group first."""
        buckets: dict[tuple[str, str, str], list[RankStack]] = {}
        for r in self.ranks:
            if r.error:
                continue
            uf = r.user_frame()
            key = (r.where(), f"{uf.file}:{uf.line}" if uf else "", uf.code if uf else "")
            buckets.setdefault(key, []).append(r)
        groups = [Group(w, at, code, tuple(sorted(rs, key=_rank_key))) for (w, at, code), rs in buckets.items()]
        return sorted(groups, key=lambda g: (-len(g.ranks), _rank_key(g.ranks[0])))

    def odd_one_out(self) -> Group | None:
        """The smallest group when the ranks are not all in one place (the suspect of a hang), else None."""
        groups = self.groups()
        if len(groups) < 2 or len(groups[-1].ranks) == len(groups[0].ranks):
            return None
        return groups[-1]

    def summary(self) -> str:
        nodes = len({r.node for r in self.ranks}) or 1
        parts = [g.describe(nodes) for g in self.groups()]
        parts += [f"rank {r.rank} on {r.node}: no stack ({r.error})" for r in self.ranks if r.error]
        parts += [f"{node}: no stacks ({why})" for node, why in self.node_errors.items()]
        return "; ".join(parts) or "no rank of the run was found"

    def text(self) -> str:
        """The summary, then every rank's full stack (innermost first, like py-spy)."""
        lines = [f"stacks of {self.run_id} at {self.taken} ({self.reason}; collected in {self.seconds:.1f}s)",
                 "", *(f"  {g.describe(len({r.node for r in self.ranks}) or 1)}" for g in self.groups())]
        odd = self.odd_one_out()
        if odd is not None:
            lines += ["", f"odd one out: {odd.describe(1)}"]
        for node, why in self.node_errors.items():
            lines.append(f"  {node}: no stacks ({why})")
        for r in sorted(self.ranks, key=_rank_key):
            lines += ["", f"rank {r.rank} on {r.node} (pid {r.pid}){' idle' if r.idle else ''}:"]
            if r.error:
                lines.append(f"    no stack: {r.error}")
            for f in r.frames:
                lines.append(f"    {f.function} ({f.file}:{f.line})" + (f"  {f.code}" if f.code else ""))
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["summary"] = self.summary()
        odd = self.odd_one_out()
        d["odd_one_out"] = odd.describe(1) if odd else None
        return d


def _rank_key(r: RankStack) -> tuple:
    return (r.rank is None, r.rank if r.rank is not None else 0, r.node, r.pid)


def _ranks_text(nums: list[int]) -> str:
    """[0, 1, 2, 5] -> 'ranks 0-2, 5'; [3] -> 'rank 3'."""
    spans: list[list[int]] = []
    for n in nums:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    text = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)
    return f"rank{'s' if len(nums) > 1 else ''} {text}"


# ---- on the node -------------------------------------------------------------------------------
def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def rank_processes(run_id: str) -> list[tuple[int, int]]:
    """(pid, rank) of the run's ranks on this machine: processes of the run with RANK set whose parent
    is not itself a rank (a data loader worker inherits RANK; it is not another rank)."""
    from dscluster.runs.supervising.reaper import proc_environ, run_pids

    pids = run_pids(run_id)
    ranked = {}
    for pid in pids:
        rank = proc_environ(pid).get("RANK")
        if rank is not None and rank.isdigit() and not _is_mask_wrapper(pid):
            ranked[pid] = int(rank)
    return sorted(((p, r) for p, r in ranked.items() if _ppid(p) not in ranked), key=lambda t: t[1])


def _is_mask_wrapper(pid: int) -> bool:
    """The secret-masking wrapper of a rank (launcher/masklog.py) carries RANK but is not the rank: its child is."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"dscluster.launcher.masklog" in f.read().split(b"\0")
    except OSError:
        return False


def find_py_spy() -> str | None:
    """py-spy next to this interpreter, else the one its distribution installed, else on PATH."""
    import shutil

    here = Path(sys.executable).parent / "py-spy"
    if here.is_file():
        return str(here)
    try:
        from importlib.metadata import distribution

        for f in distribution("py-spy").files or ():
            if f.name == "py-spy":
                path = Path(str(distribution("py-spy").locate_file(f)))
                if path.is_file():
                    return str(path)
    except Exception:  # noqa: BLE001 - not installed as a distribution: try PATH
        pass
    return shutil.which("py-spy")


def _is_library(filename: str) -> bool:
    import sysconfig

    if "/site-packages/" in filename or "/dist-packages/" in filename or filename.startswith("<"):
        return True
    stdlib = sysconfig.get_paths().get("stdlib") or ""
    return bool(stdlib) and filename.startswith(stdlib.rstrip("/") + "/")


def dump_one(py_spy: str, pid: int) -> tuple[list[dict], str | None]:
    """py-spy's JSON threads of one process, or an error."""
    try:
        res = subprocess.run([py_spy, "dump", "--json", "--nonblocking", "--pid", str(pid)], capture_output=True,
                             text=True, timeout=PY_SPY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [], f"py-spy took more than {PY_SPY_TIMEOUT_S:.0f}s"
    except OSError as err:
        return [], f"py-spy could not run: {err}"
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()
        why = tail[0] if tail else f"exit {res.returncode}"
        if "Permission denied" in res.stderr or "Operation not permitted" in res.stderr:
            why += " (py-spy must run as the rank's own user, or with CAP_SYS_PTRACE in a container)"
        return [], why
    try:
        return json.loads(res.stdout), None
    except json.JSONDecodeError:
        return [], "py-spy printed no JSON"


def node_stacks(run_id: str) -> dict[str, Any]:
    """This machine's part: every rank of the run, its main thread's frames (innermost first)."""
    import linecache

    py_spy = find_py_spy()
    procs = rank_processes(run_id)
    if py_spy is None:
        return {"error": "py-spy is not installed on this node (pip install py-spy)", "ranks": []}

    def one(item: tuple[int, int]) -> dict[str, Any]:
        pid, rank = item
        threads, error = dump_one(py_spy, pid)
        main = next((t for t in threads if t.get("thread_name") == "MainThread"), threads[0] if threads else None)
        frames = []
        for f in (main or {}).get("frames") or []:
            filename = f.get("filename") or ""
            lib = _is_library(filename)
            code = "" if lib else linecache.getline(filename, int(f.get("line") or 0)).split("  #")[0].strip()
            frames.append({"function": f.get("name") or "?", "file": f.get("short_filename") or filename,
                           "line": int(f.get("line") or 0), "library": lib, "code": code[:120]})
        return {"pid": pid, "rank": rank, "frames": frames, "idle": bool(main and not main.get("active")),
                "error": error if error else (None if main else "no Python thread")}

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(procs)))) as pool:
        ranks = list(pool.map(one, procs))
    return {"ranks": ranks}


# ---- here --------------------------------------------------------------------------------------
def collect(record: RunRecord, links: Mapping[str, list[str]], *, reason: str = "requested",
            timeout: float = NODE_TIMEOUT_S) -> StackReport:
    """Every rank's stack on every node of the run, in parallel (one ssh per node)."""
    from dscluster.cluster.runner import run_parallel, run_subprocess
    from dscluster.runs.supervising.nodes import node_names

    started = time.monotonic()
    hosts = list(record.launch.host_names) or ["localhost"]
    names = node_names(record)
    def one(host: str):
        link = links.get(host, [])
        # Here (no link), this interpreter: the record's `python` is the node user's to rewrite, and runs only
        # on the nodes, as the node user. Safe-path mode: nothing imported from the caller's directory.
        python = record.launch.python if link else sys.executable
        argv = [*link, *module_argv(python, "dscluster.runs.views.stacks"), "--node", record.id]
        return host, run_subprocess(host, argv, timeout=timeout)

    ranks: list[RankStack] = []
    errors: dict[str, str] = {}
    for host, res in run_parallel(one, hosts):
        node = names.get(host, host)
        try:
            data = json.loads(res.stdout.strip().splitlines()[-1]) if res.ok and res.stdout.strip() else None
        except (json.JSONDecodeError, IndexError):
            data = None
        if data is None:
            tail = (res.stderr or "").strip().splitlines()
            errors[node] = tail[-1] if tail else f"exit {res.returncode}"
            continue
        if data.get("error"):
            errors[node] = data["error"]
        for r in data.get("ranks") or []:
            frames = tuple(Frame(f["function"], f["file"], f["line"], f.get("library", False), f.get("code", ""))
                           for f in r.get("frames") or [])
            ranks.append(RankStack(node, int(r["pid"]), r.get("rank"), frames, bool(r.get("idle")), r.get("error")))
        if not data.get("ranks") and not data.get("error"):
            errors[node] = "no rank of the run is running there"
    from dscluster.runs.records.store import now_iso

    return StackReport(record.id, now_iso(), round(time.monotonic() - started, 2),
                       tuple(sorted(ranks, key=_rank_key)), errors, reason)


def save(run_dir: Path, report: StackReport, attempt: int | None = None) -> Path:
    """<run>/stacks/<time>[-attempt-N].json and .txt; returns the .txt path."""
    from dscluster.fsutil import atomic_write_json, atomic_write_text

    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(run_dir) / STACKS_DIR / (stamp + (f"-attempt-{attempt}" if attempt else ""))
    atomic_write_json(base.with_suffix(".json"), report.to_dict())
    atomic_write_text(base.with_suffix(".txt"), report.text())
    return base.with_suffix(".txt")


def take_at_stall(run_dir: Path, record: RunRecord, links: Mapping[str, list[str]],
                  attempt: int) -> tuple[StackReport | None, Path | None, float, str | None]:
    """The supervisor's part, when the stall detector fires and before the teardown: (report, saved .txt,
    seconds from the call to the saved file, why none). Never raises: a failed collection must not stop
    the teardown."""
    t0 = time.monotonic()
    try:
        report = collect(record, links, reason="stalled")
        path = save(run_dir, report, attempt)
    except Exception as err:  # noqa: BLE001 - diagnostics only; the teardown comes next regardless
        return None, None, time.monotonic() - t0, f"{type(err).__name__}: {err}"
    return report, path, time.monotonic() - t0, None


def latest_saved(run_dir: Path) -> Path | None:
    found = sorted((Path(run_dir) / STACKS_DIR).glob("*.txt"))
    return found[-1] if found else None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--node":
        print("usage: python -m dscluster.runs.views.stacks --node RUN_ID", file=sys.stderr)
        return 2
    print(json.dumps(node_stacks(args[1]), separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
