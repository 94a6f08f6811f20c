"""The owner record on the cluster (kgitops/plan/owners.py), on the simulated cluster.

``validate`` compares the cluster folders of one repository; folders that cannot see each
other's files (two repositories) are kept apart by the record each apply writes on the
cluster. A simulated ``stateFile`` must be inside its folder's repository, so two git
repositories cannot share one simulated cluster: here two folders outside any git checkout
(each is its own "repository": ``validate`` compares none) share one state file, and the
two-repository case runs on real Kafka (tests/ownership/test_owner_records_real.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kgitops.commands._owners import normalized_remote, source_of
from kgitops.model import OWNED_KINDS, Owns
from kgitops.plan.owners import OwnerRecord, latest, record_key, record_value
from tests import helpers
from tests.helpers import THREE_RACKS, run_cli


def cluster_yaml(owns: str) -> str:
    return helpers.cluster_yaml(
        "shared", brokers=THREE_RACKS, state_file="../shared-state.json", extra=owns
    )


def topic_yaml(name: str) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 2\nreplicationFactor: 2\n"
    )


class Two:
    """``base/a`` and ``base/b``: no ``.git`` anywhere, one state file
    ``base/shared-state.json``."""

    def __init__(self, base: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.base = base
        self.capsys = capsys
        self.state = base / "shared-state.json"

    def folder(self, name: str, owns: str, *topics: str) -> Path:
        folder = helpers.cluster_folder(self.base / name, cluster=cluster_yaml(owns))
        for old in folder.glob("t-*.yaml"):
            old.unlink()
        for topic in topics:
            (folder / f"t-{topic}.yaml").write_text(topic_yaml(topic))
        return folder

    def run(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def data(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.state.read_text())
        return loaded

    def records(self) -> dict[str, Any]:
        return dict(self.data()["simulation"]["ownerRecords"])


@pytest.fixture
def two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Two:
    base = tmp_path / "base"
    base.mkdir()
    return Two(base, capsys)


A_OWNS = "owns:\n  topics: ['payments.*']\n"


def test_apply_records_the_owner_and_an_overlapping_claim_is_refused_naming_both(
    two: Two,
) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    code, out, err = two.run("apply", str(a), "--yes")
    assert code == 0, out + err
    assert f"recorded what {json.dumps(str(a))} owns in topic _kgitops-owners" in err
    assert two.records() == {
        str(a): {
            "from": str(a),
            "offset": 0,
            "owns": {
                "groups": [],
                "principals": [],
                "topics": ["payments.*"],
                "transactionalIds": [],
            },
        }
    }
    # b claims *.orders: payments.orders could be either's
    b = two.folder("b", "owns:\n  topics: ['*.orders', 'shipping.*']\n", "shipping.parcels")
    before = two.state.read_text()
    code, out, err = two.run("plan", str(b))
    assert code == 1
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert lines == [
        f"{b}/cluster.yaml:8:3: error: owns of {json.dumps(str(b))} overlaps what "
        f"{json.dumps(str(a))} owns on this cluster (its record in topic _kgitops-owners): "
        "both can own topics *.orders and payments.*; give each name one owner (ask that owner "
        "to give it up), or, only when that owner's folder no longer exists, release its "
        "record (kgitops owners DIR --release OWNER)"
    ]
    code, out, err = two.run("apply", str(b), "--yes")
    assert code == 1 and "overlaps what" in err
    assert two.state.read_text() == before  # nothing created, no record of b
    assert "shipping.parcels" not in two.data()["topics"]


def test_a_disjoint_owner_applies_and_touches_nothing_of_the_other(two: Two) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    orders = two.data()["topics"]["payments.orders"]
    b = two.folder("b", "owns:\n  topics: ['shipping.*']\n", "shipping.parcels")
    code, out, err = two.run("apply", str(b), "--yes")
    assert code == 0, out + err
    data = two.data()
    assert data["topics"]["payments.orders"] == orders
    assert set(two.records()) == {str(a), str(b)}
    for folder in (a, b):  # neither sees the other's topic as unmanaged
        code, out, err = two.run("plan", str(folder))
        assert code == 0 and "No changes" in out and "UNMANAGED" not in out + err


def test_a_shrunk_owns_rewrites_the_record_and_frees_the_names_it_gave_up(two: Two) -> None:
    a = two.folder("a", "owns:\n  topics: ['payments.*', 'refunds.*']\n", "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    b = two.folder("b", "owns:\n  topics: ['refunds.*']\n", "refunds.x")
    assert two.run("plan", str(b))[0] == 1
    two.folder("a", A_OWNS, "payments.orders")
    code, out, err = two.run("apply", str(a), "--yes")  # no topic change: the record still
    assert code == 0 and "No changes" in out and "recorded what" in err
    assert two.records()[str(a)]["owns"]["topics"] == ["payments.*"]
    assert two.run("apply", str(b), "--yes")[0] == 0
    assert "refunds.x" in two.data()["topics"]
    # an apply that changes nothing of the claim writes nothing
    stamp = two.state.stat().st_mtime_ns
    code, _, err = two.run("apply", str(a), "--yes")
    assert code == 0 and "recorded" not in err and two.state.stat().st_mtime_ns == stamp


def test_owners_lists_the_records_and_release_takes_one_out(two: Two) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    b = two.folder("b", "owns:\n  owner: team-b\n  topics: ['payments.refunds']\n")
    code, out, _ = two.run("owners", str(b))
    assert code == 0
    assert out.splitlines() == [f"{a}  topics: payments.*"]
    assert two.run("plan", str(b))[0] == 1
    # a's folder is gone (moved to another repository, say): its record is released by name
    code, out, _ = two.run("owners", str(b), "--release", str(a))
    assert (
        code == 0
        and out.strip() == f"released the record of {json.dumps(str(a))} in topic _kgitops-owners"
    )
    assert two.records() == {}
    assert two.run("apply", str(b), "--yes")[0] == 0
    code, out, _ = two.run("owners", str(b))
    assert out.splitlines() == ["team-b  (this folder)  topics: payments.refunds"]
    assert two.records()["team-b"]["from"] == str(b)
    code, out, err = two.run("owners", str(b), "--release", "nobody")
    assert code == 1 and 'no owner record of "nobody"' in err
    assert two.run("owners", str(b), "--release")[0] == 0
    assert two.records() == {}


def test_a_folder_without_owns_neither_reads_nor_keeps_a_record(two: Two) -> None:
    a = two.folder("a", "", "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    assert two.records() == {}


def test_an_unreadable_record_of_another_owner_stops_the_plan(two: Two) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    data = two.data()
    data["simulation"]["ownerRecords"]["rogue"] = {"owns": "everything"}
    two.state.write_text(json.dumps(data))
    code, _, err = two.run("plan", str(a))
    assert code == 1
    assert (
        'the owner record of "rogue" on this cluster (topic _kgitops-owners) is not kgitops\''
        in err
    )


# --------------------------------------------------------------------- identity, records


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("git@github.com:acme/b.git", "github.com/acme/b"),
        ("https://github.com/acme/b", "github.com/acme/b"),
        ("https://x-access-token:ghs_SECRET@GitHub.com/acme/b.git/", "github.com/acme/b"),
        ("ssh://git@github.com:22/acme/b.git", "github.com/acme/b"),
        ("file:///srv/git/b.git", "/srv/git/b"),
        ("/srv/git/b", "/srv/git/b"),
        ("https://github.com/acme/b.git?access_token=SECRET", "github.com/acme/b"),
        ("https://host.example/acme/b#SECRET", "host.example/acme/b"),
        ("git@host.example:acme/b.git?SECRET", "host.example/acme/b"),
        ("https://GitHub.com/Acme/B.git", "github.com/acme/b"),
        ("git@github.com:Acme/B.git", "github.com/acme/b"),
        ("https://gitlab.example/Acme/B", "gitlab.example/Acme/B"),
    ],
)
def test_a_remote_is_named_by_host_and_path_without_credentials(url: str, shown: str) -> None:
    assert normalized_remote(url) == shown


def test_a_folder_of_a_checkout_is_its_origin_and_its_path_in_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "topics" / "b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert source_of(str(root / "topics" / "b")) == f"{root} topics/b"  # no origin
    subprocess.run(
        ["git", "-C", str(root), "remote", "add", "origin", "https://u:pw@github.com/acme/b.git"],
        check=True,
    )
    assert source_of(str(root / "topics" / "b")) == "github.com/acme/b topics/b"


def test_the_last_record_of_an_owner_wins_and_a_tombstone_releases_it() -> None:
    one = OwnerRecord(
        Owns(topics=("a.*",), principals=(), groups=(), transactional_ids=(), declared=True), "r a"
    )
    two = OwnerRecord(
        Owns(topics=("b.*",), principals=(), groups=(), transactional_ids=(), declared=True), "r a"
    )
    got = latest(
        [
            (record_key("x"), record_value(one)),
            (b"not json", b"{}"),
            (record_key("y"), record_value(one)),
            (record_key("x"), record_value(two)),
            (record_key("y"), None),
            (record_key("z"), b"\xff"),
        ]
    )
    assert set(got) == {"x", "z"}
    assert got["x"] == two
    assert got["z"].problem == "not JSON"
    assert all(got["x"].owns.patterns(k) == two.owns.patterns(k) for k, _ in OWNED_KINDS)


def test_an_owner_topic_not_shaped_as_kgitops_is_named_as_such(two: Two) -> None:
    """The owner topic is kgitops' own (never unmanaged) only when compacted; another
    program's topic of that name is an UNMANAGED_TOPIC warning saying what it is."""
    from kgitops.cluster.port import ConfigChange, NewTopic
    from kgitops.cluster.simulated import SimulatedCluster

    a = two.folder("a", "", "payments.orders")
    sim = SimulatedCluster.open(str(two.state), THREE_RACKS)
    name = "_kgitops-owners"
    assert sim.create_topics([NewTopic(name, {0: (0,)}, {"cleanup.policy": "delete"})]) == {
        name: None
    }
    code, out, _ = two.run("plan", str(a))
    assert code == 0
    line = next(x for x in out.splitlines() if name in x)
    assert "kgitops keeps its owner records in this topic (docs/ownership.md), but it is " in line
    assert "cleanup.policy delete, not compact" in line and "passwordVersionTopic" not in line
    sim.alter_topic_configs({name: ConfigChange(set={"cleanup.policy": "compact"})})
    code, out, _ = two.run("plan", str(a))
    assert code == 0 and name not in out


