"""What doctor reports: one CheckResult per (node, check), gathered into a Report.

A result is one of four states, derived from `ok`, `severity` and `skipped`:
  ok    (✓)  the check passed
  warn  (!)  passed, but something will hurt (slow, fragile); does not fail the run
  fail  (✗)  DeepSpeed would fail or hang; doctor exits non-zero
  skip  (–)  could not be checked (the node is unreachable, or a prerequisite failed)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dscluster import console

# Order of the table's columns; also the stable ids used in --json and by tests.
CHECKS: tuple[str, ...] = (
    "ssh", "reach", "names", "python", "versions", "slots", "shared", "shm",
    "port", "clock", "launcher", "jit-lock", "cuda-arch", "iface",
)
CLUSTER_ROW = "cluster"  # the `node` of results about the whole cluster (the collective)
REPORT_VERSION = 1


@dataclass(frozen=True)
class CheckResult:
    node: str
    check: str
    ok: bool
    finding: str
    fix: str = ""
    severity: str = "error"  # "error" | "warning" | "info"
    skipped: bool = False
    details: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.skipped:
            return "skip"
        if not self.ok:
            return "fail"
        return "warn" if self.severity == "warning" else "ok"

    @property
    def glyph(self) -> str:
        return {"ok": console.OK, "warn": console.WARN, "fail": console.FAIL, "skip": "-"}[self.status]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status"] = self.status
        return data


def passed(node: str, check: str, finding: str, **details) -> CheckResult:
    return CheckResult(node, check, True, finding, "", "info", details=details)


def warned(node: str, check: str, finding: str, fix: str = "", **details) -> CheckResult:
    return CheckResult(node, check, True, finding, fix, "warning", details=details)


def failed(node: str, check: str, finding: str, fix: str, **details) -> CheckResult:
    return CheckResult(node, check, False, finding, fix, "error", details=details)


def skipped(node: str, check: str, finding: str) -> CheckResult:
    return CheckResult(node, check, True, finding, "", "info", skipped=True)


@dataclass
class Report:
    cluster: str
    nodes: list[str]
    results: list[CheckResult]
    elapsed_s: float = 0.0
    summary: dict = field(default_factory=dict)  # facts shared by all nodes, suggestions

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    @property
    def warnings(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "warn"]

    def get(self, node: str, check: str) -> CheckResult | None:
        for r in self.results:
            if r.node == node and r.check == check:
                return r
        return None

    def to_dict(self) -> dict:
        return {
            "version": REPORT_VERSION, "cluster": self.cluster, "nodes": self.nodes, "ok": self.ok,
            "elapsed_s": round(self.elapsed_s, 3), "summary": self.summary,
            "results": [r.to_dict() for r in self.results],
        }
