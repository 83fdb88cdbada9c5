"""DeepSpeed hostfiles: DeepSpeed's exact rules, plus the checks DeepSpeed leaves to a hang.

DeepSpeed 0.19 (`launcher/runner.py::_parse_hostfile`) applies `^(\\S+)\\s+slots=(\\d+)` to each stripped
line, skips blank lines and lines starting with `#`, ignores anything after `slots=N`, and rejects
duplicates and files with no entries. Line order is node_rank order: the first host runs rank 0.

Stricter here, each failing with the line and the fix:
- `slots=0` (DeepSpeed accepts it and then starts no rank on that node),
- `slots = 8` with spaces, `host:8`, `host` alone (DeepSpeed: "bad entry", without saying why),
- `user@host` (DeepSpeed accepts it as a hostname; the user belongs in the spec's ssh_user),
- trailing words other than `max_slots=N` or a `# comment` (DeepSpeed silently ignores them),
- names that do not resolve (`check_resolvable`), and a master that is not first (`check_master_first`).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from dscluster.errors import HostfileError
from dscluster.i18n import tr

# DeepSpeed's own pattern, applied with re.search to the stripped line.
DEEPSPEED_LINE_RE = re.compile(r"^(\S+)\s+slots=(\d+)")
_TRAILING_OK = re.compile(r"^(max_slots=\d+)?\s*(#.*)?$")
_SPACED_SLOTS = re.compile(r"^(\S+)\s+slots\s*[=:]\s*(\S+)")
_HOST_COLON = re.compile(r"^([^\s:]+):(\d+)$")

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

Entry = tuple[str, int]


def parse_hostfile(text: str, path: str | None = None) -> list[Entry]:
    """[(host, slots), ...] in file order. Raises HostfileError with the line number and the fix."""
    entries: list[Entry] = []
    first_line: dict[str, int] = {}
    # Lines as DeepSpeed's fetch_hostfile reads them (a text-mode readlines: \n, \r\n, \r), not
    # str.splitlines, which would also split at \f, \v, \x1c-\x1e, \x85 and U+2028/9 where DeepSpeed does not.
    for lineno, raw in enumerate(_LINE_BREAK.split(text), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = DEEPSPEED_LINE_RE.search(line)
        if not match:
            raise HostfileError(*_explain_bad_line(line), path=path, line=lineno)
        host, slots = match.group(1), int(match.group(2))
        rest = line[match.end():].strip()
        if rest and not _TRAILING_OK.match(rest):
            raise HostfileError(
                tr("unexpected {rest!r} after slots={slots} in {line!r} (DeepSpeed would silently ignore it)",
                   rest=rest, slots=slots, line=line),
                tr("write `{host} slots={slots}`, optionally followed by max_slots=N or a # comment",
                   host=host, slots=slots), path=path, line=lineno)
        if slots < 1:
            raise HostfileError(tr("{host} has slots={slots}: no rank would run there", host=host, slots=slots),
                                tr("use slots=1 or more (one per GPU), or remove the line"), path=path, line=lineno)
        if "@" in host:
            raise HostfileError(tr("{host!r} contains a user name", host=host),
                                tr("write only the host ({bare}); the node user is the spec's ssh_user",
                                   bare=host.split("@", 1)[1]), path=path, line=lineno)
        if host in first_line:
            raise HostfileError(
                tr("{host} is listed twice (lines {a} and {b}); DeepSpeed refuses duplicate entries",
                   host=host, a=first_line[host], b=lineno),
                tr("keep one line per host with the total: {host} slots=N", host=host), path=path, line=lineno)
        first_line[host] = lineno
        entries.append((host, slots))
    if not entries:
        raise HostfileError(tr("the hostfile has no host lines"),
                            tr("write one line per node, master first: `node0 slots=8`"), path=path)
    return entries


def _explain_bad_line(line: str) -> tuple[str, str]:
    spaced = _SPACED_SLOTS.match(line)
    if spaced:
        host, value = spaced.group(1), spaced.group(2)
        if value.isdigit():
            return (tr("{line!r}: DeepSpeed needs slots=N with no spaces around '='", line=line),
                    tr("write `{host} slots={n}`", host=host, n=value))
        return (tr("{line!r}: slots must be a whole number, got {value!r}", line=line, value=value),
                tr("write `{host} slots=N` with N the number of GPUs", host=host))
    colon = _HOST_COLON.match(line)
    if colon:
        return (tr("{line!r} is not hostfile syntax", line=line),
                tr("write `{host} slots={n}`", host=colon.group(1), n=colon.group(2)))
    parts = line.split()
    if len(parts) == 1:
        return (tr("{line!r} has no slots", line=line), tr("write `{host} slots=N` (N = GPUs on that node)",
                                                          host=parts[0]))
    return (tr("{line!r} is not a hostfile entry", line=line),
            tr("each line is `HOST slots=N`, e.g. `node0 slots=8`"))


def format_hostfile(entries: Iterable[Entry]) -> str:
    return "".join(f"{host} slots={slots}\n" for host, slots in entries)


def check_master_first(entries: Sequence[Entry], master: Iterable[str], path: str | None = None) -> None:
    """Rank 0 runs on the first host, so it must be the master (whose address is --master_addr)."""
    names = set(master)
    if entries and entries[0][0] not in names:
        where = next((i for i, (h, _) in enumerate(entries) if h in names), None)
        hint = (tr("move the master's line ({host}) to the top", host=entries[where][0]) if where is not None
                else tr("add the master ({names}) as the first line", names=" / ".join(sorted(names))))
        raise HostfileError(
            tr("the first host is {host}, but the master is {master}: rank 0 and MASTER_ADDR would be on "
               "different machines and every rank would wait until timeout", host=entries[0][0],
               master=" / ".join(sorted(names))), hint, path=path, line=None)


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host.strip("[]"), None)
        return True
    except (socket.gaierror, UnicodeError, OSError):
        return False


def unresolvable(hosts: Iterable[str], timeout: float = 5.0) -> list[str]:
    """Hosts this machine cannot resolve (each lookup bounded by `timeout`), in input order."""
    hosts = list(hosts)
    if not hosts:
        return []
    pool = ThreadPoolExecutor(max_workers=min(32, len(hosts)))
    futures = [pool.submit(_resolves, h) for h in hosts]
    bad = []
    for host, fut in zip(hosts, futures):
        try:
            ok = fut.result(timeout=timeout)
        except FutureTimeout:
            ok = False
        if not ok:
            bad.append(host)
    pool.shutdown(wait=False, cancel_futures=True)
    return bad


def check_resolvable(entries: Sequence[Entry], path: str | None = None, *, aliases: Iterable[str] = ()) -> None:
    """Raise naming the first host that does not resolve here. `aliases` (names the cluster's
    ssh_config maps to addresses) count as resolvable for ssh, so they are skipped."""
    skip = set(aliases)
    bad = unresolvable([h for h, _ in entries if h not in skip])
    if bad:
        lineno = None
        raise HostfileError(tr("cannot resolve {hosts}", hosts=", ".join(bad)),
                            tr("use IP addresses, or add the names to /etc/hosts (or DNS) on every node"),
                            path=path, line=lineno)
