#!/usr/bin/env bash
# Quick start, command 1: set everything up, then train the built-in GPT with DeepSpeed on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" demo
exec "$root/.venv/bin/dscluster" demo "$@"
