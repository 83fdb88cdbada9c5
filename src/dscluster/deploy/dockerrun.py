"""Pure builders of the container-engine commands that run the node image on each host.

One builder for both engines: `docker` (the default) and `podman` (daemonless, common on RHEL-family
GPU clusters) take the same run flags; they differ only in how GPUs are passed (`--gpus` for Docker's
NVIDIA runtime, a CDI device `nvidia.com/gpu=...` for podman) and are told apart by `opts.engine`.

Every flag is here for a reason a user once lost a day to (shared/research/security.md §5,
deepspeed_internals.md): GPUs passed with `--gpus`, never CUDA_VISIBLE_DEVICES=all; the host network
(NCCL and the launcher need the hosts' real addresses and ports); a big /dev/shm (NCCL and data
loaders segfault in the default 64 MB) or, opted in, the host IPC namespace; the shared directory at
the SAME path (checkpoints and run records are addressed by path on every node); InfiniBand devices
when the host has them; unlimited locked memory (RDMA registration) and a 64 MB stack; a restart
policy; the node's identity (host key) in a named volume, so `down` + `up` keeps the pinned key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.errors import ConfigError
from dscluster.i18n import tr

DEFAULT_IMAGE = "dscluster-node:0.1.0"
AGENT_STATE_DIR = "/var/lib/dscluster/node"  # the agent's default --state-dir (host key, sshd config)
IDENTITY_MOUNT = "/run/secrets/dscluster"  # read-only in the master container; holds id_ed25519
# The host's root-owned records of the cluster's people (their sshd keys, their UID), written by `dscluster user
# add` as root on every host and mounted read-only: the agent makes their accounts from them (node/people.py),
# the node's sshd reads their keys from them. Nothing in the container, the node user least, can change them.
RECORDS_DIR = "/etc/dscluster"
HUB_HOME = f"{AGENT_STATE_DIR}/hub"  # the master's hub (its passwords, database) in the state volume, kept by down/up
LABEL_CLUSTER = "io.dscluster.cluster"
LABEL_ROLE = "io.dscluster.role"
_SHM = re.compile(r"^\d+[bkmg]?$", re.I)
_GPU_LIST = re.compile(r"^(\d+|GPU-[0-9a-fA-F-]+)(,(\d+|GPU-[0-9a-fA-F-]+))*$")
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$")
ENGINES = ("docker", "podman")
_ULIMIT = re.compile(r"^[a-z]+=-?\d+(:-?\d+)?$")


def choose_engine(flag: str | None, env: str | None, spec_engine: str | None) -> str:
    """The engine `up`/`down`/`image build` drive: the command line's, else DSCLUSTER_ENGINE's, else the
    cluster spec's `engine`, else docker. Checked, so a typo in the environment is named too."""
    engine = flag or env or spec_engine or "docker"
    check_engine(engine)
    return engine


