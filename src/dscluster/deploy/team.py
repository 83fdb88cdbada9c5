"""The people of a cluster of node containers (`dscluster up`): what `dscluster user` does inside them.

On the hosts, a person is what node/accounts.py makes on bare hosts: their account and, as root, root's
records in /etc/dscluster (their sshd key file, their UID), which every node container mounts read-only
(dockerrun.RECORDS_DIR); each container's agent makes their account from those records within seconds
(node/people.py). What only the master's container can hold is made there, as root through the engine on
the master host (as `up` reaches it): their account with its home in the state volume (kept by `down`/`up`),
their directory on the shared storage, their own cluster key (made as them, its public half returned for
the records), and their hub password (on stdin, never on a command line).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from dscluster.cluster.runner import CommandResult, Runner
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.deploy.dockerrun import AGENT_STATE_DIR, choose_engine, container_name, docker_exec_argv

HOMES = f"{AGENT_STATE_DIR}/homes"  # the agent's --state-dir/homes (node/agent.py): people's homes in a container
ACCOUNT_WAIT_S = 60.0  # each node's agent looks at the records every few seconds (node/supervise.py)


def running_engine(spec: ClusterSpec, master: Runner) -> str | None:
    """The engine running this cluster's node container on the master host, or None (bare hosts, not up)."""
    engine = choose_engine(None, os.environ.get("DSCLUSTER_ENGINE"), spec.engine)
    res = master.run([engine, "container", "inspect", "--format", "{{.State.Running}}", container_name(spec)],
                     timeout=60)
    return engine if res.ok and res.stdout.strip() == "true" else None


def in_container(spec: ClusterSpec, engine: str, runner: Runner, argv: list[str], *, stdin: str | None = None,
                 timeout: float = 120) -> CommandResult:
    """argv as root in this cluster's node container on the runner's host."""
    return runner.run(docker_exec_argv(spec, argv, engine, user="0", interactive=stdin is not None), input=stdin,
                      timeout=timeout)


def publish_spec(spec: ClusterSpec, master: Runner) -> CommandResult:
    """The spec with its people, where `up` published it (<shared>/.dscluster/dscluster.toml, through the master
    host): a person's launch in the master's container runs as them once it lists them (cluster/spec.py
    as_person)."""
    from dataclasses import replace  # noqa: PLC0415

    from dscluster.cluster.spec import format_spec  # noqa: PLC0415
    from dscluster.deploy.hosts import spec_write_argv  # noqa: PLC0415

    return master.run(spec_write_argv(spec), input=format_spec(replace(spec, state_dir=None, path=None)), timeout=60)


def hubpass_argv(verb: str, name: str) -> list[str]:
    """The hub's password file in the master's container (node/hubpass.py main; `set` reads stdin)."""
    return ["python", "-m", "dscluster.node.hubpass", verb, name]


def wait_for_accounts(spec: ClusterSpec, engine: str, runner_for: Callable[[NodeSpec], Runner], name: str,
                      uid: int | None, *, timeout: float = ACCOUNT_WAIT_S,
                      sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Wait until every node container has the account `name` with `uid` (None: has no such account any more);
    returns the nodes that still do not, with what they said."""
    want = str(uid) if uid is not None else ""
    pending = list(spec.nodes)
    said: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while pending:
        for node in list(pending):
            res = in_container(spec, engine, runner_for(node), ["sh", "-c", 'id -u "$1" 2>/dev/null || true', "sh",
                                                                name], timeout=60)
            if res.ok and res.stdout.strip() == want:
                pending.remove(node)
            else:
                said[node.name] = (res.stdout.strip() or res.stderr.strip())[-200:]
        if not pending or time.monotonic() > deadline:
            break
        sleep(1.0)
    return [f"{node.name} ({said.get(node.name) or '-'})" for node in pending]
