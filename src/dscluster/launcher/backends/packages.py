"""`python3 -m dscluster.launcher.backends.packages`: every registered backend's `host_packages` (the Debian
packages the test machine needs for its runs on the simulated cluster), space-separated on one line.

`scripts/setup.sh test` installs them, so that the script names no backend's package. It runs this with the
system's python3 and PYTHONPATH=src, before the venv holds any package (`-S`: not even the system's own
site-packages): importing dscluster, dscluster.launcher and the backends' registry loads nothing outside the
standard library (tests/unit/test_backend_packages.py holds them to it).
"""

from __future__ import annotations

import sys

from dscluster.launcher.backends import host_packages


def main() -> int:
    sys.stdout.write(" ".join(host_packages()) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