def test_an_owner_name_with_a_space_or_a_newline_is_refused_by_validate(two: Two) -> None:
    for bad in ("'team b'", '"team\\nb"', "''"):
        a = two.folder("a", f"owns:\n  owner: {bad}\n  topics: ['payments.*']\n")
        code, out, err = two.run("validate", str(a))
        assert code == 1 and f"{a}/cluster.yaml:8:10: error:" in out + err, out + err


def test_two_folders_of_one_repository_are_two_owners_named_by_origin_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In one checkout (origin git@github.com:acme/platform.git) the folders' records are
    ``github.com/acme/platform topics/payments`` and ``... topics/shipping``; a claim that
    grows over the other's is refused by plan (validate finds it in the files too)."""
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        ["git", "-C", str(root), "remote", "add", "origin", "git@github.com:acme/platform.git"],
        check=True,
    )
    two = Two(root / "topics", capsys)
    pay = two.folder("payments", A_OWNS, "payments.orders")
    ship = two.folder("shipping", "owns:\n  topics: ['shipping.*']\n", "shipping.parcels")
    for folder in (pay, ship):
        code, out, err = two.run("apply", str(folder), "--yes")
        assert code == 0, out + err
    assert set(two.records()) == {
        "github.com/acme/platform topics/payments",
        "github.com/acme/platform topics/shipping",
    }
    two.folder("shipping", "owns:\n  topics: ['shipping.*', 'payments.refunds']\n")
    code, out, err = two.run("plan", str(ship))
    assert code == 1
    assert (
        'owns of "github.com/acme/platform topics/shipping" overlaps what '
        '"github.com/acme/platform topics/payments" owns on this cluster' in err
    )
    code, out, err = two.run("validate", str(ship))
    assert code == 1 and "both point at the same cluster and can own topics" in out + err
    assert "shipping.parcels" in two.data()["topics"]  # nothing of either changed


