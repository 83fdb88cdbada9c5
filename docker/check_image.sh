#!/usr/bin/env bash
# The node image's own check, run inside the built image (no GPU needed):
#   docker run --rm --entrypoint dscluster-image-check dscluster-node:0.1.0
# It checks that torch reports its CUDA version (cuda flavor), that every op the build prebuilt
# (/opt/dscluster/prebuilt-ops) is installed and imports, that each op with GPU code carries machine
# code for every architecture of ARCHS (cuobjdump --list-elf), that CUDA's compiler stayed out of the
# image, and that sshd, pdsh, OpenMPI (+ mpi4py), MPICH and JupyterLab with its zh-TW pack are there.
# Prints one line per check and exits 1 when any fails. hadolint lints docker/Dockerfile itself
# (tests/unit/test_dockerfile_policy.py), outside the image.
#   ARCHS  the architectures every GPU op must carry (default: "8.0;8.6;8.9;9.0", the Dockerfile's)
set -uo pipefail
export ARCHS=${ARCHS:-"8.0;8.6;8.9;9.0"}
fail=0
check() {  # check NAME COMMAND...: runs COMMAND, prints ok/FAIL with its first output line
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then echo "ok    ${name}: $(head -1 <<<"${out}")"; else echo "FAIL  ${name}: ${out}"; fail=1; fi
}

flavor=cpu
if python -c 'import sys, torch; sys.exit(torch.version.cuda is None)' 2>/dev/null; then flavor=cuda; fi
export DS_ACCELERATOR=${flavor}
echo "flavor: ${flavor}"

check "torch" python -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
if [ "${flavor}" = cuda ]; then
  check "cuobjdump" cuobjdump --version
  check "no CUDA compiler in the image" bash -c \
    '! command -v nvcc && ! find "${VIRTUAL_ENV}" /usr/local /opt -name nvcc -type f 2>/dev/null | grep . && echo absent'
fi

# The prebuilt ops: installed, importable, and (GPU code) built for every architecture.
python - <<'PY' || fail=1
import importlib, importlib.util, os, re, subprocess, sys

import torch  # noqa: F401 - the ops link against torch's libraries
from deepspeed.git_version_info import installed_ops, torch_info
from deepspeed.ops.op_builder.all_ops import ALL_OPS

cuda = os.environ["DS_ACCELERATOR"] == "cuda"
want_archs = {"sm_" + a.replace(".", "") for a in os.environ["ARCHS"].split(";") if a}
expected = open("/opt/dscluster/prebuilt-ops").read().split()
by_var = {b.BUILD_VAR: b for b in ALL_OPS.values() if b is not None}
bad = 0
if cuda and torch_info.get("cuda_version") != ".".join(torch.version.cuda.split(".")[:2]):
    print(f"FAIL  ops built with CUDA {torch_info.get('cuda_version')}, torch has {torch.version.cuda}")
    bad += 1
for op in expected:
    builder = by_var.get(f"DS_BUILD_{op}")
    if builder is None:
        print(f"FAIL  op {op}: no such DeepSpeed op builder"); bad += 1; continue
    spec = importlib.util.find_spec(builder.absolute_name())
    if not installed_ops.get(builder.name) or spec is None or not spec.origin:
        print(f"FAIL  op {builder.name}: not prebuilt (it would be JIT-compiled at a run's start)"); bad += 1
        continue
    try:
        importlib.import_module(builder.absolute_name())
    except Exception as err:  # noqa: BLE001 - report every op
        print(f"FAIL  op {builder.name}: does not import: {err}"); bad += 1; continue
    gpu = cuda and any(str(s).endswith(".cu") for s in builder.sources())
    if not gpu:
        print(f"ok    op {builder.name}: prebuilt, {os.path.basename(spec.origin)} (CPU code)")
        continue
    listing = subprocess.run(["cuobjdump", "--list-elf", spec.origin], capture_output=True, text=True)
    archs = set(re.findall(r"\.(sm_\d+a?)\.cubin", listing.stdout))
    missing = sorted(want_archs - archs)
    if listing.returncode != 0 or missing:
        print(f"FAIL  op {builder.name}: machine code for {sorted(archs)}, missing {missing} {listing.stderr.strip()}")
        bad += 1
    else:
        print(f"ok    op {builder.name}: prebuilt, machine code for {' '.join(sorted(archs))}")
sys.exit(1 if bad else 0)
PY

check "sshd" bash -c 'test -x /usr/sbin/sshd && ssh -V 2>&1'
check "pdsh" bash -c 'pdsh -V 2>&1 | head -1'
check "OpenMPI" bash -c 'mpirun --version 2>&1 | grep "Open MPI"'
check "MPICH" bash -c 'mpirun.mpich --version 2>&1 | grep -m1 "Version:"'
check "mpi4py" python -c 'import mpi4py; print("mpi4py", mpi4py.__version__)'
check "JupyterLab" jupyter lab --version
check "JupyterLab zh-TW pack" python -c '
from importlib.metadata import entry_points
packs = [e.name for e in entry_points(group="jupyterlab.languagepack")]
assert "zh_TW" in packs, packs
print("language packs:", *packs)'
check "dscluster" dscluster --version

if [ "${fail}" -ne 0 ]; then echo "image check: FAILED"; exit 1; fi
echo "image check: all passed"
