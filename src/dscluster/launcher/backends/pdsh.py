"""`pdsh` (DeepSpeed's default): the runner starts launch.py on every node through pdsh over ssh."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend, NodeTools, ToolCheck, option_unknown
from dscluster.sigtypes import sig


class PdshBackend(Backend):
    name = "pdsh"
    node_tools = ("pdsh",)
    host_packages = ("pdsh",)
    node_packages = ("pdsh",)
    reports_rank_exits = True  # every node's launch.py output comes back through pdsh
    failure_lines = (r"ssh exited with exit code [1-9]\d*",)  # pdsh's word for a node's launch.py that failed
    warm_launch = True  # its command line is `sys.executable -u -m deepspeed.launcher.launch ...` on each node
    signatures = (
        # pdsh's rsh and mrsh modules (its default when built with them) instead of ssh: their own error lines
        # ("pdsh@n1: n2: rcmd: socket: Permission denied", "mcmd: connect failed", rsh's circuit setup).
        sig("pdsh-rcmd", r"\b(?:mcmd|rcmd): (?:xpoll: protocol failure in circuit setup|socket: Permission denied|"
            r"connect failed)",
            "pdsh ran its remote commands with rsh or mrsh (its default module when built with them) instead of ssh: "
            "rsh needs privileged ports, mrsh a daemon the nodes do not run.",
            "Make pdsh use ssh: export PDSH_RCMD_TYPE=ssh (DeepSpeed's pdsh launcher sets it; your own pdsh calls need "
            "it or -R ssh), and check with pdsh -R ssh -w NODE hostname.", retry=False),
        # pdsh's getopt for an option it does not know ("pdsh: invalid option -- 'x'").
        option_unknown(r"pdsh"),
    )

    def check_tools(self, node: NodeTools) -> ToolCheck:
        if not node.is_master:
            return ToolCheck(True, tr("pdsh runs on the master only; this node needs sshd"))
        if not node.tools.get("pdsh"):
            return ToolCheck(False, tr("pdsh is not installed on the master (DeepSpeed: launcher 'pdsh' not installed)"),
                             tr("apt-get install pdsh, or set launcher = \"openmpi\" in dscluster.toml"))
        modules = node.tools.get("pdsh_modules") or ""
        if "ssh" not in modules.split("rcmd modules:")[-1]:
            return ToolCheck(False, tr("pdsh has no ssh module ({modules})", modules=modules.replace("\n", " ")),
                             tr("install Debian/Ubuntu's pdsh package (it includes the ssh module)"))
        return ToolCheck(True, tr("pdsh {path}", path=node.tools["pdsh"]))

    def transport_env(self, spec, no_mux: tuple[str, ...]) -> dict[str, str]:
        from dscluster.cluster.pdsh import pdsh_env  # noqa: PLC0415

        env = dict(pdsh_env(spec))
        env["PDSH_SSH_ARGS_APPEND"] = " ".join(no_mux)
        return env

    def secrets_in_runner_env(self, req) -> bool:
        # pdsh would put the runner's exported values on ssh's command line: they travel in a 0600 script.
        return not req.hosts

    def runner_args(self, req, *, logs: Path, secret_env: Mapping[str, str], add_file: Callable) -> list[str]:
        from dscluster.launcher.plan import PlannedFile  # noqa: PLC0415

        argv = []
        if req.ssh_port and not req.transport_env:
            argv.append(f"--ssh_port={req.ssh_port}")
        argv += self.selection_args(req)
        argv.append(f"--enable_each_rank_log={logs}")
        if secret_env:
            script = Path(req.run_dir) / "node_env.sh"
            add_file(PlannedFile(script, "".join(f"export {k}={shlex.quote(v)}\n" for k, v in secret_env.items()),
                                 0o600, secret=True))
            argv.append(f"--venv_script={script}")
        if req.launcher_args:
            argv.append("--launcher_args=" + shlex.join(req.launcher_args))
        return argv
