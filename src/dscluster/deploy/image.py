"""The node image's build, as data: which files go in, the hash that names them, and the engine's argv.

`docker/Dockerfile` builds two flavors with the same steps: `cuda` (the NVIDIA CUDA base pinned by
digest, CUDA torch, DeepSpeed's ops prebuilt) and `cpu` (a Debian bookworm base, the CPU torch wheel,
no op prebuild). `dscluster image build` stages a build context holding exactly the Dockerfile's
allow-list (docker/Dockerfile.dockerignore) plus, for `cpu`, the torch wheel in `docker/wheels/`,
so neither a venv nor a cluster key in the checkout can reach the image and the wheel directory pip
names (`find-links`) is visible to the build.

Why each piece:
- `inputs_hash`: the image is labelled with the hash of everything that goes in (Dockerfile, the
  staged files, the wheel's name and size, flavor, base, build args); a build whose label already
  matches is skipped, so CI rebuilds only when one of those changed.
- a CA bundle goes in as the build secret `ca_bundle` (`--secret`), never a layer: builds behind a
  TLS-intercepting proxy need it for pip, and the final image must not carry it.
- `DOCKER_BUILDKIT=1`: the Dockerfile's `RUN --mount` (the wheel bind mount, the secret) needs it;
  podman builds `--format docker`, since the OCI format drops SHELL (pipefail) and HEALTHCHECK.
- no base can be pulled where no registry is reachable: `bootstrap_argvs` makes a Debian bookworm
  base from Debian's own packages (`mmdebstrap --variant=minbase`, then `<engine> import`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dscluster import __version__
from dscluster.deploy.dockerrun import check_engine
from dscluster.errors import ConfigError
from dscluster.i18n import tr

FLAVORS = ("cuda", "cpu")
DOCKERFILE = "docker/Dockerfile"
# What the Dockerfile COPYs or mounts; mirrors the allow-list in docker/Dockerfile.dockerignore.
CONTEXT_FILES = ("pyproject.toml", "README.md", "src", "jupyter-config", "docker/healthcheck.sh",
                 "docker/check_image.sh", "docker/requirements-team.txt", "docker/wheels/README.md", DOCKERFILE)
TEAM_REQUIREMENTS = "docker/requirements-team.txt"
WHEELS_DIR = "docker/wheels"
BOOTSTRAP_BASE = "dscluster-base:bookworm"
TORCH_VERSION = "2.13.0"
# The CPU builds of torch's companions at the versions built with torch 2.13.0.
COMPANIONS = ("torchvision-0.28.0+cpu-cp311-*.whl", "torchaudio-2.13.0+cpu-cp311-*.whl")
LABEL_INPUTS = "io.dscluster.inputs"
_SKIP = {"__pycache__", ".pytest_cache"}
_SKIP_SUFFIXES = (".pyc", ".egg-info")


@dataclass(frozen=True)
class ImageBuild:
    """One build of the node image. `validate()` names the setting that is wrong."""

    flavor: str = "cuda"
    engine: str = "docker"
    tag: str = ""  # "" = default_tag(flavor)
    base: str = ""  # "" = BOOTSTRAP_BASE, the Debian base made with mmdebstrap (either flavor)
    torch_wheel: Path | None = None  # cpu: the CPU torch wheel staged into docker/wheels/
    ca_bundle: Path | None = None  # extra CA bundle, a build secret
    requirements: Path | None = None  # a team's requirements file, staged as docker/requirements-team.txt
    build_args: tuple[tuple[str, str], ...] = field(default=())

    @property
    def image(self) -> str:
        return self.tag or default_tag(self.flavor)

    @property
    def base_image(self) -> str:
        return self.base or BOOTSTRAP_BASE

    def validate(self) -> ImageBuild:
        check_engine(self.engine)
        if self.flavor not in FLAVORS:
            raise ConfigError(tr("image flavor {flavor!r} is not cuda or cpu", flavor=self.flavor),
                              tr("use --flavor cuda (GPU hosts) or --flavor cpu"), setting="flavor")
        if self.flavor == "cpu" and self.torch_wheel is None:
            raise ConfigError(tr("no CPU torch {version} wheel found for the cpu flavor", version=TORCH_VERSION),
                              tr("pass --wheels DIR (a directory holding torch-{version}+cpu-*.whl), or name it in "
                                 "pip's config (find-links)", version=TORCH_VERSION), setting="wheels")
        for path, setting in ((self.torch_wheel, "wheels"), (self.ca_bundle, "ca_bundle"),
                              (self.requirements, "requirements")):
            if path is not None and not Path(path).is_file():
                raise ConfigError(tr("{path} is not a readable file", path=path),
                                  tr("check the path given to --{setting}", setting=setting.replace("_", "-")),
                                  setting=setting)
        for key, _ in self.build_args:
            if key in ("FLAVOR", "BASE"):
                raise ConfigError(tr("--build-arg {key} is set by --flavor/--base", key=key),
                                  tr("use --flavor or --base instead"), setting="build_arg")
        return self


# The Dockerfile's build argument for the launcher backends' packages (its default serves a build by hand).
LAUNCHER_PACKAGES = "LAUNCHER_PACKAGES"


def launcher_packages() -> str:
    """What every registered launcher backend needs on a node (Backend.node_packages), for LAUNCHER_PACKAGES: a
    backend added in its own module reaches the image `dscluster image build` makes."""
    from dscluster.launcher import backends  # noqa: PLC0415

    return " ".join(backends.node_packages())


def default_tag(flavor: str) -> str:
    return f"dscluster-node:{__version__}" + ("" if flavor == "cuda" else f"-{flavor}")


def find_torch_wheel(dirs: Iterable[str | os.PathLike]) -> Path | None:
    """The CPU torch wheel for this Python ABI (cp311: Debian bookworm's python3) in the first directory
    that has one."""
    for d in dirs:
        folder = Path(d)
        if folder.is_dir():
            found = sorted(folder.glob(f"torch-{TORCH_VERSION}+cpu-cp311-cp311-*linux*x86_64.whl"))
            if found:
                return found[-1]
    return None


def pip_find_links(config_text: str) -> list[str]:
    """The find-links directories in `pip config list` output (`global.find-links='/opt/wheels'`)."""
    out = []
    for line in config_text.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            for item in value.strip().strip("'\"").split():
                out.append(item.removeprefix("file://"))
    return out


def _files(root: Path, rel: str) -> list[Path]:
    path = root / rel
    if path.is_file():
        return [path]
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.endswith(_SKIP_SUFFIXES))
        out += [Path(dirpath) / f for f in sorted(filenames) if not f.endswith(_SKIP_SUFFIXES)]
    return out


def context_files(root: Path) -> list[tuple[Path, str]]:
    """(source, path in the context) for every file the build context holds, in a stable order."""
    return [(f, str(f.relative_to(root))) for rel in CONTEXT_FILES for f in _files(root, rel)]


def inputs_hash(build: ImageBuild, root: Path) -> str:
    """sha256 over everything that decides the image's content (contents, not timestamps)."""
    h = hashlib.sha256()
    for src, rel in context_files(root):
        if rel == TEAM_REQUIREMENTS and build.requirements is not None:
            src = Path(build.requirements)
        h.update(rel.encode() + b"\0" + src.read_bytes() + b"\0")
    for wheel in cpu_wheels(build):
        h.update(f"wheel:{wheel.name}:{wheel.stat().st_size}\0".encode())
    h.update(f"flavor:{build.flavor}\0base:{build.base_image}\0args:{sorted(build.build_args)}".encode())
    h.update(f"launchers:{launcher_packages()}".encode())
    return h.hexdigest()[:16]


def stage_context(build: ImageBuild, root: Path, dest: Path) -> Path:
    """Copy the allow-listed files (and the torch wheel, hard-linked when it can be) into `dest`."""
    for src, rel in context_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build.requirements if rel == TEAM_REQUIREMENTS and build.requirements else src, target)
    wheels = dest / WHEELS_DIR
    wheels.mkdir(parents=True, exist_ok=True)
    for wheel in cpu_wheels(build):
        try:
            os.link(wheel, wheels / wheel.name)
        except OSError:  # another filesystem
            shutil.copyfile(wheel, wheels / wheel.name)
    return dest


