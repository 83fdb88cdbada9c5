"""A team's first hour, walked as a newcomer walks it (a journey, not a fixture): from a fresh state, in the
README's order, with the defaults the product offers.

Root follows the simulated-cluster section (`dscluster demo --nodes 3`, which starts the cluster, then
`sim down`), then the team section as written: `sim up 3 --hub`, `user add alice --key alice.pub`,
`user add bob --admin`, `hub url`, `user list`. Alice opens the tunnel `hub url` printed for her (her key,
node0's sshd port and address) and logs in at the URL it printed; in the panel she presses New run and
Launch without touching the form, and the run succeeds; in her lab she opens a terminal (`dscluster` is on
its PATH, it starts in her own folder) and a new notebook (made in her own folder), which launches a run
through the notebook API and cannot import a module the node user planted at the shared root. Bob logs in
through the same URL and his default launch, with the panel's wait box, queues behind hers. `hub stop`
stops the hub in node0 and names its pid as this machine sees it. Every run is stopped, every browser
closed, the tunnel, the people and the cluster removed at teardown, pass or fail.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from polling import wait_for
from support import (
    VENV_CLI,
    answers_ok,
    chromium,
    free_port,
    hub_log_in,
    run_cli,
    show_panel,
    shown_run_id,
)

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.browser, pytest.mark.slow]

TAG = f"{os.getpid() % 100000:05d}"
ALICE, BOB = f"alice{TAG}", f"bob{TAG}"
SIM_STATE = Path("/run/dscluster/sims/default/state.json")  # the README's cluster: the default one
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
NOTEBOOK = """import dscluster, importlib.util
print("PLANTED", importlib.util.find_spec("dscplanted") is not None)
run = dscluster.launch("-m dscluster.train", "--preset tiny --steps 5000 --log-interval 1", config={"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}, name="notebook")
print("RUN", run.id, run.owner)
"""


def wait_until(predicate, timeout: float, what: str):
    value = wait_for(predicate, timeout, 1.0)
    assert value, f"timed out after {timeout:.0f}s waiting for {what}"
    return value


class Team:
    """The reader's shell (the venv first, DSCLUSTER_HOME of their own) and what the journey left to undo."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("DSCLUSTER_", "SLURM_"))}
        self.env.update(DSCLUSTER_HOME=str(scratch / "home"), DSCLUSTER_LANG="en",
                        PATH=f"{Path(VENV_CLI[0]).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}")
        self.runs: list[str] = []
        self.passwords: dict[str, str] = {}
        self.tunnel: subprocess.Popen | None = None

    def cli(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        proc = run_cli(*args, env=self.env, cwd=self.scratch, timeout=timeout, entry=VENV_CLI,
                       stdin=subprocess.DEVNULL)
        if check:
            assert proc.returncode == 0, f"dscluster {' '.join(args)}: {proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    def teardown(self) -> list[str]:
        problems = []
        for run_id in self.runs:
            self.cli("stop", run_id, "--timeout", "30", check=False, timeout=180)
        if self.tunnel is not None:
            self.tunnel.send_signal(signal.SIGTERM)
            self.tunnel.wait(timeout=30)
        down = self.cli("sim", "down", "--purge", check=False, timeout=300)
        if down.returncode != 0:
            problems.append(f"sim down --purge: {down.stdout[-500:]}{down.stderr[-500:]}")
        for name in (ALICE, BOB):
            try:
                pwd.getpwnam(name)
            except KeyError:
                continue
            problems.append(f"account {name} left by sim down")
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        return problems


@pytest.fixture(scope="module")
def team():
    if SIM_STATE.exists():
        pytest.fail("a simulated cluster 'default' is up: the README's commands would take it over "
                    "(dscluster sim down --purge, then run this test again)")
    scratch = Path(tempfile.mkdtemp(prefix="dsc-journey-", dir="/var/tmp"))
    os.chmod(scratch, 0o755)  # the people's servers read the hub's single-user config under its home
    (scratch / "home").mkdir(mode=0o755)
    t = Team(scratch)
    try:
        yield t
    finally:
        problems = t.teardown()
        shutil.rmtree(scratch, ignore_errors=True)
        assert not problems, problems


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _open_tunnel(team: Team, url_out: str, spec) -> str:
    """Alice's line of `hub url`, run as printed (a free local port when the hub's own one is taken here);
    returns the login URL on it."""
    login = url_out.splitlines()[0].strip()
    assert login == "http://127.0.0.1:8000/hub/login", url_out
    line = next(ln.strip().split(": ", 1)[1] for ln in url_out.splitlines() if ln.strip().startswith(f"{ALICE}: "))
    master = spec.master
    assert f"-i {team.scratch / 'alice.pub'}".removesuffix(".pub") in line, line
    assert f"-p {master.ssh_port} " in line and line.endswith(f"{ALICE}@{master.address}"), line
    port = free_port()
    argv = shlex.split(line.replace("-L 8000:", f"-L {port}:"))
    log = team.scratch / "tunnel.log"
    with open(log, "ab") as out:
        team.tunnel = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out)
    base = f"http://127.0.0.1:{port}/"
    wait_until(lambda: answers_ok(base + "hub/api") or team.tunnel.poll() is not None, 120, "the tunnel to the hub")
    assert team.tunnel.poll() is None, log.read_text(errors="replace")
    return base


def _into_lab(page, name: str) -> None:
    """Her JupyterLab after the login (JupyterHub spawns it first), with the DeepSpeed panel open."""
    try:
        page.wait_for_url(re.compile(rf"/user/{name}/lab"), timeout=240_000)
    except Exception as err:  # noqa: BLE001 - say where the browser is instead
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"test_team_journey--{name}-no-lab.png"))
        raise AssertionError(f"{name}'s lab did not open; the browser is at {page.url}: "
                             f"{page.locator('body').inner_text()[:500]}") from err
    show_panel(page, timeout_ms=180_000)


