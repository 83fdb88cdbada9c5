"""Live failures: broken users' scripts run for real through `dscluster launch --local 2` on this machine's torch and
DeepSpeed (CPU, gloo), and what the supervisor said about them.

Where the failure corpus (test_failure_corpus.py) holds logs users posted from other versions and machines, these are
the failures a user of this release meets first, with the exact words of the versions it installs: each case
directory under tests/data/live/ holds the script (and its ds_config), the mistake in case.toml, `log.txt` (every
rank's lines as `dscluster logs` prints them) and `supervisor.json` (the explanation recorded when it ran, before that
round's rules, and the versions). tests/data/live/capture.py runs a case again (on newer versions, to see what
changed).

case.toml: mistake (what the user did wrong), expected (signatures whose cause and fix are right), restart_helps,
round, split (the corpus's rule: sha256 of the case id, mod 10 < 6 is holdout). A launch refused before any rank
started (dscluster's own checks) has `refused = true` and `names`, the words its message must say (the setting and
the fix), in place of expected and restart_helps. The answer the supervisor recorded is
the round's measurement (`python tests/unit/test_live_failures.py` prints it, per round); the test checks what the
explainer says of log.txt now.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

from dscluster import explain

LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


@dataclass(frozen=True)
class LiveCase:
    id: str
    mistake: str
    expected: tuple[str, ...]
    restart_helps: bool
    round: int
    split: str
    log: str
    recorded: str | None  # the supervisor's signature when the run failed (None: no explanation)
    names: tuple[str, ...] = ()  # a refused launch: what its message must say

    @property
    def refused(self) -> bool:
        return bool(self.names)

    @property
    def path(self) -> Path:
        return LIVE / self.id


def cases() -> list[LiveCase]:
    out = []
    for d in sorted(p for p in LIVE.iterdir() if (p / "case.toml").is_file()):
        meta = tomllib.loads((d / "case.toml").read_text())
        sup = json.loads((d / "supervisor.json").read_text())
        log = (d / "log.txt").read_text(errors="replace")
        names = tuple(meta.get("names", ())) if meta.get("refused") else ()
        recorded = ("refused" if all(n in log for n in names) else None) if names else sup.get("signature")
        out.append(LiveCase(d.name, meta["mistake"], tuple(meta.get("expected", ("refused",) if names else ())),
                            meta.get("restart_helps", False), meta["round"], meta["split"], log, recorded, names))
    return out


def verdict(signature: str | None, expected: tuple[str, ...]) -> str:
    if signature is None:
        return "nothing"
    if signature in expected:
        return "right"
    return "generic" if signature in explain.GENERIC else "wrong"


CASES = cases()


def test_there_are_live_cases_and_each_is_whole():
    assert CASES, "tests/data/live holds no case"
    for c in CASES:
        assert c.mistake and c.expected and c.log.strip(), c.id
        assert (c.path / "supervisor.json").is_file(), c.id
        want = "holdout" if int(hashlib.sha256(c.id.encode()).hexdigest(), 16) % 10 < 6 else "tune"
        assert c.split == want or "moved" in (c.path / "case.toml").read_text(), (c.id, c.split, want)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_explainer_names_the_mistake(case: LiveCase):
    if case.refused:  # dscluster's own check, before any rank: its message names the setting and the fix
        missing = [n for n in case.names if n not in case.log]
        assert not missing and "fix:" in case.log, f"{case.id}: the refusal does not say {missing}: {case.log}"
        return
    exp = explain.explain(case.log)
    assert exp is not None, f"{case.id}: no explanation ({case.mistake})"
    assert exp.signature in case.expected, f"{case.id}: {exp.signature} ({exp.cause}); expected {case.expected}"
    assert exp.retry == case.restart_helps, f"{case.id}: restart {exp.retry}, expected {case.restart_helps}"


@pytest.mark.parametrize("case", [c for c in CASES if (c.path / "logs").is_dir()],
                         ids=[c.id for c in CASES if (c.path / "logs").is_dir()])
def test_the_supervisor_names_the_mistake_from_the_runs_own_files(case: LiveCase):
    """What the supervisor reads (runs/supervising/verdict.py): the launcher's log and each rank's own file, not the
    merged `dscluster logs` a user pastes; the two can differ (which exception of a chain is the rank's own)."""
    logs = case.path / "logs"
    launcher = logs / "launcher.log"
    data = launcher.read_bytes()
    # As the supervisor caps the launcher's log where it detected the failure (verdict.py's `upto`): the teardown's
    # own lines after it are never the cause.
    mark = data.find(b"] failure detected: ")
    upto = {launcher: data.find(b"\n", mark) + 1} if mark >= 0 else {}
    exp = explain.explain_files([launcher, *sorted(logs.glob("*_rank*.log"))], upto=upto)
    assert exp is not None, f"{case.id}: no explanation from the run's files"
    assert exp.signature in case.expected, f"{case.id}: {exp.signature} ({exp.cause}); expected {case.expected}"
    assert exp.retry == case.restart_helps, f"{case.id}: restart {exp.retry}, expected {case.restart_helps}"


if __name__ == "__main__":  # the rounds' measurements: what the supervisor said when each run failed
    rounds: dict[int, list[tuple[LiveCase, str]]] = {}
    for c in CASES:
        v = verdict(c.recorded, c.expected)
        rounds.setdefault(c.round, []).append((c, v))
        now = explain.explain(c.log) if not c.refused else None
        print(f"{c.split:8} {v:8} {c.id}: {c.recorded} -> now {now.signature if now else None} (expected "
              f"{', '.join(c.expected)})")
    for r, xs in sorted(rounds.items()):
        held = [v for c, v in xs if c.split == "holdout"]
        print(f"round {r}: {sum(v == 'right' for _, v in xs)}/{len(xs)} right when recorded, "
              f"{sum(v == 'wrong' for _, v in xs)} misleading; held out {held.count('right')}/{len(held)} right, "
              f"{held.count('wrong')} misleading")
    sys.exit(0)
