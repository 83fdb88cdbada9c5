"""The people of the cluster inside the node containers (the agent's `--people`): accounts from root's records.

A node container has only its image's accounts. `dscluster user add` writes, as root on every host, the
person's record `/etc/dscluster/people/NAME` ("UID", or "UID admin") beside their sshd key file
`/etc/dscluster/keys/NAME` (node/accounts.py), and `dscluster up` mounts the host's /etc/dscluster
read-only into its container (deploy/dockerrun.py). Every few seconds the agent (root) reads the records,
makes each person's account with that UID (the same script as `user add`), their home under the agent's
state directory (a volume that `down`/`up` keep: their cluster key and notebooks on the master), and
removes the accounts of people whose record is gone, their processes first.

Only root's records count. The records directory and each record must be root's and writable by no one
else (what sshd demands of the key files beside them); the shared storage, which the node user can
write, is never asked who a person is or whether they are an admin.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dscluster.cluster.specmodel import _USER_RE, PERSON_UID_MAX, PERSON_UID_MIN
from dscluster.i18n import tr
from dscluster.node import accounts
from dscluster.node.sshd import PEOPLE_DIR

COMMENT = "dscluster user"  # the accounts' GECOS (accounts.ADD_SCRIPT): only those are ever removed here


@dataclass(frozen=True)
class Person:
    name: str
    uid: int
    admin: bool = False


def _roots_only(st: os.stat_result) -> bool:
    return st.st_uid == 0 and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_people(folder: Path = PEOPLE_DIR) -> tuple[tuple[Person, ...] | None, list[str]]:
    """The recorded people (None when there is no trustworthy records directory: then nothing is changed),
    and a sentence for every record skipped."""
    skipped: list[str] = []
    try:
        if not all(_roots_only(os.stat(d)) for d in (folder.parent, folder)) or not folder.is_dir():
            return None, [tr("{path} is not root's alone; no one's account is made from it", path=folder)]
        names = sorted(os.listdir(folder))
    except OSError:
        return None, []
    people: dict[str, Person] = {}
    for name in names:
        if name.startswith("."):
            continue  # a record being written (accounts.ADD_SCRIPT's temporary file)
        try:
            st = os.lstat(folder / name)
            words = (folder / name).read_text(encoding="utf-8").split() if stat.S_ISREG(st.st_mode) else []
        except (OSError, UnicodeDecodeError):
            words = []
        uid = int(words[0]) if words and words[0].isdigit() else -1
        if not (_USER_RE.match(name) and name != "root" and stat.S_ISREG(st.st_mode) and _roots_only(st)
                and PERSON_UID_MIN < uid <= PERSON_UID_MAX and uid not in {p.uid for p in people.values()}):
            skipped.append(tr("skipped the record {path}: not a root-owned 'UID' line of a valid name and a free "
                              "uid in {lo}-{hi}", path=folder / name, lo=PERSON_UID_MIN + 1, hi=PERSON_UID_MAX))
            continue
        people[name] = Person(name, uid, admin="admin" in words[1:])
    return tuple(people.values()), skipped


def _uid_of(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def sync(people: tuple[Person, ...], home_base: Path,
         run: Callable[[list[str]], subprocess.CompletedProcess] = accounts.run_here) -> list[str]:
    """Make the missing accounts, remove those whose record is gone; returns what it did, as log lines."""
    said = []
    for person in people:
        have = _uid_of(person.name)
        if have == person.uid:
            continue
        if have is not None:
            said.append(tr("{user} exists here with uid {have}, not {uid}: not changed", user=person.name,
                           have=have, uid=person.uid))
            continue
        done = run(accounts.add_argv(person.name, person.uid, "", "", home_base=str(home_base), record=False))
        result = accounts.outcome("here", done.returncode, done.stderr, person.name, person.uid)
        said.append(tr("made the account of {user} (uid {uid})", user=person.name, uid=person.uid)
                    if result.ok else result.message)
    recorded = {p.name for p in people}
    for entry in pwd.getpwall():
        if entry.pw_gecos == COMMENT and entry.pw_name not in recorded and \
                PERSON_UID_MIN < entry.pw_uid <= PERSON_UID_MAX:
            done = run(accounts.remove_argv(entry.pw_name))
            said.append(tr("removed the account of {user}: their record is gone", user=entry.pw_name)
                        if done.returncode == 0 else
                        tr("could not remove the account of {user}: {err}", user=entry.pw_name,
                           err=done.stderr.strip()[-200:]))
    return said


class Keeper:
    """The agent's tick: accounts in step with the records; `on_first` (the master's hub) once people exist."""

    def __init__(self, home_base: Path, folder: Path = PEOPLE_DIR,
                 on_first: Callable[[tuple[Person, ...]], subprocess.Popen | None] | None = None):
        self.home_base, self.folder, self.on_first = home_base, folder, on_first
        self._last: set[str] = set()

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            if line not in self._last:  # a problem that stays is said once, not every few seconds
                print(f"dscluster node: {line}", file=sys.stderr, flush=True)
        self._last = set(lines)

    def tick(self) -> list[subprocess.Popen]:
        people, skipped = read_people(self.folder)
        self._say(skipped + (sync(people, self.home_base) if people is not None else []))
        if people is None:
            return []
        if people and self.on_first is not None:
            started, self.on_first = self.on_first(people), None
            return [started] if started else []
        return []