def _processes() -> list[tuple[int, bytes]]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            found.append((int(proc.name), (proc / "cmdline").read_bytes()))
        except OSError:
            continue
    return found


def _readme_order(team: Team):
    """Root's part: the simulated-cluster section's demo, then the team section's commands."""
    from dscluster.cluster.spec import load_spec

    team.cli("demo", "--nodes", "3", timeout=1200)
    team.cli("sim", "down")
    team.cli("sim", "up", "3", "--hub")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(team.scratch / "alice")], check=True)
    for name, extra in ((ALICE, ["--key", "alice.pub"]), (BOB, ["--admin"])):
        out = team.cli("user", "add", name, *extra).stdout
        team.passwords[name] = re.search(r"hand it over privately\): (\S+)", out).group(1)
    url_out = team.cli("hub", "url").stdout
    listed = team.cli("user", "list").stdout
    assert ALICE in listed and BOB in listed
    spec = load_spec(Path(team.env["DSCLUSTER_HOME"]) / "sims" / "default" / "dscluster.toml")
    return spec, url_out


def _new_run_with_defaults(page, *, wait: bool = False) -> None:
    panel = page.locator("#dscluster-panel")
    if panel.locator("form.dsc-launch-form").is_hidden():
        panel.locator("button.dsc-new-run").click()
    page.wait_for_function("() => document.querySelector('form.dsc-launch-form input[name=script]').value !== ''")
    if wait:
        panel.locator("input.dsc-wait").check()
    panel.locator("button.dsc-launch").click()


def _hover_the_loss_chart(page) -> list[str]:
    """Her run's loss chart, hovered mid-way: its readout says the step and the value there."""
    node = page.locator('.dsc-runview:visible .dsc-chart[data-kind="loss"]')
    over = node.locator(".u-over")  # uPlot's plotting area, where the cursor is tracked
    over.wait_for(timeout=60_000)
    box = over.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] / 2)
    readout = node.locator(".dsc-chart-readout")
    page.wait_for_function("el => el.dataset.hover === 'yes'", arg=readout.element_handle(), timeout=60_000)
    return readout.inner_text().split()  # "step 20 · 4.0"


def _launcher_card(page, category: str, text: str | None = None):
    """A card of the lab's launcher (a new launcher tab when none is showing)."""
    cards = page.locator(f'.jp-LauncherCard[data-category="{category}"]:visible')  # a launcher tab behind
    card = (cards.filter(has_text=text) if text else cards).first                  # another holds hidden ones
    if not card.count():
        # the main area's "+" (a new launcher tab), as a person does when a run's tab covers the launcher;
        # the file browser's own New Launcher button is hidden while the DeepSpeed panel holds the sidebar
        page.locator(".lm-DockPanel .lm-TabBar-addButton").first.click()
    card.wait_for(timeout=60_000)
    return card


def _proc_view(pid: int) -> dict:
    """What /proc says of one process (for the choice of her terminal's shell, and for a failure message)."""
    entry = Path(f"/proc/{pid}")
    seen = {"pid": pid}
    for key, read in (("comm", lambda: (entry / "comm").read_text().strip()),
                      ("ppid", lambda: int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])),
                      ("uid", lambda: entry.stat().st_uid),
                      ("cwd", lambda: os.readlink(entry / "cwd")),
                      ("cmdline", lambda: (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200])):
        try:
            seen[key] = read()
        except (OSError, ValueError, IndexError):
            seen[key] = None
    return seen


def _lab_children(uid: int) -> tuple[list[int], list[dict]]:
    """Her JupyterLab servers (jupyterhub-singleuser running as `uid`, on this machine or in node0's
    namespaces: the same process table) and the processes whose parent is one of them."""
    procs = [_proc_view(int(e.name)) for e in Path("/proc").iterdir() if e.name.isdigit()]
    servers = [p["pid"] for p in procs if p.get("uid") == uid and "jupyterhub-singleuser" in (p.get("cmdline") or "")]
    return servers, [p for p in procs if p.get("ppid") in servers]


def _terminal_in_lab(page, own: Path) -> None:
    """A terminal from the lab's launcher: its shell starts in her own folder with `dscluster` on its PATH
    (read from the shell's own /proc entry: what the terminal shows is drawn on a canvas). Her terminal's
    shell is the new child of her own JupyterLab server (terminado forks it there) once it has become the
    interactive shell (the terminal's `/bin/sh -c 'cd ...; exec bash -i'` execs it after its cd): other
    shells of hers (her runs' ssh sessions, a kernel's subprocess) are not it, nor is the `sh` before its exec."""
    uid = pwd.getpwnam(ALICE).pw_uid
    shell = "bash" if os.path.exists("/bin/bash") else "sh"
    before = {p["pid"] for p in _lab_children(uid)[1]}
    _launcher_card(page, "Other", "Terminal").click()
    page.locator(".jp-Terminal").first.wait_for(timeout=120_000)
    seen: list = []

    def ready() -> dict | None:
        servers, children = _lab_children(uid)
        seen[:] = [servers, children]
        new = [p for p in children if p["pid"] not in before and p.get("comm") == shell
               and "-c" not in (p.get("cmdline") or "").split()]
        return new[0] if new else None

    found = wait_for(ready, 240, 1.0)
    assert found, (f"no interactive {shell} of her terminal under her JupyterLab server after 240s; her servers "
                   f"{seen[0] if seen else '?'}, their children {seen[1] if seen else '?'}, before the click {before}")
    env = dict(item.split("=", 1) for item in Path(f"/proc/{found['pid']}/environ").read_text().split("\0")
               if "=" in item)
    assert found["cwd"] == str(own), f"her terminal's shell starts in {found['cwd']}, not {own}: {found}"
    assert shutil.which("dscluster", path=env.get("PATH", "")) == str(Path(VENV_CLI[0])), \
        f"her terminal's PATH {env.get('PATH')} has no {VENV_CLI[0]} first: {found}"


def _notebook_state(page) -> dict:
    """What the notebook shows: its kernel's status (the toolbar's indicator), the cell's prompt, its outputs."""
    shown = page.locator(".jp-OutputArea-output")
    return {"kernel": page.evaluate("() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator, "
                                    ".jp-KernelStatus, .jp-Toolbar-kernelStatus')].map(e => (e.getAttribute("
                                    "'data-status') || '') + ' ' + (e.getAttribute('title') || e.textContent))"),
            "prompt": page.locator(".jp-Notebook .jp-InputPrompt").first.inner_text(),
            "source": page.locator(".jp-Notebook .jp-Cell .cm-content").first.inner_text()[:300],
            "outputs": [shown.nth(i).inner_text()[:500] for i in range(shown.count())]}


