"""DeepSpeed's CPU all-reduce creates one ~70 MB /dev/shm buffer per rank and never unlinks it (every
CPU run leaked its buffers until reboot). The watchdog removes exactly the finished attempt's ones."""

from __future__ import annotations

import os
import subprocess
import sys

from dscluster.runs.supervising.watchdog import remove_shm_buffers


def test_only_this_users_buffers_of_this_port_are_removed(tmp_path):
    uid = os.getuid()
    mine = [f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_29511_{r}" for r in (0, 1)] + \
           [f"deepspeed_allreduce_buffer_{uid}_10.211.26.10_29511_2"]
    others = [f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_295110_0",     # another port that starts alike
              f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_2951_0",
              f"deepspeed_allreduce_buffer_{uid + 1}_127.0.0.1_29511_0",  # another user's run
              "torch_shm_29511_0", "unrelated"]
    for name in mine + others:
        (tmp_path / name).write_bytes(b"x")
    assert remove_shm_buffers(29511, str(tmp_path)) == 3
    assert sorted(os.listdir(tmp_path)) == sorted(others)
    assert remove_shm_buffers(29511, str(tmp_path / "missing")) == 0


def test_the_watchdog_cleans_up_when_the_supervisor_says_exit():
    port = 40000 + os.getpid() % 20000
    path = f"/dev/shm/deepspeed_allreduce_buffer_{os.getuid()}_127.0.0.1_{port}_0"
    with open(path, "wb") as fh:
        fh.write(b"x")
    proc = subprocess.run([sys.executable, "-m", "dscluster.runs.supervising.watchdog", "no-such-run-20260101-000000-0000",
                           f"--master-port={port}"], input="exit\n", capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert not os.path.exists(path)
