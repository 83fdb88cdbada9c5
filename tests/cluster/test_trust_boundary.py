"""The privilege boundary, round two: the attacks of issue 27, each replayed on the simulated 2-node
cluster as the node user (runuser inside a node, in directories it really owns), against the real CLI
run as root. Nothing the node user writes is unpickled, executed, trusted or followed by root.

Helpers (plant, the console script, victims) are round one's, tests/cluster/test_privilege_boundaries.py.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from polling import wait_for
from test_privilege_boundaries import dscluster, make_victim, plant, run_id_from, untouched

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(2, name="trust2")


@pytest.fixture(scope="module")
def victim_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("root-only")
    os.chmod(folder, 0o700)
    return folder


def as_node_user(sim, code: str, *args: str, timeout: float = 120) -> str:
    """Python `code` run as the node user on node1 (with dscluster and torch importable, as a rank has)."""
    res = sim.exec("node1", [sys.executable, "-c", code, *args], user=sim.spec.ssh_user, cwd="/", timeout=timeout)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


# A run the node user makes up (it owns runs/): a record and a committed step-3 whose model states file
# is `payload` ("pickle": a pickle that records who unpickled it; "tensors": a plain stage-0 state dict).
_FAKE_RUN = r"""
import json, os, sys, torch
from pathlib import Path
from dscluster.train.checkpoint import commit
run_dir, payload, marker = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
step = run_dir / "checkpoints" / "step-3"
step.mkdir(parents=True)
(run_dir / "logs").mkdir()
(run_dir / "run.json").write_text(json.dumps({"id": run_dir.name, "status": "succeeded",
                                              "launch": {"program": "train.py", "launcher": "local"}}))

class Payload:
    def __reduce__(self):
        return (os.system, (f"id -u >> {marker}",))

states = {"module": {"w": torch.ones(2, 3)}, "step": 3}
if payload == "pickle":
    states["module"]["evil"] = Payload()