def _notebook_launch(page, own: Path) -> str:
    """A new notebook from the lab's launcher (made in her own folder) launches through the notebook API. The
    code is typed once the kernel is idle (its first reply came back through the hub's proxy), then run."""
    _launcher_card(page, "Notebook").click()
    cell = page.locator(".jp-Notebook .jp-Cell .cm-content").first
    cell.wait_for(timeout=120_000)
    idle = page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first
    try:
        idle.wait_for(timeout=240_000)
    except Exception as err:  # noqa: BLE001 - say what the notebook shows instead
        raise AssertionError(f"her notebook's kernel never became idle: {_notebook_state(page)}") from err
    cell.click()
    page.keyboard.insert_text(NOTEBOOK)
    page.wait_for_function("() => document.querySelector('.jp-Notebook .jp-Cell .cm-content')?.innerText"
                           ".includes('dscluster.launch')", timeout=60_000)
    prompt = page.locator(".jp-Notebook .jp-InputPrompt").first
    for how in ("Shift+Enter", "the toolbar's run button"):
        if how == "Shift+Enter":
            page.keyboard.press("Shift+Enter")
        else:  # the key press did not reach the notebook (the prompt still "[ ]:"): as a person would, click run
            cell.click()
            page.locator('.jp-NotebookPanel-toolbar [data-command="notebook:run-cell-and-select-next"]').first.click()
        try:  # the frontend sent the cell to the kernel: its prompt is "[*]:" (then "[1]:")
            page.wait_for_function("el => el.innerText.trim() !== '[ ]:'", arg=prompt.element_handle(), timeout=30_000)
            break
        except Exception:  # noqa: BLE001, S112 - the next way of running it, then the failure says what is shown
            continue
    output = page.locator(".jp-OutputArea-output", has_text="RUN ").first
    try:
        output.wait_for(timeout=300_000)
    except Exception as err:  # noqa: BLE001 - say what the notebook shows instead
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "test_team_journey--alice-notebook.png"))
        raise AssertionError(f"no run from her notebook after 300s: {_notebook_state(page)}") from err
    text = page.locator(".jp-Notebook").first.inner_text()
    assert "PLANTED False" in text, text  # the node user's module at the shared root is not on her kernel's path
    run_id, owner = re.search(r"RUN (\S+) (\S+)", text).groups()
    assert owner == ALICE
    made = [p for p in own.glob("*.ipynb")]
    assert made and all(p.stat().st_uid == pwd.getpwnam(ALICE).pw_uid for p in made), made
    return run_id


def test_a_team_follows_the_readme_and_its_first_hour_works_in_the_browser(team, browser):
    from dscluster.runs.records import store

    spec, url_out = _readme_order(team)
    shared = Path(spec.shared_dir)
    own = shared / "users" / ALICE
    planted = shared / "dscplanted.py"  # the node user plants code where a lab at the shared root would run it
    planted.write_text(f"open({str(shared / 'planted-ran')!r}, 'w').write('ran')\n")
    node_user = pwd.getpwnam(spec.ssh_user)
    os.chown(planted, node_user.pw_uid, node_user.pw_gid)
    base = _open_tunnel(team, url_out, spec)
    contexts = []
    try:
        a_ctx, a_page = hub_log_in(browser, base, ALICE, team.passwords[ALICE])
        contexts.append(a_ctx)
        _into_lab(a_page, ALICE)
        _new_run_with_defaults(a_page)  # the first click: the form as it comes
        first = shown_run_id(a_page, "succeeded", timeout_ms=600_000)
        team.runs.append(first)
        record = store.read_record(shared / "runs" / first)
        assert record.owner == ALICE
        given = shared / "runs" / first / "ds_config.given.json"  # the form's inline config, in her run's dir
        assert given.is_file() and given.stat().st_uid == pwd.getpwnam(ALICE).pw_uid
        SHOTS.mkdir(parents=True, exist_ok=True)
        a_page.screenshot(path=str(SHOTS / "test_team_journey--alice-first-run.png"))
        words = _hover_the_loss_chart(a_page)
        assert words[0] == "step" and words[2] == "·" and int(words[1].replace(",", "")) >= 1, words
        float(words[3].replace(",", ""))

        _terminal_in_lab(a_page, own)
        long_run = _notebook_launch(a_page, own)
        team.runs.append(long_run)
        assert store.read_record(shared / "runs" / long_run).owner == ALICE
        assert not (shared / "planted-ran").exists()

        b_ctx, b_page = hub_log_in(browser, base, BOB, team.passwords[BOB])
        contexts.append(b_ctx)
        _into_lab(b_page, BOB)
        _new_run_with_defaults(b_page, wait=True)
        queued = shown_run_id(b_page, "queued")
        team.runs.append(queued)
        assert store.read_record(shared / "runs" / queued).owner == BOB
        b_page.screenshot(path=str(SHOTS / "test_team_journey--bob-queued.png"))
    finally:
        for context in contexts:
            context.close()
    # `hub stop` on this machine stops the hub in node0, naming its pid as seen here.
    config = str(team.scratch / "home" / "hub" / "private" / "jupyterhub_config.json").encode()
    hub_pids = [pid for pid, argv in _processes() if config in argv]
    stopped = team.cli("hub", "stop").stdout
    assert any(f"(pid {pid})" in stopped for pid in hub_pids), (stopped, hub_pids)
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in hub_pids), 60, "the hub to stop")
