"""A team on the simulated cluster: two people made with `dscluster user add`, JupyterHub started with
`dscluster hub start`; in headless Chromium each logs in with the password `user add` printed and gets
their own JupyterLab with the DeepSpeed panel, whose server runs as their own UID. Person A launches from
their panel; person B sees the run and its owner, gets no stop button and a 403 from the API, and B's launch
on the same GPU waits (the panel's wait box) until A's run ends; each run's ranks run under its owner's UID.
No password or token
is in a log, a command line or the config; at teardown the hub, its proxy, the people's servers and
the accounts are gone, pass or fail. Nothing is mocked: real JupyterHub, its proxy, real accounts."""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support import VENV_CLI, answers_ok, chromium, free_port, hub_log_in, run_cli, show_panel, shown_run_id

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.browser, pytest.mark.slow]

TAG = f"{os.getpid() % 100000:05d}"
PEOPLE = (f"hub{TAG}a", f"hub{TAG}b")
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _cli(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = run_cli(*args, env=env, timeout=300, entry=VENV_CLI, stdin=subprocess.DEVNULL)
    if check:
        assert proc.returncode == 0, f"dscluster {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
    return proc


def _hub_pids(home: Path) -> list[int]:
    """Processes of this hub: JupyterHub, its proxy, the people's servers."""
    marks = (str(home / "hub").encode(), b"dscluster.node.hubproxy")
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes() if b"dscluster.node.hubproxy" in cmdline else b""
        except OSError:
            continue
        if marks[0] in cmdline or (marks[1] in cmdline and f"DSCLUSTER_HOME={home}".encode() in environ):
            found.append(int(proc.name))
    return found


def _cmdlines(home: Path) -> list[str]:
    out = []
    for pid in _hub_pids(home):
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return out


@pytest.fixture(scope="module")
def team(sim_cluster):
    sim = sim_cluster(1)
    home = Path(tempfile.mkdtemp(prefix="dsc-hub-", dir="/var/tmp"))
    os.chmod(home, 0o755)  # the people's servers read the hub's single-user config under it
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}
    spec = str(sim.spec.path)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / "a_key")], check=True)
    passwords: dict[str, str] = {}
    port = free_port()
    try:
        for name, extra in zip(PEOPLE, (["--key", str(home / "a_key.pub")], ["--admin"])):
            out = _cli(env, "user", "add", name, "--cluster", spec, *extra).stdout
            passwords[name] = re.search(r"hand it over privately\): (\S+)", out).group(1)
        _cli(env, "hub", "start", "--cluster", spec, "--port", str(port))
        base = f"http://127.0.0.1:{port}/"
        assert answers_ok(base + "hub/api")
        yield {"sim": sim, "home": home, "env": env, "spec": spec, "base": base, "passwords": passwords}
    finally:
        _cli(env, "hub", "stop", check=False)
        for name in PEOPLE:
            if _cli(env, "user", "remove", name, "--cluster", spec, check=False).returncode != 0:
                subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        left = _hub_pids(home)
        accounts = [n for n in PEOPLE if _has_account(n)]
        import shutil

        shutil.rmtree(home, ignore_errors=True)
        assert not left, f"hub processes left running: {left}"
        assert not accounts, f"accounts left: {accounts}"


