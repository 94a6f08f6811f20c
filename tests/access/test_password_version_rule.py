"""Which passwordVersion a live credential counts as, and what apply's read-back checks: one
rule for every adapter (the simulated cluster's credentials without a version follow it too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgitops.access import AccessSpecs, AccessState, ScramCredential, UserSpec
from kgitops.apply.access import access_differences
from kgitops.cli import main
from kgitops.model import Broker
from kgitops.plan.access_actions import upsert_user
from kgitops.plan.access_diff import access_actions
from tests.helpers import cluster_folder

MECH = "SCRAM-SHA-512"


def _plan(live: ScramCredential, version: int) -> tuple[list[str], list[str]]:
    desired = AccessSpecs(users=(UserSpec("a", MECH, "A_PW", 8192, version),), used=True)
    actions, warnings = access_actions(desired, AccessState(users={("a", MECH): live}))
    return [a.reason for a in actions], [w.code for w in warnings]  # type: ignore[attr-defined]


@given(st.integers(1, 10), st.integers(1, 10))
def test_a_recorded_version_rotates_exactly_when_the_spec_is_above_it(have: int, want: int) -> None:
    reasons, warnings = _plan(ScramCredential("a", MECH, 8192, password_version=have), want)
    assert reasons == ([f"passwordVersion {have} -> {want}"] if want > have else [])
    assert warnings == (["PASSWORD_VERSION_BEHIND"] if want < have else [])


@given(st.integers(1, 10))
def test_a_credential_without_a_record_counts_as_version_1(want: int) -> None:
    cred = ScramCredential("a", MECH, 8192, version_note="no record in t")
    reasons, warnings = _plan(cred, want)
    assert reasons == ([f"passwordVersion 1 (no record in t) -> {want}"] if want > 1 else [])
    assert warnings == []


def test_other_iterations_rotate_whatever_the_version_says() -> None:
    cred = ScramCredential("a", MECH, 4096, password_version=9)
    assert _plan(cred, 1) == (["iterations 4096 -> 8192"], [])


def test_the_note_is_neither_json_nor_equality_nor_the_digest() -> None:
    a = ScramCredential("a", MECH, 8192, version_note="no record in t")
    b = ScramCredential("a", MECH, 8192)
    assert a == b and a.to_json() == b.to_json()
    assert (
        AccessState(users={("a", MECH): a}).digest() == AccessState(users={("a", MECH): b}).digest()
    )


def test_apply_reads_back_the_version_it_recorded() -> None:
    action = upsert_user("a", MECH, 8192, "A_PW", 3, "passwordVersion 2 -> 3")

    def live(**kw: object) -> AccessState:
        return AccessState(users={("a", MECH): ScramCredential("a", MECH, 8192, **kw)})  # type: ignore[arg-type]

    assert access_differences(action, live(password_version=3)) == []
    assert access_differences(action, live(password_version=2)) == [
        "the cluster records passwordVersion 2, the plan wrote 3"
    ]
    assert access_differences(action, live(version_note="no record in t")) == [
        "the cluster has no passwordVersion for it (no record in t), the plan wrote 3"
    ]


def test_a_dry_run_shows_the_version_that_would_be_recorded_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("A_PW", "s3cret-pw")
    user = "apiVersion: kgitops/v1\nkind: User\nname: a\nmechanism: SCRAM-SHA-512\n"
    user += "passwordEnv: A_PW\npasswordVersion: {}\n"
    cluster_folder(tmp_path, brokers=[Broker(0)], files={"users.yaml": user.format(1)})
    assert main(["apply", str(tmp_path), "--yes"]) == 0
    (tmp_path / "users.yaml").write_text(user.format(2))
    capsys.readouterr()
    assert main(["apply", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if x.startswith("AlterUserScramCredentials ")]
    assert json.loads(line.split(" ", 1)[1]) == [
        {"iterations": 8192, "mechanism": MECH, "name": "a", "passwordVersion": 2}
    ]
    assert "s3cret-pw" not in out
    state = json.loads((tmp_path / ".state" / "demo.json").read_text())
    assert [u["passwordVersion"] for u in state["access"]["users"]] == [1]
