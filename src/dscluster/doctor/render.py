"""The doctor report as text: a node × check grid of glyphs, then every problem with its fix,
then what all nodes share and what to do next. (`--json` prints Report.to_dict() instead.)"""

from __future__ import annotations

from dscluster import console
from dscluster.doctor.model import CHECKS, CLUSTER_ROW, Report
from dscluster.i18n import tr


def render(report: Report, *, verbose: bool = False) -> str:
    out = [tr("dscluster doctor — cluster {name}: {n} node(s), {secs:.1f} s",
              name=report.cluster, n=len(report.nodes), secs=report.elapsed_s), ""]
    rows = []
    for node in report.nodes:
        row = [node]
        for check in CHECKS:
            r = report.get(node, check)
            row.append(r.glyph if r else "")
        rows.append(row)
    out.append(console.table([tr("node")] + list(CHECKS), rows))
    out.append(tr("{ok} passed   {warn} warning   {fail} failed   - not checked", ok=console.OK, warn=console.WARN,
                  fail=console.FAIL))

    coll = report.get(CLUSTER_ROW, "collective")
    if coll:
        out += ["", f"{coll.glyph} {tr('collective')}: {coll.finding}"]
    out += bandwidth_lines(report)

    problems = [r for r in report.results if r.status in ("fail", "warn") and r.check != "collective"]
    if problems:
        out += ["", tr("Problems:")]
        for r in problems:
            out.append(f"  {r.glyph} {r.node} · {r.check}: {r.finding}")
            if r.fix:
                out.append(f"      {tr('fix')}: {r.fix}")
    if coll and coll.fix and not coll.ok:
        out.append(f"      {tr('fix')}: {coll.fix}")

    if verbose:
        out += ["", tr("Every finding:")]
        for r in report.results:
            out.append(f"  {r.glyph} {r.node} · {r.check}: {r.finding}")

    out += ["", *summary_lines(report)]
    if report.ok:
        out.append(f"{console.OK} " + tr("all {n} checks passed on {nodes} node(s)",
                                           n=len(report.results), nodes=len(report.nodes)))
        steps = ["dscluster launch train.py --deepspeed --deepspeed_config ds_config.json"]
        if report.summary.get("spec_path"):  # a first run needs neither a script nor a ds_config.json
            steps.insert(0, f"dscluster demo --cluster {report.summary['spec_path']}   # "
                            + tr("the built-in GPT across these nodes"))
        if coll is None:
            steps.append("dscluster doctor --collective   # " + tr("measure the all-reduce bandwidth"))
        out.append(console.next_steps(*steps))
    else:
        failed = sorted({r.node for r in report.failures})
        out.append(f"{console.FAIL} " + tr("{n} check(s) failed on {nodes}", n=len(report.failures),
                                           nodes=", ".join(failed)))
        out.append(console.next_steps(tr("apply the fixes above, then: dscluster doctor"),
                                      "dscluster doctor --json   # " + tr("the full findings for scripts")))
    return "\n".join(out)


def bandwidth_lines(report: Report) -> list[str]:
    """Each node's figure beside the others', its baseline, and NCCL's transport (from --collective)."""
    rows = []
    for node in report.nodes:
        bw, tp = report.get(node, "bandwidth"), report.get(node, "transport")
        if bw is None and tp is None:
            continue
        gbs = bw.details.get("gbs") if bw else None
        base = bw.details.get("baseline_gbs") if bw else None
        rows.append([node, (bw.glyph if bw else "") + (f" {gbs:.3g}" if gbs is not None else ""),
                     f"{base:.3g}" if base else "-", "; ".join(f"{k} {v:.3g}" for k, v in
                                                           (bw.details.get("links") or {}).items()) if bw else "",
                     f"{tp.glyph} {tp.finding}" if tp else ""])
    if not rows:
        return []
    total = report.get(CLUSTER_ROW, "bandwidth")
    headers = [tr("node"), "GB/s", tr("baseline"), tr("links"), tr("transport")]
    if not any(r[-1] for r in rows):  # gloo on CPU: NCCL reports no transport
        headers, rows = headers[:-1], [r[:-1] for r in rows]
    out = ["", tr("Bandwidth per node (GB/s, best with any peer) and per link:")]
    out.append(console.table(headers, rows))
    if total:
        out.append(f"{total.glyph} {total.finding}")
    return out


def summary_lines(report: Report) -> list[str]:
    s = report.summary
    lines = []
    if s.get("versions"):
        vers = ", ".join(f"{k} {v}" for k, v in s["versions"].items())
        lines.append(tr("Master: {python}; {vers}", python=s.get("python"), vers=vers))
    if s.get("mode"):
        lines.append(tr("Mode: {mode} ({backend}), world size {world}, launcher {launcher}, master {master}",
                        mode=s["mode"].upper(), backend=s.get("backend"), world=s.get("world_size"),
                        launcher=s.get("launcher"), master=s.get("master")))
    elif "world_size" in s:
        lines.append(tr("Mode: unknown (no node answered), world size {world}, launcher {launcher}, master {master}",
                        world=s.get("world_size"), launcher=s.get("launcher"), master=s.get("master")))
    if s.get("socket_ifname"):
        name = s["socket_ifname"]
        lines.append(tr("Network: the nodes reach the master over {name}; pin it with "
                        "export NCCL_SOCKET_IFNAME={name} GLOO_SOCKET_IFNAME={name} "
                        "(or network_interface = \"{name}\" in dscluster.toml)", name=name))
    return lines