# --------------------------------------------------------------------- review findings


def test_a_second_folder_with_the_same_owner_name_is_refused_unless_it_takes_over(
    two: Two,
) -> None:
    """Two folders given one ``owns.owner`` would replace each other's record: the second
    is refused in one line naming both folders, until ``--take-over-owner``."""
    a = two.folder("a", "owns:\n  owner: team-a\n  topics: ['payments.*']\n", "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    orders = json.dumps(two.data()["topics"]["payments.orders"], sort_keys=True)
    b = two.folder("b", "owns:\n  owner: team-a\n  topics: ['*']\n", "other.topic")
    before = two.state.read_text()
    for command in (["plan", str(b)], ["apply", str(b), "--yes"]):
        code, out, err = two.run(*command)
        assert code == 1, out + err
        lines = [line for line in (out + err).splitlines() if line.strip()]
        assert lines == [
            f'{b}/cluster.yaml:8:3: error: the owner "team-a" is recorded on this cluster '
            f"(topic _kgitops-owners) from {json.dumps(str(a))}, not from this folder "
            f"({json.dumps(str(b))}): give this folder another owns.owner, or pass "
            "--take-over-owner if it now stands for that owner (its apply replaces the record)"
        ]
    assert two.state.read_text() == before  # nothing of a's changed, its record neither
    # the folder moved: b takes the owner over, on purpose
    code, out, err = two.run("plan", str(b), "--take-over-owner")
    assert code == 0, out + err
    code, out, err = two.run("apply", str(b), "--yes", "--take-over-owner")
    assert code == 0, out + err
    assert two.records()["team-a"]["from"] == str(b)
    assert json.dumps(two.data()["topics"]["payments.orders"], sort_keys=True) == orders
    # and now a is the other folder
    assert two.run("plan", str(a))[0] == 1


def test_a_folder_without_owns_is_refused_a_name_another_owner_records(two: Two) -> None:
    """A folder without ``owns:`` owns everything but what another owner's record claims:
    it may not declare, change or delete it (its plan reads the records too)."""
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    c = two.folder("c", "", "payments.orders", "c.events")
    (c / "t-payments.orders.yaml").write_text(
        topic_yaml("payments.orders").replace("partitions: 2", "partitions: 4")
    )
    before = two.state.read_text()
    for command in (["plan", str(c)], ["apply", str(c), "--yes"]):
        code, out, err = two.run(*command)
        assert code == 1, out + err
        lines = [line for line in (out + err).splitlines() if line.strip()]
        assert lines == [
            f"{c}/cluster.yaml:1:1: error: this folder has no owns: (it owns everything), but "
            f"topic payments.orders of its plan is owned by {json.dumps(str(a))} (its record "
            "in topic _kgitops-owners); give this folder an owns: without it, give each name "
            "one owner (ask that owner to give it up), or, only when that owner's folder no "
            "longer exists, release its record (kgitops owners DIR --release OWNER)"
        ]
    assert two.state.read_text() == before
    # without that topic, c plans and applies its own
    (c / "t-payments.orders.yaml").unlink()
    code, out, err = two.run("apply", str(c), "--yes")
    assert code == 0, out + err
    assert "c.events" in two.data()["topics"]
    assert len(two.data()["topics"]["payments.orders"]["partitions"]) == 2


def test_a_saved_plan_of_a_folder_without_owns_is_refused_by_apply(two: Two) -> None:
    """A plan saved before another owner recorded a topic of it is refused by apply."""
    c = two.folder("c", "", "payments.orders")
    saved = two.base / "c.plan.json"
    code, out, err = two.run("plan", str(c), "--out", str(saved))
    assert code == 0, out + err
    a = two.folder("a", A_OWNS)
    assert two.run("apply", str(a), "--yes")[0] == 0
    before = two.data()["topics"]
    code, out, err = two.run("apply", "--plan", str(saved), "--yes")
    assert code == 1 and "topic payments.orders of its plan is owned by" in err, out + err
    assert two.data()["topics"] == before and "payments.orders" not in before


@pytest.mark.parametrize(
    "url", ["https://user:p/SECRET@host.example/a", "https://host.example/a/SECRET@b"]
)
def test_a_remote_that_may_still_hide_a_credential_is_refused_naming_none_of_it(
    two: Two, url: str
) -> None:
    root = two.base / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", url], check=True)
    inner = Two(root / "topics", two.capsys)
    folder = inner.folder("a", A_OWNS, "payments.orders")
    for command in (["plan", str(folder)], ["apply", str(folder), "--yes"]):
        code, out, err = two.run(*command)
        assert code == 1
        lines = [line for line in (out + err).splitlines() if line.strip()]
        assert len(lines) == 1 and "still holds '@', '?' or '#'" in lines[0], lines
        assert "SECRET" not in out + err
    assert not inner.state.exists() or "SECRET" not in inner.state.read_text()


def _race(monkeypatch: pytest.MonkeyPatch, other: str, first: bool) -> None:
    """Between a's check and a's write, another apply records ``other`` (overlapping):
    before a's record (``first``) or just after it."""
    from kgitops.cluster.simulated import SimulatedCluster

    real = SimulatedCluster.record_owners
    done: list[bool] = []

    def racing(self: SimulatedCluster, records: Any) -> None:
        rival = OwnerRecord(
            Owns(("payments.refunds",), (), (), (), declared=True), f"rival {other}"
        )
        if not done and first:
            real(self, {other: rival})
        real(self, records)
        if not done and not first:
            real(self, {other: rival})
        done.append(True)

    monkeypatch.setattr(SimulatedCluster, "record_owners", racing)


def test_two_applies_at_once_the_later_record_gives_way_and_changes_nothing(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    _race(monkeypatch, "rival", first=True)
    code, out, err = two.run("apply", str(a), "--yes")
    assert code == 1, out + err
    assert (
        f'while this apply recorded what {json.dumps(str(a))} owns, "rival" (rival rival) '
        "recorded an overlapping claim first" in err
    )
    assert set(two.records()) == {"rival"}  # a's record taken back
    assert "payments.orders" not in two.data()["topics"]


def test_two_applies_at_once_the_earlier_record_goes_ahead(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = two.folder("a", A_OWNS, "payments.orders")
    _race(monkeypatch, "rival", first=False)
    code, out, err = two.run("apply", str(a), "--yes")
    assert code == 0, out + err
    assert set(two.records()) == {"rival", str(a)}
    assert two.records()[str(a)]["offset"] < two.records()["rival"]["offset"]
    assert "payments.orders" in two.data()["topics"]


def test_a_racing_apply_puts_back_the_record_it_had(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = two.folder("a", "owns:\n  topics: ['payments.orders']\n", "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    old = two.records()[str(a)]
    a = two.folder("a", A_OWNS, "payments.orders", "payments.refunds")
    _race(monkeypatch, "rival", first=True)
    code, out, err = two.run("apply", str(a), "--yes")
    assert code == 1, out + err
    assert two.records()[str(a)]["owns"] == old["owns"]
    assert "payments.refunds" not in two.data()["topics"]


def test_a_spec_or_import_of_the_owner_topic_is_told_what_the_topic_is(two: Two) -> None:
    from kgitops.cluster.port import NewTopic
    from kgitops.cluster.simulated import SimulatedCluster

    a = two.folder("a", "", "_kgitops-owners")
    code, out, err = two.run("validate", str(a))
    assert code == 1
    assert (
        "_kgitops-owners is the topic kgitops keeps its owner records in (docs/ownership.md); "
        "kgitops creates and keeps it, a spec may not manage it" in out + err
    )
    assert "passwordVersion" not in out + err
    a = two.folder("a", "")
    sim = SimulatedCluster.open(str(two.state), THREE_RACKS)
    name = "_kgitops-owners"
    sim.create_topics([NewTopic(name, {0: (0,)}, {"cleanup.policy": "compact"})])
    code, out, err = two.run("import", str(a), "--topic", name)
    assert code == 1
    assert err.strip() == (
        "error: _kgitops-owners is the topic kgitops keeps its owner records in "
        "(docs/ownership.md); it is never imported"
    )
    assert not (a / f"{name}.yaml").exists()


def test_a_folder_without_owns_that_may_not_read_the_records_goes_on_with_a_note(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a folder with ``owns:`` depends on the records: one without, whose principal
    may not read them, plans and applies as before they existed, and says so."""
    from kgitops.cluster.simulated import SimulatedCluster
    from kgitops.errors import ClusterAuthError

    def refused(self: SimulatedCluster) -> Any:
        raise ClusterAuthError("cannot read the owner records (topic _kgitops-owners): denied")

    monkeypatch.setattr(SimulatedCluster, "read_owners", refused)
    c = two.folder("c", "", "c.events")
    code, out, err = two.run("apply", str(c), "--yes")
    assert code == 0, out + err
    assert "c.events" in two.data()["topics"]
    assert (
        "note: cannot read the owner records (topic _kgitops-owners): denied; this folder "
        "has no owns:, so it goes on unchecked against what other folders own" in err
    )
    a = two.folder("a", A_OWNS, "payments.orders")
    code, out, err = two.run("plan", str(a))
    assert code == 1 and "denied" in err  # a folder with owns: depends on them


def test_a_folder_that_dropped_owns_is_not_stopped_by_its_own_old_record(two: Two) -> None:
    a = two.folder("a", "owns:\n  owner: team-a\n  topics: ['payments.*']\n", "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    a = two.folder("a", "", "payments.orders", "payments.refunds")
    code, out, err = two.run("apply", str(a), "--yes")
    assert code == 0, out + err
    assert "payments.refunds" in two.data()["topics"]


def test_a_released_team_that_still_exists_is_refused_once_the_releaser_claims_its_names(
    two: Two,
) -> None:
    """What docs/ownership.md says of releasing another team's record: nothing of theirs
    changes, but once the releaser records an overlapping claim, their plan is refused."""
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    orders = two.data()["topics"]["payments.orders"]
    b = two.folder("b", "owns:\n  topics: ['payments.refunds']\n", "payments.refunds")
    assert two.run("owners", str(b), "--release", str(a))[0] == 0
    assert two.data()["topics"]["payments.orders"] == orders
    assert two.run("apply", str(b), "--yes")[0] == 0
    code, _, err = two.run("plan", str(a))
    assert code == 1 and f"overlaps what {json.dumps(str(b))} owns" in err


def test_a_drain_of_a_folder_without_owns_still_moves_every_replica(two: Two) -> None:
    """A drain moves every replica off its brokers, another owner's too, as ever."""
    a = two.folder("a", A_OWNS, "payments.orders")
    assert two.run("apply", str(a), "--yes")[0] == 0
    c = two.folder("c", "", "c.events")
    assert two.run("apply", str(c), "--yes")[0] == 0
    for name in ("payments.orders", "c.events"):
        parts = two.data()["topics"][name]["partitions"].values()
        assert any(2 in p["replicas"] for p in parts), parts
    c = two.folder("c", "decommission: [2]\n", "c.events")
    code, out, err = two.run("apply", str(c), "--yes")
    assert code == 0, out + err
    for name in ("payments.orders", "c.events"):
        parts = two.data()["topics"][name]["partitions"].values()
        assert all(2 not in p["replicas"] for p in parts), parts