@dataclass(frozen=True)
class DeployOptions:
    """How to run the node image; validated once, before any host is touched."""

    image: str = DEFAULT_IMAGE
    engine: str = "docker"  # docker | podman: the same flags, one builder
    gpus: str = "all"  # "all", "none" (CPU-only nodes), or a device list "0,1" / GPU UUIDs
    shm_size: str = "16g"
    ipc_host: bool = False  # opt-in: shares the host's IPC namespace (and its shared memory)
    infiniband: str = "auto"  # auto: pass /dev/infiniband on hosts that have it; yes; no
    lab: bool = True  # JupyterLab on the master (127.0.0.1 only; reach it with ssh -L)
    hub: bool = False  # JupyterHub on the master (127.0.0.1:8000): a JupyterLab per person (`dscluster user`)
    lang: str | None = None  # DSCLUSTER_LANG for the node's messages and the lab UI (zh_TW)
    restart: str = "unless-stopped"
    # Unlimited locked memory (RDMA registration) and a 64 MB stack; () = the engine's defaults (for
    # hosts that refuse raising limits; RDMA then fails to register memory).
    ulimits: tuple[str, ...] = ("memlock=-1", "stack=67108864")
    # The agent runs as root only to run sshd, which switches to the non-root node user per login;
    # JupyterLab and every rank run as the node user. The image's own USER stays non-root.
    agent_user: str = "0"
    # The cluster's private key for the master's node user (launching from JupyterLab), delivered
    # through stdin into a root-only Docker volume mounted read-only: never an argv, env or image.
    master_identity: bool = True
    extra_env: tuple[tuple[str, str], ...] = field(default=())

    def validate(self) -> DeployOptions:
        check_engine(self.engine)
        if not _IMAGE.match(self.image):
            raise ConfigError(tr("image name {image!r} is not valid", image=self.image),
                              tr("use e.g. --image dscluster-node:0.1.0 (lower case)"), setting="image")
        if self.gpus not in ("all", "none") and not _GPU_LIST.match(self.gpus):
            raise ConfigError(tr("--gpus {value!r} is not all, none or a device list", value=self.gpus),
                              tr("use --gpus all, --gpus none, or --gpus 0,1,2,3"), setting="gpus")
        if not self.ipc_host and not _SHM.match(self.shm_size):
            raise ConfigError(tr("--shm-size {value!r} is not a size", value=self.shm_size),
                              tr("use e.g. --shm-size 16g (or --ipc-host)"), setting="shm_size")
        for limit in self.ulimits:
            if not _ULIMIT.match(limit):
                raise ConfigError(tr("--ulimit {value!r} is not NAME=SOFT[:HARD]", value=limit),
                                  tr("use e.g. --ulimit memlock=-1, or --ulimit none for the engine's defaults"),
                                  setting="ulimit")
        if self.infiniband not in ("auto", "yes", "no"):
            raise ConfigError(tr("--infiniband must be auto, yes or no"), tr("use --infiniband auto"),
                              setting="infiniband")
        for key, _ in self.extra_env:
            if re.search(r"pass|token|secret|key", key, re.I):
                raise ConfigError(tr("{key} looks like a secret; it would show in `docker inspect`", key=key),
                                  tr("put secrets in a 0600 file on the shared directory instead"), setting="env")
        return self


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ConfigError(tr("container engine {engine!r} is not docker or podman", engine=engine),
                          tr("use --engine docker or --engine podman"), setting="engine")
    return engine


def container_name(spec: ClusterSpec) -> str:
    return f"dscluster-{spec.name}"


def state_volume(spec: ClusterSpec) -> str:
    return f"dscluster-{spec.name}-node"


def identity_volume(spec: ClusterSpec) -> str:
    return f"dscluster-{spec.name}-identity"


def role_of(spec: ClusterSpec, node: NodeSpec) -> str:
    return "master" if node == spec.master else "worker"


def node_start_args(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions) -> list[str]:
    """The arguments after the image's ENTRYPOINT (`dscluster node start`)."""
    args = ["--shared", str(spec.shared_dir), "--user", spec.ssh_user, "--port", str(node.ssh_port),
            "--role", role_of(spec, node), "--name", node.name, "--state-dir", AGENT_STATE_DIR, "--people"]
    if opts.lab and role_of(spec, node) == "master":
        args.append("--lab")
    if opts.hub and role_of(spec, node) == "master":
        args.append("--hub")
    if opts.master_identity and role_of(spec, node) == "master":
        args += ["--identity", f"{IDENTITY_MOUNT}/id_ed25519"]
    return args


def gpu_flags(gpus: str, engine: str = "docker") -> list[str]:
    """`--gpus none` passes no GPU at all (CPU-only hosts); podman takes GPUs as CDI devices
    (`nvidia-ctk cdi generate`), one `--device` per GPU."""
    if gpus == "none":
        return []
    if engine == "podman":
        return [arg for dev in gpus.split(",") for arg in ("--device", f"nvidia.com/gpu={dev}")]
    if gpus == "all":
        return ["--gpus", "all"]
    # docker splits --gpus on commas unless the device list is quoted inside the value.
    return ["--gpus", f'"device={gpus}"']


