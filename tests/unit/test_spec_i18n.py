"""Every user-facing message of the cluster part has a zh-TW translation with the same placeholders."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import dscluster
from dscluster.i18n import catalog, tr

SRC = Path(dscluster.__file__).parent
MODULES = ["cluster/spec.py", "cluster/specmodel.py", "cluster/specparse.py", "cluster/hostkeys.py", "cluster/hostfile.py", "cluster/identity.py", "cluster/ssh.py", "cluster/pdsh.py",
           "node/sshd.py", "node/agent.py", "sim/names.py", "sim/network.py", "sim/nodeuser.py", "sim/cluster.py",
           "sim/procs.py",
           "sim/teardown.py", "node/master.py",
           "commands/init.py", "commands/config.py", "commands/node.py", "commands/sim.py"]
# Bare commands are the same in every language.
UNTRANSLATED = re.compile(r"^(apt-get|usermod|dscluster) ")


def _templates() -> list[str]:
    found = []
    for rel in MODULES:
        for node in ast.walk(ast.parse((SRC / rel).read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found.append(node.args[0].value)
    return found


def test_every_message_is_translated_with_the_same_placeholders():
    zh = json.loads((SRC / "locale" / "zh_TW" / "cluster.json").read_text(encoding="utf-8"))
    templates = _templates()
    assert len(templates) > 150
    merged = catalog("zh_TW")
    missing = [t for t in templates if t not in merged and not UNTRANSLATED.match(t)]
    assert not missing, missing
    for english, chinese in zh.items():
        assert sorted(re.findall(r"\{[^}]*\}", english)) == sorted(re.findall(r"\{[^}]*\}", chinese)), english


def test_chinese_is_used_when_asked(monkeypatch):
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    assert tr("{host} has slots={slots}: no rank would run there", host="n0", slots=0) == \
        "n0 的 slots=0：該節點上不會執行任何 rank"