def _has_account(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _log_in(browser, team, name: str, password: str):
    return hub_log_in(browser, team["base"], name, password)


def test_the_people_are_in_the_spec_with_their_uids_and_dirs(team):
    listed = json.loads(_cli(team["env"], "user", "list", "--json", "--cluster", team["spec"]).stdout)
    assert [p["name"] for p in listed] == list(PEOPLE)
    assert [p["admin"] for p in listed] == [False, True]
    shared = team["sim"].spec.shared_dir
    for person in listed:
        entry = pwd.getpwnam(person["name"])
        assert entry.pw_uid == person["uid"] and person["hub_password"]
        own = shared / "users" / person["name"]
        st = own.stat()
        assert st.st_uid == entry.pw_uid and st.st_mode & 0o022 == 0  # theirs; no one else writes there
    keys = Path(pwd.getpwnam(PEOPLE[0]).pw_dir) / ".ssh" / "authorized_keys"
    assert keys.read_text().split()[:2] == (team["home"] / "a_key.pub").read_text().split()[:2]
    assert keys.stat().st_uid == pwd.getpwnam(PEOPLE[0]).pw_uid and keys.stat().st_mode & 0o077 == 0


def test_adding_a_person_twice_or_a_bad_name_or_a_taken_uid_is_refused(team):
    env, spec = team["env"], team["spec"]
    again = _cli(env, "user", "add", PEOPLE[0], "--cluster", spec, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr and "Traceback" not in again.stderr
    bad = _cli(env, "user", "add", "Bad Name", "--cluster", spec, check=False)
    assert bad.returncode != 0 and "not a valid user name" in bad.stderr
    taken = _cli(env, "user", "add", f"hub{TAG}c", "--uid", str(pwd.getpwnam(PEOPLE[0]).pw_uid), "--cluster", spec,
                 check=False)
    assert taken.returncode != 0 and "is taken by" in taken.stderr
    assert not _has_account(f"hub{TAG}c")


def test_each_person_logs_in_and_gets_their_own_lab_with_the_panel(team, browser):
    contexts = []
    try:
        for name in PEOPLE:
            context, page = _log_in(browser, team, name, team["passwords"][name])
            contexts.append(context)
            # the panel works for them: it lists the cluster's node (the published spec, read as that person)
            _open_panel(page, name)
            if name == PEOPLE[0]:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / "test_hub_sim--person-a-lab.png"))
        # Each person's server runs as their own UID, from the hub's single-user config.
        owners = {}
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cmdline = (proc / "cmdline").read_bytes()
                if f"--config={team['home']}/hub/singleuser/".encode() not in cmdline:
                    continue
                environ = dict(kv.split(b"=", 1) for kv in (proc / "environ").read_bytes().split(b"\0") if b"=" in kv)
                uid = int(next(ln for ln in (proc / "status").read_text().splitlines()
                               if ln.startswith("Uid:")).split()[1])
            except (OSError, StopIteration):
                continue
            owners[environ[b"JUPYTERHUB_USER"].decode()] = uid
        assert owners == {name: pwd.getpwnam(name).pw_uid for name in PEOPLE}
    finally:
        for context in contexts:
            context.close()


def test_a_wrong_password_is_refused(team, browser):
    context, page = _log_in(browser, team, PEOPLE[0], "not-the-password")
    try:
        page.locator("#login_submit").wait_for()
        assert "/hub/login" in page.url and "/user/" not in page.url
        assert "Invalid username or password" in page.content()
    finally:
        context.close()