def docker_run_argv(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions, *, has_infiniband: bool = False) -> list[str]:
    """`docker run` (or `podman run`) for one host. Pure: the same inputs always give the same argv."""
    shared = str(spec.shared_dir)
    argv = [opts.engine, "run", "--detach", "--name", container_name(spec),
            "--label", f"{LABEL_CLUSTER}={spec.name}", "--label", f"{LABEL_ROLE}={role_of(spec, node)}",
            "--network", "host", "--restart", opts.restart, "--user", opts.agent_user,
            "--security-opt", "no-new-privileges"]
    argv += gpu_flags(opts.gpus, opts.engine)
    argv += ["--ipc", "host"] if opts.ipc_host else ["--shm-size", opts.shm_size]
    for limit in opts.ulimits:
        argv += ["--ulimit", limit]
    if opts.infiniband == "yes" or (opts.infiniband == "auto" and has_infiniband):
        argv += ["--device", "/dev/infiniband"]
    argv += ["--volume", f"{shared}:{shared}", "--volume", f"{state_volume(spec)}:{AGENT_STATE_DIR}",
             "--volume", f"{RECORDS_DIR}:{RECORDS_DIR}:ro"]
    if opts.master_identity and role_of(spec, node) == "master":
        argv += ["--volume", f"{identity_volume(spec)}:{IDENTITY_MOUNT}:ro"]
    env = [("DSCLUSTER_SSH_PORT", str(node.ssh_port)), ("DSCLUSTER_SHARED", shared), ("DSCLUSTER_HUB_HOME", HUB_HOME)]
    if opts.lang:
        env.append(("DSCLUSTER_LANG", opts.lang))
    env += list(opts.extra_env)
    for key, value in env:
        argv += ["--env", f"{key}={value}"]
    argv.append(opts.image)
    return argv + node_start_args(spec, node, opts)


def identity_store_argv(spec: ClusterSpec, opts: DeployOptions) -> list[str]:
    """Write the private key from stdin into the identity volume (root-only, 0600), on the master host."""
    return [opts.engine, "run", "--rm", "--interactive", "--network", "none", "--user", "0", "--entrypoint", "sh",
            "--volume", f"{identity_volume(spec)}:{IDENTITY_MOUNT}", opts.image,
            "-c", f"umask 077 && cat > {IDENTITY_MOUNT}/id_ed25519.tmp && mv {IDENTITY_MOUNT}/id_ed25519.tmp "
                  f"{IDENTITY_MOUNT}/id_ed25519"]


def docker_stop_argv(spec: ClusterSpec, grace_s: int = 20, engine: str = "docker") -> list[str]:
    return [engine, "stop", "--time", str(grace_s), container_name(spec)]


def docker_rm_argv(spec: ClusterSpec, *, force: bool = False, engine: str = "docker") -> list[str]:
    return [engine, "rm", *(["--force"] if force else []), container_name(spec)]


def docker_volume_rm_argv(spec: ClusterSpec, volume: str | None = None, engine: str = "docker") -> list[str]:
    return [engine, "volume", "rm", volume or state_volume(spec)]


def docker_logs_argv(spec: ClusterSpec, tail: int = 15, engine: str = "docker") -> list[str]:
    return [engine, "logs", "--tail", str(tail), container_name(spec)]


def docker_exec_argv(spec: ClusterSpec, argv: list[str], engine: str = "docker", *, user: str | None = None,
                     interactive: bool = False) -> list[str]:
    """Run a command inside the node container (as the image's user unless `user` says otherwise)."""
    return [engine, "exec", *(["--interactive"] if interactive else []), *(["--user", user] if user else []),
            container_name(spec), *argv]