def cpu_wheels(build: ImageBuild) -> list[Path]:
    """The torch wheel and, when they lie next to it, its CPU torchvision/torchaudio."""
    if build.torch_wheel is None:
        return []
    wheel = Path(build.torch_wheel)
    return [wheel] + sorted(p for pattern in COMPANIONS for p in wheel.parent.glob(pattern))


def build_argv(build: ImageBuild, context: Path, inputs: str) -> list[str]:
    """`<engine> build` for the staged context. Pure."""
    argv = [build.engine, "build", "--file", str(context / DOCKERFILE), "--tag", build.image,
            "--build-arg", f"FLAVOR={build.flavor}", "--label", f"{LABEL_INPUTS}={inputs}"]
    if build.engine == "podman":
        argv += ["--format", "docker"]  # the OCI format drops SHELL (pipefail) and HEALTHCHECK
    if build.base_image:
        argv += ["--build-arg", f"BASE={build.base_image}"]
    if not any(key == LAUNCHER_PACKAGES for key, _ in build.build_args):
        argv += ["--build-arg", f"{LAUNCHER_PACKAGES}={launcher_packages()}"]
    for key, value in build.build_args:
        argv += ["--build-arg", f"{key}={value}"]
    if build.ca_bundle is not None:
        argv += ["--secret", f"id=ca_bundle,src={build.ca_bundle}"]
    return argv + [str(context)]


