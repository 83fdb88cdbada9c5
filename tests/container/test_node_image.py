"""The node image, built and run for real: docker/Dockerfile's cpu flavor on 3 simulated bare hosts.

The README's deployment section, followed literally: `dscluster init` with the hosts' addresses,
`dscluster up --engine podman --gpus none` over the operator's own ssh (each host's podman runs the
container in that host's network namespace), `config trust`, `doctor`, a user's own train.py with
its own ds_config launched from inside the master's container, JupyterLab in that container
answering with its token and refusing without, `down` (nothing left), `up` again with the pinned host
keys still valid. One module, one set of hosts; the steps depend on each other, in order.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))  # the launch tests' polling helper
from deploying import Deploy  # noqa: E402 - tests/container/deploying.py
from deploying import ok as _ok
from polling import wait_for  # noqa: E402

pytestmark = [pytest.mark.root, pytest.mark.container, pytest.mark.slow]
ENGINE = "podman"
NAME = "imgt"  # the cluster and the hosts
TRAIN = textwrap.dedent('''\
    """A user's own script: the recipe's packages, DeepSpeed with the ds_config it is given."""
    import argparse
    import os
    import sys
    import time

    import deepspeed
    import numpy as np
    import pandas as pd
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.0)  # seconds per step: time to kill a rank
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    rank = int(os.environ["RANK"])
    print(f"rank {rank} of {os.environ['WORLD_SIZE']} on {os.uname().nodename} uid {os.getuid()}", flush=True)
    losses = []
    for step in range(args.steps):
        x = torch.randn(engine.train_micro_batch_size_per_gpu(), 8)
        loss = (engine(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        engine.backward(loss)
        engine.step()
        losses.append(loss.item())
        print(f"rank {rank} step {step + 1}", flush=True)
        time.sleep(args.sleep)
    print(pd.Series(losses).describe().to_string(), f"mean {np.mean(losses):.4f}", flush=True)
    torch.distributed.destroy_process_group()
    print("done", flush=True)
    # Leave without Python's finalization, as dscluster's explanation of an abort at exit says: while DeepSpeed holds
    # ZeRO's groups a gloo thread can still be releasing tensors then (rank 0 aborted so in CI, exit 134, after "done").
    mpi = sys.modules.get("mpi4py.MPI")  # started by MPI: mpirun wants MPI_Finalize before the exit
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
''')
DS_CONFIG = {
    "train_batch_size": 6, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01}},
    "zero_optimization": {"stage": 2, "overlap_comm": False, "contiguous_gradients": True},
    "gradient_clipping": 1.0, "steps_per_print": 10, "wall_clock_breakdown": False,
}


def SPEC_ON_SHARED(deploy) -> str:  # noqa: N802 - reads as the constant path it is
    """The spec `up` published for the master's node user."""
    return str(deploy.hosts.shared_dir / ".dscluster" / "dscluster.toml")


@pytest.fixture(scope="module")
def deploy(node_image, bare_hosts, tmp_path_factory):
    hosts = bare_hosts(3, NAME)
    d = Deploy(hosts, node_image, tmp_path_factory.mktemp("imgt-home"), NAME, ENGINE)
    nodes = [a for addr in hosts.addresses for a in ("--node", f"{addr}:1")]
    _ok(d.cli("init", "--name", NAME, *nodes, "--shared", str(hosts.shared_dir), "--user", "dscluster",
              "--output", str(d.spec)))
    return d


def test_the_image_has_the_recipes_packages_and_runs_as_the_node_user(deploy):
    probe = ("import deepspeed, torch, numpy, pandas, jupyterlab, dscluster; "
             "print(torch.__version__, deepspeed.__version__, numpy.__version__, pandas.__version__)")
    out = _ok(deploy.on_host("host0", ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "python",
                             deploy.image, "-c", probe))
    assert out.strip().splitlines()[-1].split()[:2] == ["2.13.0+cpu", "0.19.8"], out
    user = _ok(deploy.on_host("host0", ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "id",
                              deploy.image)).strip()
    assert user.startswith("uid=10001(dscluster)"), user
    version = _ok(deploy.on_host("host0", ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "dscluster",
                                 deploy.image, "--version"))
    assert version.startswith("dscluster 0.1.0")
    # Every registered launcher backend's node packages (`image build` passes them): MPICH beside Open MPI and pdsh.
    tools = _ok(deploy.on_host("host0", ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "sh", deploy.image,
                               "-c", "for t in pdsh mpirun.openmpi mpirun.mpich hydra_pmi_proxy; do command -v $t; done"))
    assert len(tools.split()) == 4, tools
    # The CA bundle went in as a build secret only, and no host key was baked in.
    leftovers = _ok(deploy.on_host("host0", ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "sh",
                                   deploy.image, "-c", "ls /run/secrets /etc/ssh/ssh_host_* 2>/dev/null; true"))
    assert "ca_bundle" not in leftovers and "ssh_host_" not in leftovers, leftovers