torch.save(states, step / "mp_rank_00_model_states.pt")
commit(step.parent, 3, {"world_size": 1, "zero_stage": 0})
"""


def fake_run(sim, name: str, payload: str, marker: Path) -> Path:
    run_dir = store.run_path(sim.spec.shared_dir, name)
    as_node_user(sim, _FAKE_RUN, str(run_dir), payload, str(marker))
    return run_dir


def test_a_pickle_in_a_committed_checkpoint_is_never_unpickled_by_root(sim, env):
    """Attack 1: the node user commits a step (COMMIT.json matching, hashes and all) whose model states
    file is a pickle that runs a command when unpickled. `ckpt verify` and `ckpt export`, as root, name
    the file as one that does not load; the command never runs."""
    marker = Path(sim.spec.shared_dir) / "unpickled-by"
    fake_run(sim, "pickled-1", "pickle", marker)
    verify = dscluster(sim, env, Path("/"), "ckpt", "verify", "pickled-1", "--cluster", str(sim.spec_path))
    export = dscluster(sim, env, Path("/"), "ckpt", "export", "pickled-1", "--cluster", str(sim.spec_path))
    assert not marker.exists(), f"unpickled by uid {marker.read_text()}"
    assert verify.returncode != 0 and "mp_rank_00_model_states.pt" in verify.stdout, verify.stdout + verify.stderr
    assert "not plain tensors" in verify.stdout, verify.stdout
    assert export.returncode != 0 and "it was not loaded" in export.stderr, export.stdout + export.stderr


def test_ckpt_export_never_writes_through_a_planted_export_symlink(sim, env, victim_dir):
    """Attack 5c: `<run>/export` is the node user's symlink to a directory only root may write. The
    export is refused with the fix; nothing is written there. A real --out elsewhere still works."""
    fake_run(sim, "exported-1", "tensors", Path("/nonexistent"))
    run_dir = store.run_path(sim.spec.shared_dir, "exported-1")
    target = victim_dir / "export-target"
    target.mkdir(mode=0o700)
    plant(sim, symlinks={run_dir / "export": target})
    res = dscluster(sim, env, Path("/"), "ckpt", "export", "exported-1", "--cluster", str(sim.spec_path))
    assert list(target.iterdir()) == [], list(target.iterdir())
    assert res.returncode != 0 and "symlink" in res.stderr and "Traceback" not in res.stderr, res.stderr
    out = victim_dir / "model.pt"
    ok = dscluster(sim, env, Path("/"), "ckpt", "export", "exported-1", "--cluster", str(sim.spec_path),
                   "--out", str(out), "--format", "fp32")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    import torch

    assert torch.equal(torch.load(out, weights_only=True)["w"], torch.ones(2, 3))


@contextlib.contextmanager
def provider_owned(sim):
    """The shared dir its provider's (the node user's), as where root cannot own files on the storage (NFS with
    root_squash), for the attacks that then remain: the layout's own wall (`<shared>` root's and sticky,
    sharedlayout.py) first refuses them."""
    shared = Path(sim.spec.shared_dir)
    meta = shared / ".dscluster"
    tried = sim.exec("node1", ["mv", str(meta), f"{meta}.x"], user=sim.spec.ssh_user, cwd="/", timeout=60)
    assert tried.returncode != 0 and meta.is_dir(), tried.stdout + tried.stderr  # the wall: no rename at the root
    st = shared.stat()
    node = pwd.getpwnam(sim.spec.ssh_user)
    os.chown(shared, node.pw_uid, node.pw_gid)
    os.chmod(shared, 0o755)
    try:
        yield
    finally:
        os.chown(shared, st.st_uid, st.st_gid)
        os.chmod(shared, st.st_mode & 0o7777)


def test_sim_up_never_chmods_through_a_planted_dscluster_symlink(sim, victim_dir):
    """Attack 5a: where the node user owns the shared directory (NFS with root_squash), it swaps `.dscluster`
    for a symlink to a root-only directory; what `sim up` does there (publish the cluster key and spec, make
    hostkeys/) refuses it with the fix instead of making the directory 0755 and writing into it."""
    from dscluster.cluster import identity
    from dscluster.errors import PermissionNeeded

    target = victim_dir / "meta-target"
    target.mkdir(mode=0o700)
    meta = Path(sim.spec.shared_dir) / ".dscluster"
    with provider_owned(sim):
        plant(sim, symlinks={meta: target})
    try:
        with pytest.raises(PermissionNeeded, match="symlink") as err:
            identity.publish_cluster_pubkey(sim.spec)
        assert "rm " in err.value.hint
        assert oct(target.stat().st_mode & 0o777) == oct(0o700) and list(target.iterdir()) == []
    finally:
        meta.unlink()
        Path(str(meta) + ".orig").rename(meta)


_REMOVER = r"""
import glob, os, sys, time
shared, stop = sys.argv[1], sys.argv[2]
while not os.path.exists(stop):
    for path in glob.glob(os.path.join(shared, "runs", "*", "hostfile")):
        try:
            os.unlink(path)
            print("removed", path, flush=True)
        except OSError:
            pass
    time.sleep(0.002)
