#!/usr/bin/env bash
# Installs what dscluster needs on a fresh Debian/Ubuntu machine, idempotently.
#   scripts/setup.sh demo   -> a venv with torch, DeepSpeed and dscluster (enough for `dscluster demo`)
#   scripts/setup.sh fast   -> the above plus the JupyterLab / test extras, no system package (enough for
#                              `scripts/test.sh --fast`: no simulated cluster, browser or container)
#   scripts/setup.sh test   -> the above plus openssh-server, iproute2, each launcher backend's host packages
#                              (their `host_packages`, launcher/backends), Prometheus, Chromium, podman and
#                              Docker Engine (enough for the whole test suite)
# Re-running is cheap: each step is skipped when its stamp matches.
set -euo pipefail
mode=${1:-demo}
case "$mode" in demo|fast|test) ;; *) echo "usage: scripts/setup.sh [demo|fast|test]" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${DSCLUSTER_VENV:-$root/.venv}
py=${PYTHON:-python3}

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "apt-get install ${missing[*]}"
  # policy-rc.d keeps the package from starting a system-wide sshd: dscluster runs its own.
  $sudo sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d' || true
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  "$py" -m venv "$venv"
fi

if [ "$mode" = test ]; then
  # Each launcher backend names the packages its runs on the simulated cluster need (its `host_packages`):
  # read with this python and the tree's source alone (-S: no site-packages; the registry imports only the
  # standard library), so that this script names no backend's package.
  backend_pkgs=$(PYTHONPATH="$root/src" "$py" -S -m dscluster.launcher.backends.packages)
  # shellcheck disable=SC2086  # one word per package
  apt_install openssh-server openssh-client iproute2 procps psmisc util-linux chromium fonts-wqy-microhei \
    $backend_pkgs
  # A real Prometheus for tests/cluster/test_prometheus.py: the test starts its own, on a free port with a
  # temporary config and storage, and stops it by its PID.
  apt_install prometheus
  # The node image tests (tests/container): podman with runc builds and runs the image (no daemon to
  # start or stop), and Docker Engine (docker.io; the tests start dockerd themselves and stop it, and
  # policy-rc.d keeps the package from starting one); mmdebstrap makes the Debian base where no
  # registry can be reached.
  apt_install podman runc mmdebstrap uidmap docker.io
  if [ ! -f /etc/containers/containers.conf ] && [ "$(id -u)" -eq 0 ]; then
    # crun cannot run on hybrid cgroups; podman's default nofile/nproc exceed common hard limits.
    printf '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n' > /etc/containers/containers.conf
  fi
fi

extras="tensorboard"
py_mode=demo  # the Python side: fast and test install the same packages
[ "$mode" != demo ] && extras="tensorboard,jupyter,test" && py_mode=test
stamp="$venv/.dscluster-$py_mode-$(cat "$root/pyproject.toml" | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  say "installing dscluster[$extras] into $venv"
  # torch first and pinned: the local CPU build; a bare `torch` would pull GBs of CUDA wheels.
  "$venv/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
  "$venv/bin/python" -m pip install -q "torch==${DSCLUSTER_TORCH:-2.13.0}" 2>&1 | grep -v '^WARNING: Location' || true
  "$venv/bin/python" -m pip install -q -e "$root[$extras]" 2>&1 | grep -v '^WARNING: Location' || true
  if [ "$py_mode" = test ]; then
    # mpi4py for the OpenMPI launcher (DeepSpeed's mpi_discovery imports it on every rank).
    "$venv/bin/python" -m pip install -q mpi4py playwright 2>&1 | grep -v '^WARNING: Location' || true
  fi
  "$venv/bin/python" -c "import torch, deepspeed, dscluster" 2>/dev/null || { echo "setup failed: torch/deepspeed/dscluster do not import" >&2; exit 1; }
  touch "$stamp"
fi

# An editable install skips pyproject's data-files: put the prebuilt DeepSpeed panel and the server
# extension's enable file where a plain `jupyter lab` from this venv finds them too.
mkdir -p "$venv/share/jupyter/labextensions" "$venv/etc/jupyter/jupyter_server_config.d"
ln -sfn "$root/src/dscluster/jupyter/labextensions/dscluster" "$venv/share/jupyter/labextensions/dscluster"
cp "$root/jupyter-config/jupyter_server_config.d/dscluster.json" "$venv/etc/jupyter/jupyter_server_config.d/"

# Every dscluster process (the CLI, each run's supervisor, the watchdog on every node) imports from this
# tree: compile it once here, as pip does for a non-editable install. Without it an environment with
# PYTHONDONTWRITEBYTECODE (or a node user who cannot write here) compiles ~200 modules again in every one
# of them, about a second of CPU on each launch's path. Only changed files are compiled again.
"$venv/bin/python" -m compileall -q "$root/src/dscluster" >/dev/null || true
