"""Reaching the bare hosts with the operator's OWN ssh access, and asking them what `up` needs.

`up`/`down` talk to the hosts' own sshd (port 22, the operator's keys and ~/.ssh/config), never to
the node containers: those do not exist yet. `HostSSHRunner` is the Runner for that. BatchMode (no
password prompt can hang us), a connect timeout, and the operator's own known_hosts: host-key
checking stays whatever the operator's ssh config says; dscluster never turns it off.

`preflight_argv` is one small POSIX sh script per host, run once, printing `key=value` lines that
`parse_facts` turns into HostFacts; `host_problems` (pure) decides what blocks `up`, with the fix.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from dscluster.cluster.identity import cluster_pubkey_path, published_spec_path
from dscluster.cluster.runner import DEFAULT_TIMEOUT_S, CommandResult, run_subprocess
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.deploy.dockerrun import DeployOptions, container_name, role_of
from dscluster.i18n import tr

CONNECT_TIMEOUT_S = 10


@dataclass
class HostSSHRunner:
    """Runs argv on a host through the system ssh client with the operator's own configuration."""

    node: str  # the host address, as the spec names it
    user: str | None = None
    connect_timeout: int = CONNECT_TIMEOUT_S
    # An ssh_config file for the hosts instead of ~/.ssh/config (`ssh -F`): e.g. the simulated bare
    # hosts' own, or a team's shared one. Host-key checking stays whatever that file says.
    config: str | None = None

    def ssh_argv(self, argv: Sequence[str]) -> list[str]:
        base = ["ssh", *(["-F", self.config] if self.config else []), "-o", "BatchMode=yes",
                "-o", f"ConnectTimeout={self.connect_timeout}"]
        if self.user:
            base += ["-l", self.user]
        # ssh joins remote words with spaces for the remote shell: quote each one ourselves.
        return base + [self.node, "--", shlex.join(list(argv))]

    def run(self, argv, *, env=None, input=None, timeout=DEFAULT_TIMEOUT_S, cwd=None) -> CommandResult:
        if env or cwd:
            prefix = ["env", *[f"{k}={v}" for k, v in (env or {}).items()]]
            argv = (["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd] if cwd else []) + prefix + list(argv)
        result = run_subprocess(self.node, self.ssh_argv(argv), input=input, timeout=timeout)
        return CommandResult(self.node, tuple(argv), result.returncode, result.stdout, result.stderr,
                             result.timed_out)

    def copy(self, local_path, remote_path, *, timeout=DEFAULT_TIMEOUT_S) -> CommandResult:
        with open(local_path, encoding="utf-8") as f:
            return self.run(["sh", "-c", 'cat > "$1"', "sh", remote_path], input=f.read(), timeout=timeout)


@dataclass(frozen=True)
class HostFacts:
    node: str
    reachable: bool
    ssh_error: str = ""
    docker: str = ""  # server version when the daemon answers
    docker_error: str = ""
    gpus: int = -1  # -1: nvidia-smi missing
    gpu_toolkit: bool = False
    shared_dir: bool = False
    cluster_pub: bool = False
    infiniband: bool = False
    busy_ports: tuple[int, ...] = ()
    container: str = ""  # state of an existing container with our name, "" if none
    image_user: str | None = None  # None: image not on the host
    image_uid: str = ""  # the image's node UID (label io.dscluster.node-uid), "" for other images
    image_python: str = ""  # the image's interpreter (label io.dscluster.python), "" for other images
    shared_stat: str = ""  # "uid gid octal-mode" of the shared directory
    records: str = ""  # "no": /etc/dscluster (root's records of the people) is missing or not root's
    engine: str = "docker"


_SCRIPT = r"""
engine=$1; shared=$2; name=$3; image=$4; shift 4
if command -v "$engine" >/dev/null 2>&1; then
  if [ "$engine" = podman ]; then fmt='{{.Version.Version}}'; else fmt='{{.ServerVersion}}'; fi
  if out=$("$engine" info --format "$fmt" 2>&1); then echo "docker=$out"
  else echo "docker_error=$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"; fi
  "$engine" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia && echo gpu_toolkit=yes
  command -v nvidia-ctk >/dev/null 2>&1 && echo gpu_toolkit=yes
  echo "container=$("$engine" ps -a --format '{{.Names}} {{.State}}' 2>/dev/null | awk -v n="$name" '$1 == n || $1 == "/" n {print $2; exit}')"
  if u=$("$engine" image inspect --format '{{.Config.User}}' "$image" 2>/dev/null); then
    echo "image_user=$u"
    echo "image_uid=$("$engine" image inspect --format '{{index .Config.Labels "io.dscluster.node-uid"}}' "$image" 2>/dev/null)"
    echo "image_python=$("$engine" image inspect --format '{{index .Config.Labels "io.dscluster.python"}}' "$image" 2>/dev/null)"
  fi
else
  echo "docker_error=$engine: command not found"
fi
if command -v nvidia-smi >/dev/null 2>&1; then echo "gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"; fi
[ -d "$shared" ] && echo shared_dir=yes && echo "shared_stat=$(stat -L -c '%u %g %a' "$shared" 2>/dev/null)"
[ -f "$shared/.dscluster/cluster.pub" ] && echo cluster_pub=yes
[ -d /dev/infiniband ] && echo infiniband=yes
# root's records of the people (dockerrun.RECORDS_DIR, mounted read-only into the container): made if missing
for d in /etc/dscluster /etc/dscluster/keys /etc/dscluster/people; do
  [ -d "$d" ] || mkdir -m 755 "$d" 2>/dev/null || sudo -n mkdir -m 755 "$d" 2>/dev/null || true
done
if [ -d /etc/dscluster/people ] && [ "$(stat -c %u /etc/dscluster)" = 0 ]; then echo records=yes; else echo records=no; fi
for port in "$@"; do
  if command -v ss >/dev/null 2>&1 && [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then echo "busy_port=$port"; fi
done
echo preflight=done
"""


def ports_needed(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions, lab_port: int = 8888) -> list[int]:
    ports = [node.ssh_port]
    if opts.lab and role_of(spec, node) == "master":
        ports.append(lab_port)
    if opts.hub and spec.users and role_of(spec, node) == "master":
        ports.append(8000)  # JupyterHub's (node/hub.py DEFAULT_PORT), which the master starts once there are people
    return ports


def preflight_argv(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions) -> list[str]:
    return ["sh", "-c", _SCRIPT, "dscluster-preflight", opts.engine, str(spec.shared_dir), container_name(spec),
            opts.image,
            *[str(p) for p in ports_needed(spec, node, opts)]]


def parse_facts(result: CommandResult, engine: str = "docker") -> HostFacts:
    """Turn the script's output (or the ssh failure) into HostFacts."""
    lines = [ln.partition("=") for ln in result.stdout.splitlines() if "=" in ln]
    if "preflight" not in {k for k, _, _ in lines}:
        error = (result.stderr.strip().splitlines() or [tr("no answer")])[-1]
        if result.timed_out:
            error = tr("timed out")
        return HostFacts(result.node, reachable=False, ssh_error=error, engine=engine)
    facts: dict = {"busy_ports": [], "engine": engine}
    for key, _, value in lines:
        if key == "busy_port":
            facts["busy_ports"].append(int(value))
        elif key in ("gpu_toolkit", "shared_dir", "cluster_pub", "infiniband"):
            facts[key] = value == "yes"
        elif key == "gpus":
            facts[key] = int(value or 0)
        elif key in ("docker", "docker_error", "container", "image_user", "image_uid", "image_python",
                     "shared_stat", "records"):
            facts[key] = value.strip()
    facts["busy_ports"] = tuple(facts["busy_ports"])
    return HostFacts(result.node, reachable=True, **facts)


@dataclass(frozen=True)
class Problem:
    node: str
    what: str
    fix: str


def host_problems(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions, facts: HostFacts) -> list[Problem]:
    """Everything on this host that would make `up` fail, each with its fix. Pure."""
    host = node.address
    p: list[Problem] = []
    add = lambda what, fix: p.append(Problem(node.name, what, fix))  # noqa: E731
    if not facts.reachable:
        add(tr("cannot reach {host} over ssh: {err}", host=host, err=facts.ssh_error),
            tr("make `ssh {host} true` work without a password prompt (your key, your ~/.ssh/config)", host=host))
        return p
    if not facts.docker:
        p += _engine_problems(node, opts.engine, facts.docker_error or "")
        return p
    _gpu_problems(node, opts, facts, add)
    _shared_problems(spec, node, facts, add)
    for port in facts.busy_ports:
        add(tr("port {port} is already in use on {host}", port=port, host=host),
            tr("free it (ssh {host} ss -ltnp 'sport = :{port}'), or choose another ssh_port in the spec",
               host=host, port=port))
    if facts.container:
        add(tr("a container named {name} already exists on {host} ({state})", name=container_name(spec), host=host,
               state=facts.container),
            tr("remove it first: dscluster down --cluster {spec}", spec=spec.path or spec.name))
    _image_problems(spec, node, opts, facts, add)
    if facts.records == "no":
        add(tr("/etc/dscluster on {host} is missing or not root's (the people's keys and UIDs, which the node "
               "container reads)", host=host),
            tr("as root on {host}: mkdir -p /etc/dscluster/keys /etc/dscluster/people && chown -R root: "
               "/etc/dscluster && chmod -R go-w /etc/dscluster", host=host))
    return p


def _gpu_problems(node: NodeSpec, opts: DeployOptions, facts: HostFacts, add) -> None:
    """GPUs asked for: the host has them (as many as its slots with --gpus all) and its engine passes them."""
    host = node.address
    if opts.gpus != "none":
        if facts.gpus <= 0:
            add(tr("no GPUs found on {host} (nvidia-smi {state})", host=host,
                   state=tr("is missing") if facts.gpus < 0 else tr("lists none")),
                tr("install the NVIDIA driver on {host}, or use --gpus none for CPU-only nodes", host=host))
        elif facts.gpus < node.slots and opts.gpus == "all":
            add(tr("{host} has {n} GPUs but the spec gives it slots = {slots}", host=host, n=facts.gpus,
                   slots=node.slots),
                tr("set slots = {n} for {name} in the cluster spec", n=facts.gpus, name=node.name))
        if not facts.gpu_toolkit and opts.engine == "podman":
            add(tr("podman on {host} cannot pass GPUs (no NVIDIA Container Toolkit)", host=host),
                tr("install nvidia-container-toolkit on {host}, then: sudo nvidia-ctk cdi generate "
                   "--output=/etc/cdi/nvidia.yaml", host=host))
        elif not facts.gpu_toolkit:
            add(tr("Docker on {host} cannot pass GPUs (no NVIDIA Container Toolkit)", host=host),
                tr("install nvidia-container-toolkit on {host}, then: sudo nvidia-ctk runtime configure "
                   "--runtime=docker && sudo systemctl restart docker", host=host))


def _shared_problems(spec: ClusterSpec, node: NodeSpec, facts: HostFacts, add) -> None:
    """The shared directory is mounted on the host and writable by the image's user."""
    host = node.address
    if not facts.shared_dir:
        add(tr("the shared directory {path} does not exist on {host}", path=spec.shared_dir, host=host),
            tr("mount the cluster's shared storage (NFS) at {path} on {host}, the same path on every host",
               path=spec.shared_dir, host=host))
    elif facts.image_uid and not shared_writable(facts.shared_stat, facts.image_uid):
        add(tr("the shared directory {path} on {host} is not writable by the image's user (UID {uid}; "
               "it is owner:group:mode {stat})", path=spec.shared_dir, host=host, uid=facts.image_uid,
               stat=facts.shared_stat.replace(" ", ":") or "?"),
            tr("on the storage: sudo chown {uid}:{uid} {path} (or build the image with --build-arg "
               "NODE_UID=<the owner's UID>)", uid=facts.image_uid, path=spec.shared_dir))


def _image_problems(spec: ClusterSpec, node: NodeSpec, opts: DeployOptions, facts: HostFacts, add) -> None:
    """The image is on the host, runs as the spec's ssh_user (not root), with the spec's python."""
    host = node.address
    if facts.image_user is None:
        add(tr("the image {image} is not on {host}", image=opts.image, host=host),
            tr("ssh {host} {engine} pull {image}   (or: {engine} save {image} | ssh {host} {engine} load)",
               host=host, image=opts.image, engine=opts.engine))
    elif facts.image_user in ("", "root", "0"):
        add(tr("the image {image} runs as root by default", image=opts.image),
            tr("use the dscluster node image (docker/Dockerfile), whose user is {user}", user=spec.ssh_user))
    elif facts.image_user != spec.ssh_user:
        add(tr("the image's user is {image_user} but the spec's ssh_user is {user}", image_user=facts.image_user,
               user=spec.ssh_user),
            tr('set ssh_user = "{image_user}" in the spec, or rebuild with --build-arg NODE_USER={user}',
               image_user=facts.image_user, user=spec.ssh_user))
    if spec.python and facts.image_python and facts.image_python != spec.python:
        add(tr("the spec's python is {python} but the image's interpreter is {image_python}", python=spec.python,
               image_python=facts.image_python),
            tr('set python = "{image_python}" in the spec (or remove the line: `up` records it)',
               image_python=facts.image_python))


def _engine_problems(node: NodeSpec, engine: str, err: str) -> list[Problem]:
    host = node.address
    if engine == "podman":
        if "not found" in err:
            return [Problem(node.name, tr("podman is not installed on {host}", host=host),
                            tr("install podman (and runc or crun) on {host}: sudo apt-get install podman runc, "
                               "or sudo dnf install podman", host=host))]
        return [Problem(node.name, tr("podman on {host} does not work: {err}", host=host, err=err),
                        tr("run `podman info` on {host} and fix what it says (runtime, storage, "
                           "/etc/containers/containers.conf)", host=host))]
    if "permission denied" in err.lower():
        return [Problem(node.name, tr("Docker on {host} refuses your user: {err}", host=host, err=err),
                        tr("add your login to the docker group on {host}: sudo usermod -aG docker $USER", host=host))]
    if "not found" in err:
        return [Problem(node.name, tr("Docker is not installed on {host}", host=host),
                        tr("install Docker Engine and the NVIDIA Container Toolkit on {host}", host=host))]
    return [Problem(node.name, tr("the Docker engine on {host} is not running: {err}", host=host, err=err),
                    tr("start it: ssh {host} sudo systemctl start docker", host=host))]


def shared_writable(shared_stat: str, uid: str) -> bool:
    """Whether a directory with `stat -c '%u %g %a'` = shared_stat is writable by UID `uid` (whose
    group, in the node image, has the same number). Root in the container is not the question: the
    ranks and JupyterLab run as the node user."""
    try:
        owner, group, mode = shared_stat.split()
        bits = int(mode, 8)
    except ValueError:
        return True  # nothing known: let the later write checks speak
    if owner == uid:
        return bool(bits & 0o200)
    if group == uid:
        return bool(bits & 0o020)
    return bool(bits & 0o002)


def shared_write_argv(dest: str) -> list[str]:
    """Write stdin to a file under <shared>/.dscluster, atomically, world-readable (nothing secret)."""
    script = 'd=$(dirname "$1"); mkdir -p "$d/hostkeys" && cat > "$1.tmp.$$" && chmod 0644 "$1.tmp.$$" && mv "$1.tmp.$$" "$1"'
    return ["sh", "-c", script, "dscluster-publish", dest]


def pubkey_write_argv(spec: ClusterSpec) -> list[str]:
    return shared_write_argv(str(cluster_pubkey_path(spec.shared_dir)))


def spec_write_argv(spec: ClusterSpec) -> list[str]:
    return shared_write_argv(str(published_spec_path(spec.shared_dir)))


def pubkey_read_argv(spec: ClusterSpec) -> list[str]:
    return ["cat", str(cluster_pubkey_path(spec.shared_dir))]


def port_listening_argv(port: int) -> list[str]:
    return ["sh", "-c", 'ss -Hltn "sport = :$1" | grep -q .', "dscluster-port", str(port)]