"""


def test_a_hostfile_removed_under_the_runner_never_runs_the_script_on_the_controller(sim, env):
    """Attack 2: the node user removes every run's hostfile as soon as it appears. DeepSpeed's runner
    reads its own copy (in root's state directory), so the ranks still run on the nodes, as the node
    user; the script never runs on the controller as root."""
    work = Path(sim.spec.shared_dir) / "trustwork2"
    stop = Path(sim.spec.shared_dir) / "stop-remover"
    plant(sim, files={work / "who.py": f"""import os, socket
open(os.path.join({str(work)!r}, f"ran-as-{{os.getuid()}}"), "a").write(socket.gethostname() + "\\n")
print(f"[rank {{os.environ.get('RANK')}}] uid {{os.getuid()}}", flush=True)
"""})
    remover = subprocess.Popen(sim.exec_argv("node1", [sys.executable, "-c", _REMOVER, sim.spec.shared_dir, str(stop)],
                                             cwd="/", user=sim.spec.ssh_user),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    removed: list[str] = []
    reader = threading.Thread(target=lambda: removed.extend(remover.stdout), daemon=True)
    reader.start()
    try:
        res = dscluster(sim, env, work, "launch", "--cluster", str(sim.spec_path), "--attach", "--skip-doctor",
                        "--max-restarts", "0", "who.py")
    finally:
        stop.touch()
        remover.wait(30)
        reader.join(10)
    assert any("hostfile" in line for line in removed), removed  # the attack really happened
    assert not (work / "ran-as-0").exists(), (work / "ran-as-0").read_text()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    uid = sim.exec("node0", ["id", "-u", sim.spec.ssh_user]).stdout.strip()
    assert sorted((work / f"ran-as-{uid}").read_text().split()) == ["node0", "node1"]


def test_the_supervisor_never_unlinks_through_a_swapped_runs_directory(sim, env, victim_dir):
    """Attack 5b: while an attempt runs with a secret (node_env.sh in the run directory), the node user (where
    it owns the shared directory: NFS with root_squash) swaps `<shared>/runs` for a symlink to a root-only tree holding `<run id>/node_env.sh`. When the
    attempt ends, the supervisor removes node_env.sh through the run directory's descriptor (fsutil's
    rule refuses the symlink): the root-only file stays."""
    work = Path(sim.spec.shared_dir) / "trustwork5"
    flag = work / "go"
    plant(sim, files={work / "wait.py": f"""import os, time
print("waiting", flush=True)
while not os.path.exists({str(flag)!r}):
    time.sleep(0.2)
"""})
    res = dscluster(sim, env, work, "launch", "--cluster", str(sim.spec_path), "--detach", "--skip-doctor",
                    "--max-restarts", "0", "--env", "HF_TOKEN=hf_s3cret", "wait.py")
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = run_id_from(res.stdout)
    runs = Path(sim.spec.shared_dir) / "runs"
    run_dir = runs / run_id
    assert wait_for(lambda: sum("waiting" in p.read_text(errors="replace")
                                for p in (run_dir / "logs").glob("*_rank*.log")) == 2, 240, 0.5)
    assert (run_dir / "node_env.sh").exists()
    pid = store.read_record(run_dir).supervisor_pid
    swapped = victim_dir / "swapped-runs"
    (swapped / run_id).mkdir(parents=True)
    os.chmod(swapped, 0o700)
    victim = make_victim(swapped / run_id, "node_env.sh")
    with provider_owned(sim):
        plant(sim, symlinks={runs: swapped})  # runs -> runs.orig, runs -> the root-only tree
    try:
        plant(sim, files={flag: ""})
        assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), 240, 0.5)
    finally:
        runs.unlink()
        Path(str(runs) + ".orig").rename(runs)
    assert victim.exists() and untouched(victim)


_REWRITE = r"""
import json, os, subprocess, sys
run_json, evil, marker = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(evil, "bin"))
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(evil, "id_ed25519")], check=True)
for tool in ("pdsh", "ssh"):
    real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
    path = os.path.join(evil, "bin", tool)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nid -u >> {marker}\nexec {real} \"$@\"\n")
    os.chmod(path, 0o755)