def test_a_teams_own_image_from_the_node_image_example(node_image, tmp_path):
    """docker/examples/team: FROM the node image, the team's requirements added under the image's own pins;
    labels, user and entrypoint inherited."""
    root = Path(__file__).resolve().parents[2]
    example, tag = root / "docker" / "examples" / "team", "dscluster-team-example:test"
    ca = Path("/etc/ssl/certs/ca-certificates.crt")
    argv = [ENGINE, "build", "--format", "docker", "--file", str(example / "Dockerfile"), "--tag", tag,
            "--build-arg", f"BASE={node_image}", *(["--secret", f"id=ca_bundle,src={ca}"] if ca.is_file() else []),
            str(example)]
    t0 = time.monotonic()
    built = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    try:
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        print(f"team image (FROM {node_image} + docker/examples/team/requirements.txt): {time.monotonic() - t0:.0f} s")
        probe = "import humanize, torch, deepspeed; print(humanize.__version__, torch.__version__, deepspeed.__version__)"
        out = _ok(subprocess.run([ENGINE, "run", "--rm", "--network", "none", "--entrypoint", "python", tag, "-c", probe],
                                 capture_output=True, text=True, timeout=120))
        assert out.split()[-3:] == ["4.12.1", "2.13.0+cpu", "0.19.8"], out
        fmt = '{{.Config.User}} {{index .Config.Labels "io.dscluster.python"}} {{index .Config.Labels "io.dscluster.node-uid"}} {{.Config.Entrypoint}}'
        inspected = _ok(subprocess.run([ENGINE, "image", "inspect", "--format", fmt, tag], capture_output=True, text=True,
                                       timeout=60)).split()
        assert inspected[:3] == ["dscluster", "/opt/dscluster/venv/bin/python", "10001"], inspected
        assert "node" in " ".join(inspected[3:]) and "start" in " ".join(inspected[3:]), inspected
    finally:
        subprocess.run([ENGINE, "rmi", "--force", tag], capture_output=True, timeout=120)


def test_up_names_the_missing_image_and_starts_nothing(deploy):
    res = deploy.cli("up", "--cluster", str(deploy.spec), "--image", "dscluster-node:0.0.0-missing", "--gpus", "none")
    assert res.returncode != 0
    assert "podman save dscluster-node:0.0.0-missing | ssh" in res.stderr, res.stderr
    assert "nothing was started" in res.stderr + res.stdout
    assert all(deploy.container not in deploy.containers(h) for h in ("host0", "host1", "host2"))


def test_up_names_a_taken_port_and_an_unwritable_shared_dir_before_starting_anything(deploy):
    netns = deploy.hosts.hosts[1].netns
    listener = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c",
                                 "import socket, time; s = socket.socket(); s.bind(('0.0.0.0', 2222)); s.listen();"
                                 " print('listening', flush=True); time.sleep(120)"],
                                stdout=subprocess.PIPE, text=True)
    shared = deploy.hosts.shared_dir
    try:
        assert listener.stdout.readline().strip() == "listening"
        os.chown(shared, 0, 0)
        res = deploy.up()
    finally:
        os.chown(shared, 10001, 10001)
        listener.kill()
        listener.wait()
    assert res.returncode != 0
    assert f"port 2222 is already in use on {deploy.hosts.addresses[1]}" in res.stderr, res.stderr
    assert "not writable by the image's user (UID 10001" in res.stderr and "sudo chown 10001:10001" in res.stderr
    assert all(deploy.container not in deploy.containers(h) for h in ("host0", "host1", "host2"))


