"""The controller's side of the node image tests: the CLI as a user runs it, the hosts over the operator's ssh."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support import run_cli


class Deploy:
    """The controller's side: the CLI as a user runs it, the hosts reached with the operator's ssh.
    `engine_env`: set DSCLUSTER_ENGINE (False: the spec names the engine)."""

    def __init__(self, hosts, image: str, home: Path, name: str, engine: str, *, engine_env: bool = True,
                 client_env: dict | None = None):
        self.hosts, self.image, self.engine = hosts, image, engine
        self.spec = hosts.base / "dscluster.toml"
        self.client_env = dict(client_env or os.environ)
        self.env = {**self.client_env, "DSCLUSTER_HOME": str(home), "DSCLUSTER_HOST_SSH_CONFIG": str(hosts.ssh_config)}
        for key in ("DSCLUSTER_SHARED", "DSCLUSTER_CLUSTER", "DSCLUSTER_ENGINE"):
            self.env.pop(key, None)
        if engine_env:
            self.env["DSCLUSTER_ENGINE"] = engine
        self.container = f"dscluster-{name}"

    def cli(self, *args: str, timeout: float = 300, cwd: Path | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
        return run_cli(*args, env={**self.env, **(env or {})}, timeout=timeout, cwd=cwd or self.hosts.base)

    def up(self) -> subprocess.CompletedProcess:
        return self.cli("up", "--cluster", str(self.spec), "--image", self.image, "--gpus", "none",
                        "--shm-size", "1g", "--ulimit", "none", "--wait", "90", timeout=400)

    def on_host(self, host: str, *argv: str, timeout: float = 120, input: str | None = None):
        return subprocess.run(self.hosts.ssh_argv(host, *argv), capture_output=True, text=True, timeout=timeout,
                              input=input)

    def in_master(self, *argv: str, timeout: float = 300, workdir: str | None = None):
        """`ssh host0 <engine> exec --user dscluster dscluster-<name> ...`: as the node user (the container's
        own user is root, for the agent's sshd)."""
        return self.on_host("host0", self.engine, "exec", "--user", "dscluster", *(["--workdir", workdir] if workdir else []),
                            self.container, *argv, timeout=timeout)

    def containers(self, host: str) -> list[str]:
        res = self.on_host(host, self.engine, "ps", "--all", "--format", "{{.Names}}")
        assert res.returncode == 0, res.stderr
        return res.stdout.split()

    def volumes(self, host: str) -> list[str]:
        res = self.on_host(host, self.engine, "volume", "ls", "--format", "{{.Name}}")
        assert res.returncode == 0, res.stderr
        return res.stdout.split()


def ok(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout
