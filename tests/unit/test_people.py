"""node/people.py: a node container's agent makes the people's accounts from root's records, and only from them."""

from __future__ import annotations

import os
import pwd
import subprocess

import pytest

from dscluster.node import people

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="root-owned records, real accounts")


def _records(tmp_path, **entries):
    folder = tmp_path / "etc" / "people"
    folder.mkdir(parents=True)
    os.chmod(tmp_path / "etc", 0o755)
    os.chmod(folder, 0o755)
    for name, text in entries.items():
        (folder / name).write_text(text)
        os.chmod(folder / name, 0o644)
    return folder


@as_root
def test_only_valid_root_owned_records_of_free_uids_count(tmp_path):
    folder = _records(tmp_path, alice="2001\n", bob="2002 admin\n", Bad="2003\n", low="100\n", twin="2001\n",
                      root="2004\n", words="two thousand\n", loose="2005\n")
    os.chmod(folder / "loose", 0o666)  # anyone could rewrite it
    (folder / ".carol.XXXX").write_text("2006\n")  # a record being written
    (folder / "link").symlink_to(folder / "alice")
    found, skipped = people.read_people(folder)
    assert found == (people.Person("alice", 2001), people.Person("bob", 2002, admin=True))
    assert sorted(line.split()[3].rsplit("/", 1)[1].rstrip(":") for line in skipped) == \
        ["Bad", "link", "loose", "low", "root", "twin", "words"]


@as_root
def test_a_records_directory_others_can_write_or_none_at_all_changes_nothing(tmp_path):
    folder = _records(tmp_path, alice="2001\n")
    os.chmod(folder, 0o777)
    found, skipped = people.read_people(folder)
    assert found is None and "not root's alone" in skipped[0]
    assert people.read_people(tmp_path / "missing") == (None, [])


def test_sync_makes_the_missing_removes_the_unrecorded_and_leaves_a_clash_alone(monkeypatch, tmp_path):
    accounts = {"alice": 2001, "carol": 2003, "dave": 2004, "dscluster": 10001}
    gecos = {"carol": people.COMMENT, "dave": "someone else's", "dscluster": ""}
    monkeypatch.setattr(people, "_uid_of", lambda name: accounts.get(name))
    monkeypatch.setattr(pwd, "getpwall", lambda: [
        pwd.struct_passwd((n, "x", u, u, gecos.get(n, people.COMMENT), f"/h/{n}", "/bin/bash"))
        for n, u in accounts.items()])
    ran = []

    def run(argv):
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    said = people.sync((people.Person("alice", 2001), people.Person("bob", 2002), people.Person("dave", 2999)),
                       tmp_path / "homes", run)
    # bob is made (home under the state volume), carol's record is gone (made by dscluster: removed), dave's
    # account has another uid (not changed), alice is there already, the node user is never touched
    assert [a[3:6] for a in ran] == [["dscluster-user-add", "bob", "2002"], ["dscluster-user-remove", "carol"]]
    assert f"HOME_BASE={tmp_path / 'homes'}" in ran[0][2] and ran[0][-1] == ""  # no record: those are the host's
    assert said == ["made the account of bob (uid 2002)", "dave exists here with uid 2004, not 2999: not changed",
                    "removed the account of carol: their record is gone"]

NAME, UID = "dsc-ptest", 59321


@pytest.fixture
def no_test_account():
    def gone():
        subprocess.run(["userdel", "--remove", NAME], capture_output=True)
    gone()
    yield
    gone()


@as_root
def test_the_keeper_makes_and_removes_a_real_account_and_starts_the_hub_once(tmp_path, no_test_account, monkeypatch):
    # The keeper is meant for a node container's own /etc/passwd. Here it runs on the host, where other
    # people's accounts (a hub test's alice, a developer's) carry the same GECOS: it must see only its own,
    # or its sync removes them and kills their labs mid-test (seen: two hub journeys killed this way).
    real_getpwall = pwd.getpwall
    monkeypatch.setattr(people.pwd, "getpwall", lambda: [e for e in real_getpwall() if e.pw_name == NAME])
    folder = _records(tmp_path, **{NAME: f"{UID} admin\n"})
    homes = tmp_path / "state" / "homes"
    first = []
    keeper = people.Keeper(homes, folder, on_first=lambda found: first.append(found))
    assert keeper.tick() == [] and first == [(people.Person(NAME, UID, admin=True),)]
    entry = pwd.getpwnam(NAME)
    assert (entry.pw_uid, entry.pw_dir, entry.pw_gecos) == (UID, str(homes / NAME), people.COMMENT)
    assert os.stat(homes / NAME).st_uid == UID
    keeper.tick()
    assert len(first) == 1  # the hub is started once, not at every tick
    (folder / NAME).unlink()
    keeper.tick()
    with pytest.raises(KeyError):
        pwd.getpwnam(NAME)


def test_user_add_finds_the_node_containers_and_waits_for_every_nodes_agent(monkeypatch):
    """deploy/team.py with fake hosts: the running container on the master means node containers; each node's
    `id -u` is asked until it says the UID (an agent picks the record up within seconds), and the nodes that
    never do are named."""
    from pathlib import Path

    from dscluster.cluster.runner import CommandResult
    from dscluster.cluster.spec import ClusterSpec, NodeSpec
    from dscluster.deploy import team

    spec = ClusterSpec(name="lab", shared_dir=Path("/shared/lab"), ssh_user="dscluster", ssh_port=2222,
                       nodes=(NodeSpec("10.0.0.1", 1, "gpu1", 2222), NodeSpec("10.0.0.2", 1, "gpu2", 2222)))
    monkeypatch.delenv("DSCLUSTER_ENGINE", raising=False)
    asked: list[tuple[str, tuple[str, ...]]] = []

    class Host:
        def __init__(self, node, answers):
            self.node, self.answers = node, answers

        def run(self, argv, *, input=None, timeout=None):
            asked.append((self.node, tuple(argv)))
            out = self.answers.pop(0) if self.answers else ""
            return CommandResult(self.node, tuple(argv), 0, out + "\n")

    assert team.running_engine(spec, Host("gpu1", ["true"])) == "docker"
    assert asked[-1][1] == ("docker", "container", "inspect", "--format", "{{.State.Running}}", "dscluster-lab")
    assert team.running_engine(spec, Host("gpu1", ["false"])) is None
    hosts = {"gpu1": Host("gpu1", ["2001"]), "gpu2": Host("gpu2", ["", "", "2001"])}
    naps = []
    assert team.wait_for_accounts(spec, "podman", lambda n: hosts[n.name], "alice", 2001, sleep=naps.append) == []
    assert len(naps) == 2 and asked[-1][1][:5] == ("podman", "exec", "--user", "0", "dscluster-lab")
    late = {"gpu1": Host("gpu1", ["2001"]), "gpu2": Host("gpu2", [])}
    assert team.wait_for_accounts(spec, "podman", lambda n: late[n.name], "alice", 2001, timeout=0,
                                  sleep=naps.append) == ["gpu2 (-)"]
    gone = {"gpu1": Host("gpu1", [""]), "gpu2": Host("gpu2", [""])}  # after `user remove`: no such account
    assert team.wait_for_accounts(spec, "podman", lambda n: gone[n.name], "alice", None, sleep=naps.append) == []
