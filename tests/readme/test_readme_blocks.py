"""The README as a test: every ```bash block of README.md, README.zh-TW.md and docs/ runs exactly as
written, as root from the repository root, with the default DSCLUSTER_HOME and the default simulated
cluster, and ends as the README says (exit codes, the lines it promises). What cannot run here is listed,
with the reason, in one place: readme_blocks.NOT_HERE / SKIPPED_COMMANDS.

The blocks run in document order and build on each other as for a reader (the checkpoint block reads
the runs the earlier blocks made). Each block is one shell (an `export` carries to the next command);
a command that ends other than as stated stops its block and fails the test with its output.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import readme_blocks as blocks
from conftest import reader_env

BLOCK_TIMEOUT_S = 1800

# Shell helpers the substitutions and BEFORE lines use (defined before each block's commands).
PRELUDE = r'''
__PY=%(py)s
__newest() {  # FIELD [checkpointed]: of the newest run (with a committed checkpoint) plain `dscluster runs` lists
  dscluster runs --json 2>/dev/null | "$__PY" -c 'import json, sys
runs = json.load(sys.stdin)
if sys.argv[2:] == ["checkpointed"]:
    runs = [r for r in runs if r.get("last_checkpoint_step") is not None]
runs.sort(key=lambda r: str(r.get("created", "")), reverse=True)  # stable: within a second, the order runs lists
print(runs[0][sys.argv[1]] if runs else "NO-RUN-YET")' "$@"
}
__wait_event() {  # EVENT SECONDS: until the newest run's events.jsonl holds EVENT
  local dir i; dir=$(__newest _dir)
  for ((i = 0; i < $2; i++)); do grep -q "\"event\":\"$1\"" "$dir/events.jsonl" 2>/dev/null && return 0; sleep 1; done
  echo "readme test: no '$1' event in $dir/events.jsonl after $2 s" >&2; return 1
}
__wait_status() {  # STATUS SECONDS: until the newest run's status is STATUS
  local i
  for ((i = 0; i < $2; i++)); do [ "$(__newest status)" = "$1" ] && return 0; sleep 1; done
  echo "readme test: the newest run is not '$1' after $2 s (it is $(__newest status))" >&2; return 1
}
__given_corpus() {  # DIR: a reader's jsonl corpus (text field) when DIR holds none; recorded for cleanup
  ls "$1"/*.jsonl >/dev/null 2>&1 && return 0
  [ -d "$1" ] || { mkdir -p "$1" && echo "$1" >> %(given)s; }
  "$__PY" -c 'import json, pathlib, sys
for f in sorted(pathlib.Path("src/dscluster").rglob("*.py")):
    print(json.dumps({"text": f.read_text(encoding="utf-8")}))' > "$1/readme-example.jsonl"
  echo "$1/readme-example.jsonl" >> %(given)s
}
'''

MARK = "@@readme-command"


def _substituted(command: str, means: str = "") -> str:
    """The reader's substitutions: RUN / RUN2 are the run just started (or the newest with what `means`)."""
    return re.sub(r"\bRUN2?\b", f'"$(__newest id{" " + means if means else ""})"', command)


def script_for(block: blocks.Block, given_log: Path) -> tuple[str, list[dict]]:
    """The block as one bash script (each command followed by its exit check) and what each must do."""
    lines = [PRELUDE % {"py": shlex.quote(sys.executable), "given": shlex.quote(str(given_log))}]
    plan = []
    for n, command in enumerate(block.commands, 1):
        key = f"{block.id}#{n}"
        expect = {"rc": 0, "out": [], **blocks.EXPECT.get(command, {}), **blocks.EXPECT.get(key, {})}
        skipped = blocks.SKIPPED_COMMANDS.get(command)
        plan.append({"n": n, "command": command, "skipped": skipped, **expect})
        if skipped:
            continue
        lines.append(f"echo '{MARK} {n}'")
        for before in (blocks.GIVEN.get(command), blocks.BEFORE.get(key)):
            if before:
                lines.append(f"{before} || exit 90")
        lines.append(_substituted(command, blocks.RUN_MEANS.get(block.id, "")))
        lines.append(f"__rc=$?; echo \"{MARK} {n} rc=$__rc\"; [ $__rc -eq {expect['rc']} ] || exit 91")
    return "\n".join(lines) + "\n", plan


