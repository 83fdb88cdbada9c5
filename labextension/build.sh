#!/usr/bin/env bash
# Rebuild the prebuilt DeepSpeed panel into src/dscluster/jupyter/labextensions/dscluster (committed, so that
# `pip install` needs no node). Needs node >= 18 and npm; uses the venv's JupyterLab as the core.
set -euo pipefail
cd "$(dirname "$0")"
py=${PYTHON:-../.venv/bin/python}
core=$("$py" -c "import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), 'staging'))")
[ -d node_modules ] || npm ci --no-audit --no-fund
rm -rf lib tsconfig.tsbuildinfo ../src/dscluster/jupyter/labextensions/dscluster
npx tsc
node node_modules/@jupyterlab/builder/lib/build-labextension.js --core-path "$core" .
