"""The README's command blocks, and the ONE list of what cannot run here.

Every ```bash block of README.md, README.zh-TW.md and docs/ is run by tests/readme/test_readme_blocks.py
exactly as written (as root, from the repository root, default DSCLUSTER_HOME, the default simulated
cluster), one command after another in one shell, each expected to exit 0 unless EXPECT says otherwise.
A block is keyed by its id: a hash of its commands without comments or blank lines, so the English and
zh-TW copies of a block share an id (run once, both covered) and a changed command is a new block.

What a reader substitutes is substituted here too, and only that:
- `RUN`, `RUN2`: the newest run of the cluster plain `dscluster runs` addresses (the one just started),
  or where RUN_MEANS says so for a block, the newest run that has what the block needs;
- files the README takes as the reader's own (GIVEN: made before the command, removed afterwards).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("README.md", "README.zh-TW.md", "docs/**/*.md")

# ---- the one list: blocks that cannot run on this machine, by id, with the reason -----------------------
NOT_HERE: dict[str, str] = {
    "9a91d2c92c": "real servers: gpu01/gpu02 over your own SSH, an NFS mount, Docker with GPUs "
                  "(rehearsed on simulated hosts by tests/container/test_node_image.py)",
    "62c38246a3": "your cluster spec and ds_config.json on real nodes "
                  "(tests/cluster/test_build_ops_sim.py runs node build-ops on the simulated cluster)",
    "a51c22ba53": "a real Slurm cluster: partition gpu, GPU nodes, salloc (the simulated Slurm block runs)",
    "f689374444": "the recipe's real hostfile /workspace/hostfile, master 10.0.0.1 and your train.py "
                  "(tests/cluster/test_launch_cluster.py and test_user_script.py run them on the simulated cluster)",
    "3c11cbfdd9": "the reader's own train.py and ds_config.json, on a simulated cluster already up "
                  "(tests/cluster/test_cluster_health.py runs sim slow, doctor --collective naming the node, "
                  "launch --exclude-unhealthy and the --allow-shrink restart on the simulated cluster)",
    "35eef56bfe": "your train.py and ds.json on real GPU servers gpu01/gpu02, shared by two launches "
                  "(tests/cluster/test_gpu_leases_sim.py runs the refusal, --wait, queue, stop and the owner's "
                  "refusal on the simulated cluster)",
    "0d61415c0e": "makes OS accounts alice and bob on this machine (the reader's alice.pub) and leaves JupyterHub on "
                  "port 8000 (tests/cluster/test_hub_sim.py runs user add, hub start, the logins in Chromium, hub stop "
                  "and user remove on the simulated cluster)",
    "4f74cbed36": "your train.py and ds.json, and node3 of a cluster of 4 or more nodes "
                  "(tests/cluster/test_shrink_resume.py runs restart --hosts and --allow-shrink on the simulated cluster)",
}

# Single commands that cannot run here wherever they appear, by their text (comments stripped).
SKIPPED_COMMANDS: dict[str, str] = {
    "scripts/test.sh": "the whole suite, which this test is part of (CI runs it: .ci/run)",
}

# What the README takes as the reader's own, made before the command and removed after the session.
GIVEN: dict[str, str] = {
    # a corpus of the reader's: jsonl with a text field (data prepare's documented input)
    "dscluster data prepare ~/corpus/*.jsonl --out data/mine": "__given_corpus ~/corpus",
}

# A block whose RUN is not the newest run but the newest with what it needs ("checkpointed": a committed
# checkpoint, as the Checkpoints section's commands read one).
RUN_MEANS: dict[str, str] = {
    "5945d8ab8e": "checkpointed",
}

# What the reader does between two commands, said in the README's comments: keyed by "<block id>#<n>"
# (the n-th command of the block, from 1), a shell line run before that command.
BEFORE: dict[str, str] = {
    # "...a node dies and comes back:" / "the supervisor tore the run down on every node and restarted it"
    "106e5f464b#7": "__wait_event restart 600",
    # "a minute later: failed, Slurm job N reached its time limit"
    "87223804fb#9": "__wait_status failed 600",
}

# Commands whose end the README states: exit code ("rc", default 0) and lines it promises ("out": regexes
# searched in stdout+stderr); keyed by the command's text (comment stripped) or by "<block id>#<n>".
EXPECT: dict[str, dict] = {
    "dscluster sim up 3": {"out": [r"ssh to every node works"]},
    "dscluster demo": {"out": [r"loss"]},
    "dscluster demo --nodes 3": {"out": [r"3 nodes", r"loss"]},
    "106e5f464b#4": {"out": [r"demo-"]},  # "the run is listed"
    "sinfo": {"out": [r"sim\*\s+up\s+infinite\s+3\s+idle\s+node\[0-2\]"]},
    "106e5f464b#7": {"out": [r"restart"]},  # status RUN after the crash: the supervisor restarted it
    "87223804fb#9": {"rc": 5, "out": [r"time limit"]},  # status RUN exits 5 for a failed run
}

# Paths (relative to the repository root) that runnable blocks create; removed after the session when
# they did not exist before it.
CREATES = ("data/mine",)


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository root
    line: int  # of the ```bash fence
    text: str

    @property
    def commands(self) -> list[str]:
        return commands_of(self.text)

    @property
    def id(self) -> str:
        return block_id(self.commands)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def strip_comment(line: str) -> str:
    """`line` without its trailing `# comment` (a # at the start or after whitespace, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def commands_of(text: str) -> list[str]:
    """The block's commands: comments and blank lines dropped, `\\` continuations joined into one."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = strip_comment(raw)
        if pending:
            line = pending + " " + line.strip()
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        if line.strip():
            out.append(re.sub(r"\s+", " ", line.strip()))
    if pending:
        out.append(pending.strip())
    return out


def block_id(commands: list[str]) -> str:
    return hashlib.sha1("\n".join(commands).encode()).hexdigest()[:10]


def blocks(root: Path = ROOT) -> list[Block]:
    """Every ```bash block of SOURCES, in document order (README.md first)."""
    found: list[Block] = []
    files: list[Path] = []
    for pattern in SOURCES:
        files += sorted(p for p in root.glob(pattern) if p not in files)
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() in ("```bash", "```sh", "```shell", "```console"):
                start, body = i + 1, []
                i += 1
                while i < len(lines) and lines[i].strip() != "```":
                    body.append(lines[i])
                    i += 1
                found.append(Block(str(path.relative_to(root)), start, "\n".join(body)))
            i += 1
    return found


def unique_blocks(root: Path = ROOT) -> list[tuple[Block, list[Block]]]:
    """Each distinct block once (its first copy) with every copy of it (en and zh-TW), in order."""
    by_id: dict[str, list[Block]] = {}
    for b in blocks(root):
        by_id.setdefault(b.id, []).append(b)
    return [(copies[0], copies) for copies in by_id.values()]


HOW_TO_MARK = """\
If this block cannot run on this machine (real servers, a GPU, a Slurm cluster outside the simulation,
Docker on real hosts...), list it with the reason in tests/readme/readme_blocks.py, in NOT_HERE:
    "{id}": "<why it cannot run here, and which test covers it if one does>",
A single command that cannot run here wherever it appears goes in SKIPPED_COMMANDS, keyed by its text
without the comment. Files the README takes as the reader's own go in GIVEN (made before the command).
Otherwise make the block run as written (README text or product), and state what it promises in EXPECT."""