rec = json.load(open(run_json))
rec["launch"]["cluster_spec"]["state_dir"] = evil
tmp = run_json + ".new"
json.dump(rec, open(tmp, "w"))
os.replace(tmp, run_json)
"""


def test_a_rewritten_run_record_never_names_the_programs_root_runs(sim, env):
    """Attack 3: the node user rewrites a finished run's run.json so that its cluster state directory is one
    of its own (a key, and `pdsh`/`ssh` wrappers that record who ran them). `dscluster restart` by root
    refuses the record, which root did not write (runs/records/verify.py): the wrappers never run. Root's own record
    restarts, taking the state directory from root's own state."""
    work = Path(sim.spec.shared_dir) / "trustwork3"
    plant(sim, files={work / "ok.py": 'print("ran", flush=True)\n'})
    env = {**env, "DSCLUSTER_HOME": sim.state["home"]}  # root's own state, where `sim up` keeps the cluster's
    res = dscluster(sim, env, work, "launch", "--cluster", str(sim.spec_path), "--attach", "--skip-doctor",
                    "--max-restarts", "0", "ok.py")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    run_id = [r.id for r in store.list_runs(Path(sim.spec.shared_dir)) if r.record.launch.program.endswith("ok.py")][-1]
    marker = Path(sim.spec.shared_dir) / "wrapper-ran-as"
    evil = Path(sim.spec.shared_dir) / "evil-state"
    record = store.run_path(sim.spec.shared_dir, run_id) / "run.json"
    original = record.read_bytes()
    as_node_user(sim, _REWRITE, str(record), str(evil), str(marker))
    refused = dscluster(sim, env, work, "restart", run_id, "--cluster", str(sim.spec_path))
    assert refused.returncode == 7 and "was written by" in refused.stderr, refused.stdout[-3000:] + refused.stderr
    assert not marker.exists(), f"the node user's wrapper ran as uid {marker.read_text()}"
    record.unlink()
    record.write_bytes(original)  # root's own record again (root writes it): restarted from root's own state
    again = dscluster(sim, env, work, "restart", run_id, "--cluster", str(sim.spec_path))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    new_id = again.stdout.strip()  # into a pipe: the new run's id alone
    new_dir = store.run_path(sim.spec.shared_dir, new_id)
    assert wait_for(lambda: store.read_record(new_dir).status in store.FINISHED, 240, 0.5)
    assert not marker.exists(), f"the node user's wrapper ran as uid {marker.read_text()}"
    rec = store.read_record(new_dir)
    assert rec.status == "succeeded", (new_dir / "logs" / "launcher.log").read_text(errors="replace")[-3000:]
    assert str(rec.launch.cluster_spec.state_dir) != str(evil)


_FORGE = r"""
import json, os, shutil, subprocess, sys, tempfile
meta = sys.argv[1]  # <shared>/.dscluster: root's, in the shared directory the node user owns (NFS, root_squash)
os.rename(meta, meta + ".orig")
shutil.copytree(meta + ".orig", meta)  # the node user's own copy, with its own key for node1
d = tempfile.mkdtemp()
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, "k")], check=True)
key = open(os.path.join(d, "k.pub")).read().strip()
record = os.path.join(meta, "hostkeys", "node1.json")
rec = json.load(open(record))
rec["key"] = key
os.unlink(record)
json.dump(rec, open(record, "w"))
print(" ".join(key.split()[:2]))
"""


def test_a_host_key_record_on_the_shared_storage_is_never_pinned(sim, env):
    """Attack 4: the node user (where it owns the shared directory: NFS with root_squash) publishes its own key as
    node1's.
    A controller that has no pin for node1 yet (first sight) does not pin it; `config trust node1`
    refuses it with the fix; the node's own key, read from the node by root (`sim up`'s way), is pinned,
    and the record that disagrees with it is refused."""
    from dscluster.cluster import identity
    from dscluster.cluster.ssh import ensure_ssh_files, read_known_hosts, write_known_hosts

    real = read_known_hosts(sim.spec)["node1"]
    meta = identity.shared_meta_dir(sim.spec.shared_dir)
    with provider_owned(sim):  # else root's `.dscluster` in root's sticky shared dir is not the node user's to swap
        forged = as_node_user(sim, _FORGE, str(meta)).strip()
    assert forged != real
    try:
        write_known_hosts(sim.spec, {k: v for k, v in read_known_hosts(sim.spec).items() if k != "node1"})
        sync = ensure_ssh_files(sim.spec)  # what every command does before it connects
        assert "node1" not in read_known_hosts(sim.spec) and sync.untrusted == ["node1"]
        trust = dscluster(sim, env, Path("/"), "config", "trust", "node1", "--cluster", str(sim.spec_path))
        assert read_known_hosts(sim.spec).get("node1") != forged
        assert trust.returncode != 0 and "--scan" in trust.stdout + trust.stderr, trust.stdout + trust.stderr
        assert sim.pin_host_keys()["node1"] == real
        sync = ensure_ssh_files(sim.spec)
        assert sync.changed == ["node1"] and read_known_hosts(sim.spec)["node1"] == real
    finally:
        shutil.rmtree(meta)
        Path(str(meta) + ".orig").rename(meta)
        sim.pin_host_keys()


