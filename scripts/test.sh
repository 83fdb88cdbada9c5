#!/usr/bin/env bash
# Quick start, command 2: set everything up, then run the whole test suite (unit, simulated cluster,
# JupyterLab in headless Chromium). GPU tests run only where a GPU exists. Extra args go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" test
cd "$root"
exec "$root/.venv/bin/python" -m pytest "$@"
