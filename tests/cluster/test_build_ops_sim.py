"""`dscluster node build-ops --cluster` on a real 2-node simulated cluster (real sshd, the nodes' own
Python): the master compiles DeepSpeed's ops into the shared extension cache first, then the other
node finds them there and only loads them; a launch afterwards has nothing left to announce."""

from __future__ import annotations

import os
import re

import pytest
from support import run_cli

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(2, name="ibuildops")


def test_build_ops_builds_on_the_master_once_and_the_others_load_it(sim, tmp_path):
    cache = sim.spec.shared_dir / "torch-ext"
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)  # the node user compiles into it
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(cache), "DSCLUSTER_LANG": "en"}
    cfg = tmp_path / "ds.json"
    cfg.write_text('// the recipe\'s\n{"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Adam",},}\n')
    res = run_cli("node", "build-ops", "--cluster", str(sim.spec.path), "--deepspeed_config", str(cfg), timeout=480,
                  env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    blocks = re.split(r"^[✓✗] ", res.stdout, flags=re.M)[1:]
    assert [b.split()[0] for b in blocks] == [n.name for n in sim.spec.nodes], res.stdout  # master first
    times = [[float(t) for t in re.findall(r"ready in ([\d.]+) s", b)] for b in blocks]
    assert all(len(t) == 2 for t in times), res.stdout  # fused_adam and the CPU collectives op, on each node
    assert sum(times[1]) < sum(times[0]) / 3, res.stdout  # the worker loaded what the master built
    assert (cache / "fused_adam" / "fused_adam.so").is_file() and not (cache / "fused_adam" / "lock").exists()

    from dscluster.launcher.ops import first_run_builds

    os.environ["TORCH_EXTENSIONS_DIR"] = str(cache)
    try:
        assert first_run_builds({"optimizer": {"type": "Adam"}}) == []
    finally:
        del os.environ["TORCH_EXTENSIONS_DIR"]