# A module named like the standard library's: it records who imported it (uid, argv), then hands over to
# the real one, so every process that imports it goes on working.
_SHADOW = '''import os as _os, sys as _sys
try:
    with open({marker!r}, "a") as _f:
        _f.write(f"{{__name__}} uid={{_os.getuid()}} argv={{_sys.argv!r}}\\n")
except OSError:
    pass
import importlib as _il
_here = _os.path.dirname(_os.path.abspath(__file__))
_saved = _sys.path[:]
del _sys.modules[__name__]
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
try:
    _sys.modules[__name__] = _il.import_module(__name__)
finally:
    _sys.path[:] = _saved
'''
# Imported late (not at interpreter start-up), by dscluster, DeepSpeed, torch or the tools they start.
_SHADOWED = ("json", "base64", "shlex", "tempfile", "hashlib", "uuid", "socket", "selectors", "signal", "argparse",
             "textwrap", "subprocess", "runpy", "glob", "fnmatch", "zipfile", "secrets", "platform", "getpass",
             "csv", "ast", "dataclasses", "logging", "threading", "struct", "pickle")


def test_modules_named_like_the_standard_library_are_never_imported_by_root(sim, env):
    """Attack 6, second half: the node user plants json.py, subprocess.py, ... in the directory root launches
    from and in the shared directory. Root then goes through a run's whole life from that directory:
    launch, status, logs, runs, ckpt, ckpt verify, stacks, stop, ckpt export, restart, stop. No root process
    imports a planted module; the node user's own processes (the ranks, started in that directory) may."""
    work = Path(sim.spec.shared_dir) / "trustwork6"
    marker = Path(sim.spec.shared_dir) / "shadow-imports.log"
    shadow = _SHADOW.format(marker=str(marker))
    script = (Path(__file__).parents[1] / "data" / "ckpt_user_script.py").read_text()
    plant(sim, files={**{work / f"{name}.py": shadow for name in _SHADOWED},
                      **{Path(sim.spec.shared_dir) / f"{name}.py": shadow for name in _SHADOWED},
                      work / "train.py": script, marker: ""})
    os.chmod(marker, 0o666)
    env = {**env, "DSCLUSTER_HOME": sim.state["home"]}

    def cli(*args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
        res = dscluster(sim, env, work, *args)
        assert res.returncode in ok, f"{args} exit {res.returncode}:\n{res.stdout[-3000:]}\n{res.stderr[-2000:]}"
        return res

    started: list[str] = []
    try:
        res = cli("launch", "--cluster", str(sim.spec_path), "--detach", "--skip-doctor", "--max-restarts", "0",
                  "train.py", "--steps", "100000", "--save-every", "3", "--sleep", "0.05")
        run_id = run_id_from(res.stdout)
        started.append(run_id)
        run_dir = store.run_path(sim.spec.shared_dir, run_id)
        assert wait_for(lambda: (store.read_record(run_dir).last_checkpoint_step or 0) >= 3, 300, 0.5), \
            cli("logs", run_id, ok=(0, 1, 5)).stdout[-3000:]
        for args in (("status", run_id), ("logs", run_id), ("runs",), ("ckpt", run_id), ("ckpt", "verify", run_id),
                     ("stacks", run_id), ("stop", run_id)):
            cli(*args, "--cluster", str(sim.spec_path))
        cli("ckpt", "export", run_id, "--cluster", str(sim.spec_path), "--format", "fp32")
        again = cli("restart", run_id, "--cluster", str(sim.spec_path))
        new_id = next(w for w in again.stdout.split() if w.startswith("train-") and w != run_id)
        started.append(new_id)
        new_dir = store.run_path(sim.spec.shared_dir, new_id)
        assert wait_for(lambda: store.read_record(new_dir).status == "running", 240, 0.5), \
            cli("status", new_id, ok=(0, 1, 5)).stdout
    finally:
        for run in started:
            dscluster(sim, env, work, "stop", run, "--cluster", str(sim.spec_path))
    seen = [line for line in marker.read_text().splitlines() if line.strip()]
    assert seen, "the node user's ranks import from their own directory: the planted modules must have been seen"
    assert not [line for line in seen if " uid=0 " in line], "\n".join(line for line in seen if " uid=0 " in line)