def run_block(block: blocks.Block, given_log: Path) -> tuple[int, str, list[dict]]:
    script, plan = script_for(block, given_log)
    proc = subprocess.Popen(["bash", "-c", script], cwd=blocks.ROOT, env=reader_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out += f"\n(killed after {BLOCK_TIMEOUT_S} s)"
    return proc.returncode, out, plan


def outputs(out: str) -> dict[int, tuple[str, int | None]]:
    """Each command's output and exit code, from the markers."""
    found: dict[int, tuple[str, int | None]] = {}
    for part in out.split(f"{MARK} ")[1:]:
        head, _, body = part.partition("\n")
        m = re.match(r"(\d+)(?: rc=(\d+))?$", head.strip())
        if not m:
            continue
        n = int(m.group(1))
        if m.group(2) is not None:
            found[n] = (found.get(n, ("", None))[0], int(m.group(2)))
        else:
            found[n] = (body, None)
    return found


def _runnable():
    return [pytest.param(first, copies, id=f"{first.where}-{first.id}")
            for first, copies in blocks.unique_blocks() if first.id not in blocks.NOT_HERE]


@pytest.mark.readme
def test_every_block_runs_or_says_why_not():
    """Every block either runs or is listed with a reason; every listed id is still a block (an edited
    block gets a new id and is looked at again)."""
    ids = {first.id for first, _ in blocks.unique_blocks()}
    assert ids, "no ```bash block found in " + ", ".join(blocks.SOURCES)
    stale = sorted(set(blocks.NOT_HERE) - ids)
    assert not stale, (f"NOT_HERE lists blocks that no longer exist: {stale}; their text changed (the id is a hash "
                       "of the commands): find the block's new id in this test's parameters "
                       "(pytest --collect-only -q tests/readme) and check it again")
    assert all(reason.strip() for reason in blocks.NOT_HERE.values())
    keyed = {k.split("#")[0] for k in [*blocks.BEFORE, *blocks.EXPECT] if "#" in k} | set(blocks.RUN_MEANS)
    assert keyed <= ids, f"BEFORE/EXPECT name blocks that no longer exist: {sorted(keyed - ids)}"


@pytest.mark.readme
def test_blocks_are_read_as_a_reader_types_them(tmp_path):
    """Comments and blank lines dropped (a # inside quotes kept), continuations joined; the zh-TW copy of
    a block (other comments, same commands) shares its id; another command is another block."""
    (tmp_path / "README.md").write_text('text\n```bash\ndscluster sim up 3   # three nodes\n\n'
                                        'echo "a # b" \\\n    --flag   # ok\n```\n```python\nx = 1\n```\n')
    (tmp_path / "README.zh-TW.md").write_text('```bash\ndscluster sim up 3   # 三個節點\necho "a # b" --flag\n```\n'
                                              '```bash\ndscluster sim up 4\n```\n')
    found = blocks.blocks(tmp_path)
    assert [b.commands for b in found] == [["dscluster sim up 3", 'echo "a # b" --flag']] * 2 + [["dscluster sim up 4"]]
    assert found[0].id == found[1].id != found[2].id and found[0].where == "README.md:2"
    assert [len(copies) for _, copies in blocks.unique_blocks(tmp_path)] == [2, 1]
    assert _substituted("dscluster stop RUN2 && dscluster status RUN --json") == \
        'dscluster stop "$(__newest id)" && dscluster status "$(__newest id)" --json'
    assert _substituted("dscluster ckpt RUN", "checkpointed") == 'dscluster ckpt "$(__newest id checkpointed)"'


@pytest.mark.readme
@pytest.mark.root
@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.parametrize("block, copies", _runnable())
def test_block_runs_as_written(block, copies, readme_session):
    rc, out, plan = run_block(block, readme_session.given_log)
    seen = outputs(out)
    where = ", ".join(c.where for c in copies)
    for step in plan:
        if step["skipped"]:
            continue
        text, code = seen.get(step["n"], ("", None))
        head = (f"README block {block.id} ({where}), command {step['n']}: {step['command']}\n"
                f"expected exit {step['rc']}, got {code}; its output (tail):\n{text[-4000:]}\n\n")
        if code is None:
            pytest.fail(head + f"(it did not finish: the block stopped with {rc})\n\n" + blocks.HOW_TO_MARK.format(id=block.id))
        assert code == step["rc"], head + blocks.HOW_TO_MARK.format(id=block.id)
        for pattern in step["out"]:
            assert re.search(pattern, text), head + f"it does not print what the README promises: /{pattern}/"
