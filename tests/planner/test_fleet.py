"""``plan`` and ``apply`` over several cluster folders (or a folder of them): one plan per
cluster, one exit code, one markdown section per cluster; a broken cluster does not stop
the others. Asserted on each cluster's state file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import THREE_RACKS, cluster_folder, run_cli


def topic(name: str, rf: int = 3) -> str:
    return (
        f"apiVersion: kgitops/v1\nkind: Topic\nname: {name}\npartitions: 3\n"
        f"replicationFactor: {rf}\n"
    )


class Fleet:
    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root / "topics"
        self.capsys = capsys
        for name in ("eu", "us"):
            orders = topic(f"{name}.orders")
            cluster_folder(
                self.root / name, name, brokers=THREE_RACKS, files={"orders.yaml": orders}
            )

    def run(self, *argv: str) -> tuple[int, str, str]:
        return run_cli(*argv)

    def live(self, name: str) -> dict[str, Any] | None:
        path = self.root / name / ".state" / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None


@pytest.fixture
def fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Fleet:
    return Fleet(tmp_path, capsys)


def test_a_parent_folder_plans_every_cluster_one_section_each(fleet: Fleet) -> None:
    code, out, err = fleet.run(
        "plan", str(fleet.root), "--format", "markdown", "--detailed-exitcode"
    )
    assert code == 2, out + err
    headers = [line for line in out.splitlines() if line.startswith("### ")]
    assert headers == ["### kgitops plan: `eu`", "### kgitops plan: `us`"]


def test_several_folders_in_json_are_a_list_of_plans(fleet: Fleet) -> None:
    code, out, err = fleet.run(
        "plan", str(fleet.root / "us"), str(fleet.root / "eu"), "--format", "json"
    )
    assert code == 0, err
    plans = json.loads(out)
    assert [p["cluster"] for p in plans] == ["us", "eu"]
    assert [p["actions"][0]["topic"] for p in plans] == ["us.orders", "eu.orders"]


def test_a_broken_cluster_fails_the_fleet_but_not_the_others(fleet: Fleet) -> None:
    (fleet.root / "eu" / "orders.yaml").write_text(topic("eu.orders", rf=0))
    code, out, err = fleet.run("plan", str(fleet.root), "--format", "markdown")
    assert code == 1
    assert "### kgitops plan: `eu`: the plan failed" in out
    assert "### kgitops plan: `us`" in out and "us.orders" in out
    assert "eu/orders.yaml:5:20: error:" in err
    code, out, err = fleet.run("apply", str(fleet.root), "--yes")
    assert code == 1
    assert fleet.live("eu") is None or fleet.live("eu")["topics"] == {}  # type: ignore[index]
    us = fleet.live("us")
    assert us is not None and set(us["topics"]) == {"us.orders"}


def test_apply_of_a_fleet_applies_each_cluster(fleet: Fleet) -> None:
    code, out, err = fleet.run("apply", str(fleet.root / "eu"), str(fleet.root / "us"), "--yes")
    assert code == 0, out + err
    for name in ("eu", "us"):
        live = fleet.live(name)
        assert live is not None and set(live["topics"]) == {f"{name}.orders"}
    code, out, err = fleet.run("plan", str(fleet.root), "--detailed-exitcode")
    assert code == 0, out + err
    assert out.count("No changes.") == 2


def test_out_with_several_clusters_is_refused_before_any_work(fleet: Fleet) -> None:
    plan = fleet.root.parent / "plan.json"
    code, _, err = fleet.run("plan", str(fleet.root), "--out", str(plan))
    assert code == 1 and "--out saves the plan of one cluster" in err
    assert not plan.exists()
    assert fleet.live("eu") is None and fleet.live("us") is None
