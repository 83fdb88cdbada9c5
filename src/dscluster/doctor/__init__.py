"""`dscluster doctor`: every check on every node, in parallel, before any GPU time is spent.

    from dscluster.doctor import run_doctor
    report = run_doctor(spec, fast=True)      # launch's pre-flight
    if not report.ok: ...                     # report.failures: CheckResult(node, check, finding, fix)
"""

from __future__ import annotations

from dscluster.doctor.engine import DEFAULT_MASTER_PORT, run_doctor
from dscluster.doctor.model import CHECKS, CheckResult, Report
from dscluster.doctor.render import render

__all__ = ["run_doctor", "Report", "CheckResult", "CHECKS", "DEFAULT_MASTER_PORT", "render"]
