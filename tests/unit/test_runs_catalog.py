"""Every user-facing message of launch / runs / explain has a zh-TW translation."""

import ast
import json
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "dscluster"
FILES = [*sorted((SRC / "launcher").rglob("*.py")), *sorted((SRC / "runs").glob("*.py")),
         SRC / "commands" / "launch.py", SRC / "commands" / "runs.py", SRC / "commands" / "runview.py",
         SRC / "commands" / "argtypes.py", SRC / "explain.py", SRC / "signatures.py", SRC / "launchcmd.py",
         SRC / "errorline.py", *sorted(SRC.glob("sig*.py"))]  # every signature table: messages, devices, training, libraries


def messages() -> set[str]:
    found = set()
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            args = node.args[:1] if name == "tr" else node.args[2:4] if name == "_sig" else \
                node.args[1:3] if name in ("custom", "finding") else \
                node.args[2:4] if name == "Signature" else []
            found |= {a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found


def test_every_message_has_a_zh_tw_translation(monkeypatch):
    # The merged catalog: a template shared with another domain is translated once, in one file.
    from dscluster.i18n import catalog as merged

    catalog = merged("zh_TW")
    wanted = messages()
    assert len(wanted) > 80
    missing = sorted(m for m in wanted if m not in catalog)
    assert not missing, missing
    # placeholders survive translation
    own = json.loads((SRC / "locale" / "zh_TW" / "launch.json").read_text(encoding="utf-8"))
    for en, zh in own.items():
        assert sorted(part.split("}")[0] for part in en.split("{")[1:]) == \
            sorted(part.split("}")[0] for part in zh.split("{")[1:]), en


def test_status_shows_the_cause_in_zh_tw(monkeypatch):
    from dscluster import explain
    from dscluster.i18n import catalog, tr

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    exp = explain.explain("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB").to_dict()
    assert exp["cause"].startswith("A GPU ran out of memory. Most often")  # run.json keeps English
    assert tr(exp["cause"]).startswith("某張 GPU 記憶體不足。最常見的是")