# What a failed build's log says -> why, and the fix (root causes first). Known from builds on real machines.
BUILD_FAILURES: tuple[tuple[str, str, str], ...] = (
    ("buildx component is missing",
     "this docker client (23 or newer) builds with BuildKit only through its buildx plugin, which is missing",
     "install the buildx plugin (docker-buildx / docker-buildx-plugin), or build with docker.io's own client, "
     "which has BuildKit built in: PATH=/usr/bin:$PATH dscluster image build ..."),
    ("CERTIFICATE_VERIFY_FAILED",
     "pip in the build does not trust this network's TLS proxy",
     "pass the proxy's CA bundle: --ca-bundle FILE (a build secret; it is in no layer of the image)"),
    ("the --mount option requires BuildKit",
     "the Dockerfile's RUN --mount needs BuildKit, and this docker build ran without it",
     "use Docker 20.10 or newer with DOCKER_BUILDKIT=1 (dscluster image build sets it), or --engine podman"),
)


def explain_build_failure(log_text: str) -> tuple[str, str] | None:
    """(cause, fix) for the first known signature in a failed build's log, or None. Pure."""
    for needle, cause, fix in BUILD_FAILURES:
        if needle in log_text:
            return cause, fix
    return None


def build_env(build: ImageBuild) -> dict[str, str]:
    return {"DOCKER_BUILDKIT": "1"} if build.engine == "docker" else {}


def inspect_argv(engine: str, image: str, fmt: str) -> list[str]:
    return [engine, "image", "inspect", "--format", fmt, image]


def label_format(label: str) -> str:
    return '{{index .Config.Labels "%s"}}' % label


def bootstrap_argvs(engine: str, tarball: Path, tag: str = BOOTSTRAP_BASE) -> list[list[str]]:
    """Make a Debian bookworm base from Debian's packages, for builds that cannot pull one."""
    return [["mmdebstrap", "--quiet", "--variant=minbase", "bookworm", str(tarball)],
            [engine, "import", str(tarball), tag]]