def test_up_starts_the_image_on_every_host_and_doctor_is_green(deploy):
    t0 = time.monotonic()
    out = _ok(deploy.up())
    print(f"up: {time.monotonic() - t0:.1f} s\n{out}")
    for host, address in zip(("host0", "host1", "host2"), deploy.hosts.addresses):
        assert deploy.containers(host) == [deploy.container], host
        # host networking: the node's sshd listens on the host's own address, in the host's namespace
        ss = _ok(deploy.on_host(host, "ss", "-Hltn", "sport = :2222"))
        assert address in ss or "*:2222" in ss or "0.0.0.0:2222" in ss, ss
    _ok(deploy.cli("config", "trust", "--all", "--cluster", str(deploy.spec)))
    # `up` recorded the image's interpreter in the controller's spec (DeepSpeed runs the launching
    # interpreter's path on every node: a launch from here must name the containers' one) ...
    # and its user's UID (the run directories a launch from here makes are the ranks' to write)
    assert 'python = "/opt/dscluster/venv/bin/python"' in deploy.spec.read_text(), deploy.spec.read_text()
    assert "node_uid = 10001" in deploy.spec.read_text() and "recorded python" in out
    # ... so doctor from the controller checks that interpreter on the nodes, with the pinned keys: green.
    doctor = deploy.cli("doctor", "--cluster", str(deploy.spec), timeout=300)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    # From the master's container, where the recipe launches: green.
    doctor = deploy.in_master("dscluster", "doctor", "--cluster", SPEC_ON_SHARED(deploy))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def test_a_users_train_py_launched_from_inside_the_master_container(deploy):
    work = deploy.hosts.shared_dir / "work"
    work.mkdir(exist_ok=True)
    (work / "train.py").write_text(TRAIN)
    (work / "ds_config.json").write_text(json.dumps(DS_CONFIG, indent=2))
    hostfile = "".join(f"{a} slots=1\n" for a in deploy.hosts.addresses)
    (work / "hostfile").write_text(hostfile)
    os.chown(work, 10001, 10001)
    for f in work.iterdir():
        os.chown(f, 10001, 10001)
    res = deploy.in_master("dscluster", "launch", "--attach", "--cluster", SPEC_ON_SHARED(deploy), "train.py", "--deepspeed",
                           "--deepspeed_config", "ds_config.json", workdir=str(work), timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    runs = sorted((deploy.hosts.shared_dir / "runs").iterdir())
    assert runs, "no run directory on the shared storage"
    logs = "".join(p.read_text(errors="replace") for p in runs[-1].rglob("*.log"))
    for rank in range(3):
        assert f"rank {rank} of 3" in logs, logs[-3000:]
    assert logs.count("done") >= 3, logs[-3000:]


def _rank_pids(netns: str) -> list[int]:
    """The user's train.py ranks running in one host's network namespace (the containers share this
    machine's kernel: their processes are in its /proc)."""
    want = os.stat(f"/run/netns/{netns}").st_ino
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or os.stat(proc / "ns" / "net").st_ino != want:
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"train.py") for a in argv) and b"deepspeed.launcher.launch" not in argv:
            pids.append(int(proc.name))
    return pids


def test_the_recipe_launched_from_the_controller_restarts_after_a_killed_rank(deploy):
    """The host-side `dscluster launch` with the spec `up` used (it names the image's interpreter), a
    hostfile of the hosts' IPs, the recipe's ds_config verbatim, the user's train.py: ranks in the three
    containers; one rank SIGKILLed; the supervisor tears the attempt down and runs it again to the end."""
    from dscluster.runs.records import store

    work = deploy.hosts.shared_dir / "work"  # written by the previous test: train.py, ds_config.json, hostfile
    assert (work / "train.py").exists()
    # The recipe's hostfile; its ssh settings (user, port, identity, python) from the spec, as a user sets it.
    res = deploy.cli("launch", "--detach", "--hostfile", "hostfile", "--max-restarts", "1", "--name", "ctl",
                     "train.py", "--deepspeed", "--deepspeed_config", "ds_config.json", "--steps", "40",
                     "--sleep", "0.5", timeout=300, cwd=work, env={"DSCLUSTER_CLUSTER": str(deploy.spec)})
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = res.stdout.strip().splitlines()[-1].strip()
    run_dir = store.run_path(deploy.hosts.shared_dir, run_id)
    record = store.read_record(run_dir).to_json()
    assert record["launch"]["python"] == "/opt/dscluster/venv/bin/python", record["launch"]
    netns = deploy.hosts.hosts[2].netns
    logs = lambda: "".join(p.read_text(errors="replace") for p in (run_dir / "logs").glob("*.log"))  # noqa: E731
    finished = lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED  # noqa: E731
    assert wait_for(lambda: "rank 2 step 3" in logs() or finished(), 300) and not finished(), logs()[-3000:]
    victims = _rank_pids(netns)
    assert len(victims) == 1, victims
    os.kill(victims[0], signal.SIGKILL)
    done = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 400, 2)
    assert done and done["status"] == "succeeded", (done, logs()[-3000:])
    assert len(done["attempts"]) == 2 and done["attempts"][0]["reason"], done["attempts"]
    events = [e["event"] for e in store.read_events(run_dir)]
    assert "teardown" in events and "restart" in events, events
    assert logs().count("done") >= 3, logs()[-3000:]
    assert not _rank_pids(netns)


