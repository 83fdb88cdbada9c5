"""`dscluster image build`: the node image from docker/Dockerfile, either flavor, either engine.

The view: parse the options, find the CPU torch wheel and the CA bundle, stage the context, run the
engine's build (its full log kept in a file), print tag, size and time. What goes in and the argv are
built by dscluster.deploy.image.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dscluster import paths
from dscluster.cluster.runner import LocalRunner
from dscluster.console import OK
from dscluster.deploy import image as img
from dscluster.deploy.dockerrun import ENGINES
from dscluster.errors import ClusterError, ConfigError
from dscluster.i18n import tr
from dscluster.safepython import module_argv

BUILD_TIMEOUT_S = 3 * 3600.0  # the cuda flavor compiles DeepSpeed's ops for four GPU generations
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def register(subparsers: argparse._SubParsersAction) -> None:
    image = subparsers.add_parser("image", help=tr("build the node image (docker/Dockerfile)"))
    sub = image.add_subparsers(dest="image_verb", metavar="ACTION", required=True)
    build = sub.add_parser("build", help=tr("build the node image; prints its tag, size and build time"),
                           description=tr("Builds docker/Dockerfile from a staged, allow-listed context. "
                                          "Skipped when an image with the same inputs exists (see --force)."))
    build.add_argument("--flavor", choices=img.FLAVORS, default="cuda",
                       help=tr("cuda: GPU hosts (default); cpu: CPU torch, a Debian base"))
    build.add_argument("--engine", choices=ENGINES, default=os.environ.get("DSCLUSTER_ENGINE", "docker"),
                       help=tr("container engine (default: %(default)s; env DSCLUSTER_ENGINE)"))
    build.add_argument("--tag", default="", help=tr("image tag (default: dscluster-node:VERSION[-cpu])"))
    build.add_argument("--base", default="",
                       help=tr("base image (default: {base}, made with mmdebstrap when it is missing; "
                               "or e.g. nvidia/cuda:13.0.0-cudnn-runtime-ubuntu24.04)", base=img.BOOTSTRAP_BASE))
    build.add_argument("--wheels", metavar="DIR", action="append", default=[],
                       help=tr("where the CPU torch wheel is (default: pip's find-links)"))
    build.add_argument("--ca-bundle", metavar="FILE", default=None,
                       help=tr("extra CA bundle for HTTPS in the build, as a build secret (default: {path} "
                               "when it exists; 'none' for no bundle)", path=HOST_CA_BUNDLE))
    build.add_argument("--requirements", metavar="FILE", default=None,
                       help=tr("your team's requirements file, installed last (default: {path})",
                               path=img.TEAM_REQUIREMENTS))
    build.add_argument("--build-arg", action="append", default=[], metavar="K=V",
                       help=tr("extra build argument, e.g. NODE_UID=20001 or MAX_JOBS=4"))
    build.add_argument("--force", action="store_true", help=tr("build even when an image with the same inputs exists"))
    build.add_argument("--print", dest="print_only", action="store_true",
                       help=tr("print the build command and run nothing"))
    build.set_defaults(func=cmd_build)


def repo_root() -> Path:
    """The checkout that holds docker/Dockerfile (this package's own source tree)."""
    root = Path(__file__).resolve().parents[3]
    if not (root / img.DOCKERFILE).is_file():
        raise ConfigError(tr("docker/Dockerfile is not next to this dscluster ({root})", root=root),
                          tr("run dscluster image build from a clone of the dscluster repository "
                             "(pip install -e .)"), setting="dockerfile")
    return root


def _wheel_dirs(explicit: list[str]) -> list[str]:
    if explicit:
        return explicit
    listed = LocalRunner().run([*module_argv(sys.executable, "pip"), "config", "list"], timeout=60)
    return img.pip_find_links(listed.stdout) + [str(repo_root() / img.WHEELS_DIR)]


def _build_args(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(tr("--build-arg {value!r} is not K=V", value=pair), tr("e.g. --build-arg NODE_UID=20001"),
                              setting="build_arg")
        out.append((key, value))
    return tuple(out)


def request_from_args(args: argparse.Namespace) -> img.ImageBuild:
    ca = None if args.ca_bundle == "none" else Path(args.ca_bundle) if args.ca_bundle else (
        HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None)
    wheel = img.find_torch_wheel(_wheel_dirs(args.wheels)) if args.flavor == "cpu" else None
    return img.ImageBuild(flavor=args.flavor, engine=args.engine, tag=args.tag, base=args.base, torch_wheel=wheel,
                          ca_bundle=ca, requirements=Path(args.requirements) if args.requirements else None,
                          build_args=_build_args(args.build_arg)).validate()


def _inspect(build: img.ImageBuild, fmt: str, image: str | None = None) -> str | None:
    result = LocalRunner().run(img.inspect_argv(build.engine, image or build.image, fmt), timeout=60)
    return result.stdout.strip() if result.ok else None


def _size(build: img.ImageBuild) -> str:
    size = _inspect(build, "{{.Size}}")
    try:
        return f"{int(size or 0) / 1e9:.2f} GB"
    except ValueError:
        return size or "?"


def _ensure_base(build: img.ImageBuild, log) -> None:
    """The Debian base both flavors start from: made from Debian's packages when it is not there."""
    if build.base or _inspect(build, "{{.Id}}", img.BOOTSTRAP_BASE) is not None:
        return
    with tempfile.TemporaryDirectory(prefix="dscluster-base-") as tmp:
        print(tr("making the Debian bookworm base {base} with mmdebstrap ...", base=img.BOOTSTRAP_BASE), flush=True)
        for argv in img.bootstrap_argvs(build.engine, Path(tmp) / "rootfs.tar"):
            result = LocalRunner().run(argv, timeout=1800)
            log.write(f"$ {shlex.join(argv)}\n{result.stdout}{result.stderr}\n")
            if not result.ok:
                raise ClusterError(tr("making the base image failed: {err}", err=(result.stderr or result.stdout)
                                      .strip()[-400:]),
                                   tr("install mmdebstrap (apt-get install mmdebstrap), or pass --base IMAGE"))


def cmd_build(args: argparse.Namespace) -> int:
    build = request_from_args(args)
    root = repo_root()
    inputs = img.inputs_hash(build, root)
    if args.print_only:
        print(shlex.join(img.build_argv(build, Path("<staged context>"), inputs)))
        return 0
    if not args.force and _inspect(build, img.label_format(img.LABEL_INPUTS)) == inputs:
        print(f"{OK} " + tr("{tag} is up to date (inputs {inputs}); --force rebuilds it", tag=build.image,
                            inputs=inputs))
        print(f"   {tr('size')}: {_size(build)}")
        return 0
    log_path = paths.home() / "logs" / f"image-build-{build.flavor}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log, \
            tempfile.TemporaryDirectory(prefix="dscluster-image-") as tmp:
        _ensure_base(build, log)
        context = img.stage_context(build, root, Path(tmp))
        argv = img.build_argv(build, context, inputs)
        print(tr("building {tag} ({flavor}, {engine}); log: {log}", tag=build.image, flavor=build.flavor,
                 engine=build.engine, log=log_path), flush=True)
        log.write(f"$ {shlex.join(argv)}\n")
        log.flush()
        try:
            proc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **img.build_env(build)},
                                  timeout=BUILD_TIMEOUT_S, start_new_session=True)
        except FileNotFoundError:
            raise ClusterError(tr("{engine} is not installed here", engine=build.engine),
                               tr("install it (apt-get install docker.io, or podman runc), or choose --engine")) from None
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        text = log_path.read_text(errors="replace")
        print("\n".join(text.strip().splitlines()[-12:]), file=sys.stderr)
        known = img.explain_build_failure(text)
        if known:
            raise ClusterError(tr("the image build failed (exit {rc}) after {s:.0f} s: {cause}", rc=proc.returncode,
                                  s=elapsed, cause=tr(known[0])), tr(known[1]) + "\n" + tr("read the log: {log}", log=log_path))
        raise ClusterError(tr("the image build failed (exit {rc}) after {s:.0f} s", rc=proc.returncode, s=elapsed),
                           tr("read the log: {log}", log=log_path))
    if _inspect(build, img.label_format(img.LABEL_INPUTS)) != inputs:  # e.g. podman stopped by a signal exits 0
        raise ClusterError(tr("{engine} build ended with exit 0 after {s:.0f} s, but no image {tag} with these inputs "
                              "exists (was it stopped?)", engine=build.engine, s=elapsed, tag=build.image),
                           tr("build again; read the log: {log}", log=log_path))
    print(f"{OK} " + tr("built {tag}", tag=build.image))
    print(f"   {tr('size')}: {_size(build)}")
    print(f"   {tr('time')}: {elapsed:.0f} s")
    print(f"   {tr('check it')}: {build.engine} run --rm --entrypoint dscluster {build.image} --version")
    return 0
