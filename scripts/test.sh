#!/usr/bin/env bash
# Quick start, command 2: set everything up, then run the whole test suite (unit, simulated cluster,
# JupyterLab in headless Chromium). GPU tests run only where a GPU exists. Extra args go to pytest.
#   scripts/test.sh --fast [ARGS]   the fast part: no simulated cluster, browser or container test, so no
#                                   system package is installed (setup.sh fast); a few minutes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --fast ]; then
  shift
  "$root/scripts/setup.sh" fast
  cd "$root"
  exec "$root/.venv/bin/python" -m pytest -m "not cluster and not browser and not container" "$@"
fi
"$root/scripts/setup.sh" test
cd "$root"
exec "$root/.venv/bin/python" -m pytest "$@"