def test_no_password_or_token_in_a_log_or_a_command_line(team, browser):
    test_each_person_logs_in_and_gets_their_own_lab_with_the_panel(team, browser)  # servers up, tokens made
    private = team["home"] / "hub" / "private"
    secrets = set(team["passwords"].values()) | {(private / "cookie_secret").read_text().strip()}
    for pid in _hub_pids(team["home"]):
        try:
            environ = (Path(f"/proc/{pid}") / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for kv in environ:
            key, _, value = kv.partition(b"=")
            if key in (b"CONFIGPROXY_AUTH_TOKEN", b"JUPYTERHUB_API_TOKEN") and value:
                secrets.add(value.decode())
    assert len(secrets) >= 5  # two passwords, the cookie secret, the proxy token, the servers' tokens
    logs = [private / "hub.log", *Path(team["sim"].spec.shared_dir).rglob("*.log"),
            *Path(team["home"]).rglob("*.log"), private / "jupyterhub_config.json",
            team["home"] / "hub" / "singleuser" / "jupyter_config.json"]
    for path in logs:
        text = path.read_text(errors="replace") if path.is_file() else ""
        for secret in secrets:
            assert secret not in text, f"a secret is in {path}"
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        assert not any(secret in cmdline for secret in secrets), f"a secret on the command line of {proc.name}"
    # The hub's state is root's alone.
    assert private.stat().st_mode & 0o777 == 0o700 and private.stat().st_uid == 0
    assert (private / "passwords.json").stat().st_mode & 0o077 == 0


WAIT_SCRIPT = (Path(__file__).resolve().parents[1] / "data" / "wait_for_file.py").read_text()


def _open_panel(page, name: str):
    page.wait_for_url(re.compile(rf"/user/{name}/lab"), timeout=180_000)
    return show_panel(page, timeout_ms=120_000)


def _launch_from_form(page, script: Path, release: Path, *, wait: bool = False) -> None:
    panel = page.locator("#dscluster-panel")
    if panel.locator("form.dsc-launch-form").is_hidden():
        panel.locator("button.dsc-new-run").click()
    page.wait_for_function("() => document.querySelector('form.dsc-launch-form input[name=script]').value !== ''")
    panel.locator('form.dsc-launch-form input[name="script"]').fill(str(script))
    panel.locator('input[name="args"]').fill(str(release))
    panel.locator('textarea[name="config"]').fill("")
    panel.locator('input[name="max_restarts"]').fill("0")
    if wait:
        panel.locator("input.dsc-wait").check()
    panel.locator("button.dsc-launch").click()


def _rank_uids(shared: Path, run_id: str) -> set[str]:
    logs = (shared / "runs" / run_id / "logs").glob("*rank*.log")
    return {line.split()[3] for p in logs for line in p.read_text(errors="replace").splitlines() if " waits for " in line}


def test_a_launches_from_the_panel_b_sees_it_cannot_stop_it_and_waits_for_its_gpus(team, browser):
    """The issue's scenario through the hub: person A launches from their panel; person B sees A's run with
    its owner, has no stop button for it and the API refuses B's stop; B's launch on the same GPU (the
    panel's "wait" box) queues until A's run ends, then runs. Each run's ranks run under its owner's UID."""
    from dscluster.runs.records import store

    a_name, b_name = PEOPLE
    shared = Path(team["sim"].spec.shared_dir)
    script = shared / "hub_wait.py"
    script.write_text(WAIT_SCRIPT)
    script.chmod(0o644)
    contexts, started = [], []
    try:
        a_ctx, a_page = _log_in(browser, team, a_name, team["passwords"][a_name])
        contexts.append(a_ctx)
        _open_panel(a_page, a_name)
        _launch_from_form(a_page, script, shared / "hub-a.release")
        a_run = shown_run_id(a_page, "running")
        started.append(a_run)
        assert store.read_record(shared / "runs" / a_run).owner == a_name
        a_uid = str(pwd.getpwnam(a_name).pw_uid)
        deadline = time.monotonic() + 120
        while not _rank_uids(shared, a_run) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _rank_uids(shared, a_run) == {a_uid}

        b_ctx, b_page = _log_in(browser, team, b_name, team["passwords"][b_name])
        contexts.append(b_ctx)
        panel = _open_panel(b_page, b_name)
        row = panel.locator(f'.dsc-run-row[data-run-id="{a_run}"]')
        row.wait_for(timeout=60_000)
        assert row.locator(".dsc-owner").inner_text() == a_name
        assert row.locator("button.dsc-stop").count() == 0
        status = b_page.evaluate(
            """async (url) => {
                 const m = document.cookie.match(/_xsrf=([^;]+)/);
                 const r = await fetch(url, {method: 'POST', body: '{}',
                   headers: {'X-XSRFToken': m ? decodeURIComponent(m[1]) : ''}});
                 return r.status; }""", f"/user/{b_name}/dscluster/api/runs/{a_run}/stop")
        assert status == 403
        assert store.read_record(shared / "runs" / a_run).status == "running"

        _launch_from_form(b_page, script, shared / "hub-b.release", wait=True)
        b_run = shown_run_id(b_page, "queued")
        started.append(b_run)
        (shared / "hub-a.release").write_text("")
        b_run_again = shown_run_id(b_page, "running")
        assert b_run_again == b_run
        assert store.read_record(shared / "runs" / a_run).status == "succeeded"
        deadline = time.monotonic() + 120
        while not _rank_uids(shared, b_run) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _rank_uids(shared, b_run) == {str(pwd.getpwnam(b_name).pw_uid)}
        SHOTS.mkdir(parents=True, exist_ok=True)
        b_page.screenshot(path=str(SHOTS / "test_hub_sim--person-b-runs-after-a.png"))
        (shared / "hub-b.release").write_text("")
        shown_run_id(b_page, "succeeded")
    finally:
        for context in contexts:
            context.close()
        for run_id in started:  # pass or fail: no run outlives the test
            _cli(team["env"], "stop", run_id, "--cluster", team["spec"], "--timeout", "20", check=False)


def test_the_hub_stops_with_everything_it_started(team, browser):
    test_each_person_logs_in_and_gets_their_own_lab_with_the_panel(team, browser)
    assert len(_hub_pids(team["home"])) >= 4  # the hub, its proxy, two people's servers
    _cli(team["env"], "hub", "stop")
    deadline = time.monotonic() + 30
    while _hub_pids(team["home"]) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not _hub_pids(team["home"])


def test_public_serves_tls_with_the_fingerprint_it_prints(team):
    """`--public`: every address, over TLS with a self-signed certificate made once; the fingerprint
    printed is the one the server presents (the fixture stops this hub)."""
    import socket
    import ssl

    port = free_port()
    out = _cli(team["env"], "hub", "start", "--public", "--cluster", team["spec"], "--port", str(port)).stdout
    printed = re.search(r"fingerprint is ([0-9A-F:]{95})", out).group(1)
    cert = team["home"] / "hub" / "private" / "tls.crt"
    context = ssl.create_default_context(cafile=str(cert))
    context.check_hostname = False
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw) as tls:
            served = tls.getpeercert(binary_form=True)
    import hashlib

    assert ":".join(f"{b:02X}" for b in hashlib.sha256(served).digest()) == printed
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/hub/api", context=context, timeout=10) as resp:
        assert resp.status == 200 and "version" in json.loads(resp.read())
    assert "--ssl-key" in " ".join(_cmdlines(team["home"]))  # a path, the key itself never
