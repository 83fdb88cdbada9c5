"""Secret values printed by the user's program are masked (`***`) on their way into any log dscluster writes:
the streaming mask (a value split across writes or reads is still masked), the rank wrapper that applies it
(exit codes and signals pass through unchanged), and the launch plan that puts the wrapper in front of the
program only when the run has secrets (their names travel in the env file, never their values)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dscluster.launcher.masklog import MASK, MIN_SECRET, SECRET_NAMES_VAR, SecretMask, mask_text
from dscluster.launcher.plan import LaunchRequest, Target, build_plan


def _streamed(secrets, data: bytes, cuts: list[int]) -> bytes:
    mask = SecretMask(secrets)
    out, last = [], 0
    for cut in sorted(set(c % (len(data) + 1) for c in cuts)) + [len(data)]:
        out.append(mask.feed(data[last:cut]))
        last = cut
    return b"".join(out) + mask.flush()


_alphabet = st.sampled_from("abcXY01=_ \n")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(secrets=st.lists(st.text(_alphabet, min_size=MIN_SECRET, max_size=12), min_size=1, max_size=3),
       pieces=st.lists(st.one_of(st.text(_alphabet, max_size=10), st.integers(0, 2)), max_size=12),
       cuts=st.lists(st.integers(0, 400), max_size=8))
def test_a_secret_never_passes_however_the_output_is_split(secrets, pieces, cuts):
    text = "".join(secrets[p % len(secrets)] if isinstance(p, int) else p for p in pieces)
    data = text.encode()
    once = _streamed(secrets, data, [])
    assert _streamed(secrets, data, cuts) == once  # the same however the writes and reads were split
    for secret in secrets:
        assert secret.encode() not in once
    # Nothing but secrets is changed: every *** stands where one was.
    assert once.replace(MASK, b"") == data.replace(MASK, b"") or MASK in data or any(
        s.encode() in data for s in secrets)
    if not any(s.encode() in data for s in secrets):
        assert once == data


def test_the_value_split_across_two_writes_and_a_short_value():
    mask = SecretMask(["hf_abcdef123456", "xy"])
    assert mask.feed(b"token=hf_abc") == b"token="  # could be the start of the secret: held back
    assert mask.feed(b"def123456 done\n") == b"***" + b" done\n"
    assert mask.feed(b"hf_ab") == b""
    assert mask.flush() == b"hf_ab"  # at the end, a prefix that never completed is what it was
    assert mask_text("xy xy", ["xy"]) == "xy xy"  # shorter than MIN_SECRET: not a secret worth masking


PRINTER = r"""
import os, sys, time, signal
value = os.environ["HF_TOKEN"]
sys.stdout.write("start " + value[:5]); sys.stdout.flush()
time.sleep(0.3)
sys.stdout.write(value[5:] + " end\n"); sys.stdout.flush()
print("stderr too: " + value, file=sys.stderr, flush=True)
print("args " + " ".join(sys.argv[1:]), flush=True)
mode = os.environ.get("MODE")
if mode == "signal":
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(os.environ.get("CODE", "0")))
"""


def _wrapped(tmp_path: Path, **env) -> subprocess.CompletedProcess:
    script = tmp_path / "printer.py"
    script.write_text(PRINTER)
    return subprocess.run([sys.executable, "-m", "dscluster.launcher.masklog", "--local_rank=0", "script", str(script),
                           "--steps", "3"], capture_output=True, timeout=60,
                          env={**os.environ, "HF_TOKEN": "hf_SECRETvalue42", SECRET_NAMES_VAR: "HF_TOKEN", **env})


def test_the_rank_wrapper_masks_both_streams_and_keeps_the_exit_code_and_signal(tmp_path):
    res = _wrapped(tmp_path, CODE="3")
    out = res.stdout.decode()
    assert res.returncode == 3, res.stderr
    assert "hf_SECRETvalue42" not in out and "hf_SE" not in out
    assert "start *** end" in out and "stderr too: ***" in out
    assert "args --local_rank=0 --steps 3" in out  # DeepSpeed's --local_rank goes to the program, first
    killed = _wrapped(tmp_path, MODE="signal")
    assert killed.returncode == -signal.SIGKILL  # the rank's own death, as launch.py would have seen it


def test_the_plan_wraps_the_program_only_when_the_run_has_secrets(tmp_path):
    def plan(env, launcher="pdsh"):
        return build_plan(LaunchRequest(run_id="r1", run_dir=tmp_path, target=Target("train.py", False, ("--x", "1")),
                                        hosts=(("n1", 1), ("n2", 1)), master_port=2000, launcher=launcher,
                                        user_env=env))

    plain = plan({"FOO": "bar"})
    assert plain.argv[-3:] == ["train.py", "--x", "1"] and "dscluster.launcher.masklog" not in plain.argv
    secret = plan({"FOO": "bar", "HF_TOKEN": "hf_SECRETvalue42"})
    assert secret.argv[-6:] == ["--module", "dscluster.launcher.masklog", "script", "train.py", "--x", "1"]
    env_file = next(f for f in secret.files if f.path.name == "ds_env").text
    assert f"{SECRET_NAMES_VAR}=HF_TOKEN" in env_file and "hf_SECRETvalue42" not in env_file
    assert not any("hf_SECRETvalue42" in a for a in secret.argv)
    local = plan({"HF_TOKEN": "hf_SECRETvalue42"}, launcher="local")
    assert local.env[SECRET_NAMES_VAR] == "HF_TOKEN" and "dscluster.launcher.masklog" in local.argv
