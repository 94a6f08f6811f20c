"""cluster.yaml ``include:`` (shared topic folders, inside the repository only) and
``overrides:`` (per-cluster differences by name or glob), positioned where each value is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgitops.spec.load import load_specs
from tests.helpers import THREE_RACKS, cluster_folder

TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: {name}
partitions: 6
replicationFactor: 3
config:
  retention.ms: 14d
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "topics" / "shared").mkdir(parents=True)
    (tmp_path / "topics" / "shared" / "a.yaml").write_text(TOPIC.format(name="pay.a"))
    (tmp_path / "topics" / "shared" / "b.yaml").write_text(TOPIC.format(name="pay.b"))
    return tmp_path


def cluster(repo: Path, name: str, extra: str) -> str:
    folder = repo / "topics" / name
    return str(
        cluster_folder(folder, name, brokers=THREE_RACKS, state_file=".state/x.json", extra=extra)
    )


def errors(directory: str) -> list[str]:
    return [str(d) for d in load_specs(directory).diagnostics]


def test_two_clusters_share_one_folder_with_their_own_overrides(repo: Path) -> None:
    prod = cluster(repo, "prod", "include: [../shared]\n")
    staging = cluster(
        repo,
        "staging",
        "include: [../shared]\noverrides:\n  'pay.*':\n    config: {retention.ms: 2d}\n"
        "  pay.a:\n    partitions: 12\n",
    )
    p, s = load_specs(prod), load_specs(staging)
    assert p.errors == [] and s.errors == []
    assert [(t.name, t.partitions, t.config["retention.ms"]) for t in p.topics] == [
        ("pay.a", 6, str(14 * 86_400_000)),
        ("pay.b", 6, str(14 * 86_400_000)),
    ]
    assert [(t.name, t.partitions, t.config["retention.ms"]) for t in s.topics] == [
        ("pay.a", 12, str(2 * 86_400_000)),
        ("pay.b", 6, str(2 * 86_400_000)),
    ]
    a = s.topic("pay.a")
    assert a is not None
    shared = os.path.join(staging, "..", "shared", "a.yaml")
    assert a.mark.path == os.path.normpath(shared)
    assert str(a.mark_of("partitions")) == f"{staging}/cluster.yaml:12:17"
    assert str(a.mark_of("config.retention.ms")) == f"{staging}/cluster.yaml:10:28"
    assert a.origins["partitions"] == "override pay.a"
    assert a.origins["config.retention.ms"] == "override pay.*"


def test_a_topic_defined_in_two_places_names_both(repo: Path) -> None:
    (repo / "topics" / "more").mkdir()
    (repo / "topics" / "more" / "a.yaml").write_text(TOPIC.format(name="pay.a"))
    d = cluster(repo, "prod", "include: [../shared, ../more]\n")
    found = [e for e in errors(d) if "defined twice" in e]
    more = os.path.normpath(f"{d}/../more/a.yaml")
    shared = os.path.normpath(f"{d}/../shared/a.yaml")
    assert found == [f"{shared}:3:7: error: topic 'pay.a' is defined twice (first at {more}:3:7)"]


def test_a_folder_included_twice_is_one_error_at_the_second_entry(repo: Path) -> None:
    """Listed twice (or once inside another listed one), a folder would be read twice and
    every topic in it reported as defined twice: one error names the entry instead."""
    (repo / "topics" / "shared" / "sub").mkdir()
    (repo / "topics" / "shared" / "sub" / "c.yaml").write_text(TOPIC.format(name="pay.c"))
    d = cluster(repo, "prod", "include: [../shared, ../shared/, ./../shared/sub]\n")
    assert errors(d) == [
        f"{d}/cluster.yaml:7:22: error: '../shared/' is already included ('../shared' at "
        f"{d}/cluster.yaml:7:11); list each folder once",
        f"{d}/cluster.yaml:7:34: error: './../shared/sub' overlaps '../shared' at "
        f"{d}/cluster.yaml:7:11: the files of one are read by the other",
    ]
    assert [t.name for t in load_specs(d).topics] == ["pay.a", "pay.b", "pay.c"]


@pytest.mark.parametrize(
    ("include", "problem"),
    [
        ("../../..", "leads outside the repository"),
        ("/etc", "give a folder relative to the cluster folder"),
        ("../nope", "is not a folder"),
        (".", "is inside the cluster folder"),
        ("~", "'~': give a folder relative to the cluster folder ('~' is not expanded)"),
        ("~/topics", "'~/topics': give a folder relative to the cluster folder ('~' is not"),
        ("missing", "'missing' is not a folder"),
        ("../prod2", "is a cluster folder"),
    ],
)
def test_an_include_stays_inside_the_repository_and_is_a_topic_folder(
    repo: Path, include: str, problem: str
) -> None:
    cluster(repo, "prod2", "")
    d = cluster(repo, "prod", f"include: [{include!r}]\n")
    found = [e for e in errors(d) if ": error: " in e]
    assert len(found) == 1 and found[0].startswith(f"{d}/cluster.yaml:7:11: error: ")
    assert problem in found[0]


def test_a_symlink_out_of_the_repository_is_refused(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "x.yaml").write_text(TOPIC.format(name="evil"))
    os.symlink(outside, repo / "topics" / "link")
    d = cluster(repo, "prod", "include: [../link]\n")
    assert [e for e in errors(d) if "leads outside the repository" in e]
    assert load_specs(d).topic("evil") is None


def test_an_included_folder_holds_topics_only(repo: Path) -> None:
    (repo / "topics" / "shared" / "acl.yaml").write_text(
        "apiVersion: kgitops/v1\nkind: Cluster\nname: x\n"
    )
    d = cluster(repo, "prod", "include: [../shared]\n")
    assert any("holds Topic documents only, not Cluster" in e for e in errors(d))


def test_a_bad_override_value_is_reported_in_cluster_yaml_and_an_unused_one_warns(
    repo: Path,
) -> None:
    d = cluster(
        repo,
        "prod",
        "include: [../shared]\noverrides:\n  pay.a: {config: {retention.ms: 2x}}\n"
        "  nothing.*: {partitions: 3}\n",
    )
    found = errors(d)
    assert any(e.startswith(f"{d}/cluster.yaml:9:34: error: retention.ms must be") for e in found)
    assert (
        f"{d}/cluster.yaml:10:3: warning: override 'nothing.*' matches no topic of this cluster"
        in found
    )