def test_jupyterlab_in_the_master_container_wants_its_token(deploy):
    url = _ok(deploy.in_master("dscluster", "lab", "url"))
    line = next(ln for ln in url.splitlines() if "token=" in ln).strip()
    base, _, token = line.partition("/lab?token=")
    api = f"{base}/dscluster/api/cluster"
    probe = textwrap.dedent('''\
        import sys, urllib.request, urllib.error
        def get(url, headers):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20) as r:
                    return r.status
            except urllib.error.HTTPError as e:
                return e.code
        print(get(sys.argv[1], {"Authorization": "token " + sys.argv[2]}), get(sys.argv[1], {}))
    ''')
    # The lab listens on the master host's loopback only: ask from inside that host's network.
    netns = deploy.hosts.hosts[0].netns
    res = subprocess.run(["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c", probe, api, token],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.split() == ["200", "403"], res.stdout + res.stderr
    # and nothing answers on the host's cluster-facing address
    far = subprocess.run([sys.executable, "-c", probe, api.replace("127.0.0.1", deploy.hosts.addresses[0]), token],
                         capture_output=True, text=True, timeout=60)
    assert far.returncode != 0


PERSON = "imgalice"  # a person of the team (the hosts share this machine's accounts and /etc/dscluster)


@pytest.fixture
def person(deploy):
    """Removed again however the test ends: the account on the hosts and root's records there."""
    yield PERSON
    if subprocess.run(["id", PERSON], capture_output=True).returncode == 0:
        deploy.cli("user", "remove", PERSON, "--cluster", str(deploy.spec))
    subprocess.run(["userdel", "--remove", PERSON], capture_output=True)
    for folder in ("keys", "people"):
        Path("/etc/dscluster", folder, PERSON).unlink(missing_ok=True)


def test_a_person_added_from_the_controller_launches_as_themselves_across_the_node_containers(deploy, person,
                                                                                           tmp_path):
    """`dscluster user add` from the controller on a cluster of node containers: every container has their
    account within seconds (its agent reads root's records, mounted read-only from the host), the master's
    container has their own cluster key and their hub password, and the hub starts for them. What they launch
    in the master's container runs as them, under their UID, in all three containers. Nothing inside a
    container, root included, can change whose keys open which account. `user remove` takes it all back."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "laptop")], check=True)
    added = deploy.cli("user", "add", person, "--key", str(tmp_path / "laptop.pub"), "--cluster", str(deploy.spec))
    assert added.returncode == 0, added.stdout + added.stderr
    password = added.stdout.split("hand it over privately): ")[1].split()[0]
    uid = int(added.stdout.split("(uid ")[1].split(")")[0])
    for host in ("host0", "host1", "host2"):  # `user add` waited for every node container's agent
        assert _ok(deploy.on_host(host, ENGINE, "exec", deploy.container, "id", "-u", person)).strip() == str(uid)
    home = f"/var/lib/dscluster/node/homes/{person}"  # in the state volume, which down/up keep
    key = _ok(deploy.on_host("host0", ENGINE, "exec", "--user", person, deploy.container, "sh", "-c",
                             f"stat -c '%u %a' {home}/.dscluster/clusters/{NAME}/id_ed25519"))
    assert key.split() == [str(uid), "600"], key
    # The hub started in the master's container once the cluster had a person, and knows their password.
    netns = deploy.hosts.hosts[0].netns
    hub = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/hub/api/', timeout=10).status)"
    assert wait_for(lambda: subprocess.run(["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c", hub],
                                           capture_output=True, text=True).stdout.strip() == "200", 120)
    # `hub url` on the controller finds that hub (its state is in the master's container) and prints their line:
    # their key, the master container's sshd port and address.
    url = deploy.cli("hub", "url", "--cluster", str(deploy.spec))
    assert url.returncode == 0 and "http://127.0.0.1:8000/hub/login" in url.stdout, url.stdout + url.stderr
    from dscluster.cluster.spec import load_spec

    master = load_spec(deploy.spec).master
    line = next((ln for ln in url.stdout.splitlines() if ln.strip().startswith(f"{person}: ")), "")
    assert f"-i {tmp_path / 'laptop'} " in line and line.endswith(f"{person}@{master.address}") and \
        (master.ssh_port == 22 or f"-p {master.ssh_port} " in line), url.stdout
    # `user add` made the shared dir itself root's (sharedlayout.py): the node user cannot rename runs/ there
    st = os.stat(deploy.hosts.shared_dir)
    assert st.st_uid == 0 and st.st_mode & 0o7777 == 0o1775, (st.st_uid, oct(st.st_mode))
    check = "import sys; from dscluster.node import hubpass; print(hubpass.check(sys.argv[1], input()))"
    said = deploy.on_host("host0", ENGINE, "exec", "--interactive", "--user", "0", deploy.container, "python", "-c",
                          check, person, input=password + "\n")
    assert said.stdout.strip() == "True", said.stdout + said.stderr
    # No one in a container changes whose keys open which account: the node user cannot, nor root there.
    for user, line in (("dscluster", "Permission denied"), ("0", "Read-only file system")):
        tried = deploy.on_host("host1", ENGINE, "exec", "--user", user, deploy.container, "sh", "-c",
                               f"echo ssh-ed25519 AAAA >> /etc/dscluster/keys/{person}")
        assert tried.returncode != 0 and line in tried.stderr, (user, tried.stderr)
    # Their launch in the master's container, from their own directory: every rank runs as them.
    mine = deploy.hosts.shared_dir / "users" / person
    (mine / "train.py").write_text(TRAIN)
    (mine / "ds_config.json").write_text(json.dumps(DS_CONFIG))
    for f in ("train.py", "ds_config.json"):
        os.chown(mine / f, uid, uid)
    res = deploy.on_host("host0", ENGINE, "exec", "--user", person, "--workdir", str(mine), "--env", f"HOME={home}",
                         deploy.container, "dscluster", "launch", "--attach", "--cluster", SPEC_ON_SHARED(deploy),
                         "--name", "theirs", "train.py", "--deepspeed", "--deepspeed_config", "ds_config.json",
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    from dscluster.runs.records import store

    (run_dir,) = [d for d in (deploy.hosts.shared_dir / "runs").iterdir() if d.name.startswith("theirs-")]
    record = store.read_record(run_dir).to_json()
    assert record["status"] == "succeeded" and record.get("owner") == person, record
    assert os.stat(run_dir).st_uid == uid
    logs = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*.log"))
    for rank in range(3):
        assert f"rank {rank} of 3" in logs and logs.count(f" uid {uid}") >= 3, logs[-3000:]
    removed = deploy.cli("user", "remove", person, "--cluster", str(deploy.spec))
    assert removed.returncode == 0, removed.stdout + removed.stderr
    for host in ("host0", "host1", "host2"):
        assert deploy.on_host(host, ENGINE, "exec", deploy.container, "id", "-u", person).returncode != 0, host
    assert not Path("/etc/dscluster/people", person).exists() and not Path("/etc/dscluster/keys", person).exists()
    # `hub stop` on the controller stops that hub in the master's container (not "JupyterHub is not running").
    stopped = deploy.cli("hub", "stop", "--cluster", str(deploy.spec))
    assert stopped.returncode == 0 and "master's node container" in stopped.stdout, stopped.stdout + stopped.stderr
    assert wait_for(lambda: subprocess.run(["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c", hub],
                                           capture_output=True, text=True).stdout.strip() != "200", 60)
    assert deploy.cli("hub", "url", "--cluster", str(deploy.spec)).returncode == 1


def test_down_leaves_nothing_and_up_again_keeps_the_pinned_host_keys(deploy):
    known = Path(deploy.env["DSCLUSTER_HOME"]) / "clusters" / NAME / "known_hosts"
    pinned = known.read_text()
    t0 = time.monotonic()
    _ok(deploy.cli("down", "--cluster", str(deploy.spec)))
    print(f"down: {time.monotonic() - t0:.1f} s")
    for host in ("host0", "host1", "host2"):
        assert deploy.containers(host) == [], host
        assert f"dscluster-{NAME}-identity" not in deploy.volumes(host)  # the master's key copy is gone
        assert deploy.on_host(host, "ss", "-Hltn", "sport = :2222").stdout.strip() == ""
    _ok(deploy.up())
    assert known.read_text() == pinned
    doctor = deploy.in_master("dscluster", "doctor", "--cluster", SPEC_ON_SHARED(deploy))  # no re-trust needed
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    _ok(deploy.cli("down", "--cluster", str(deploy.spec), "--purge"))
    for host in ("host0", "host1", "host2"):
        assert deploy.containers(host) == [] and deploy.volumes(host) == [], host
    deploy.hosts.down()
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"dsc-{NAME}-" not in out
    assert not any(Path(f"/proc/{h.pid}").exists() for h in deploy.hosts.hosts if h.pid)
