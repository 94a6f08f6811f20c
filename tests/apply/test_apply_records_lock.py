"""The lock follows the flow (docs/lock.md): ``kgitops apply`` records in kgitops.lock what
``plan --update-lock`` would have written for the plan it runs (the start index of each topic
it creates), so ``plan --locked`` holds after the README's own flow and after
docs/adopting.md's recipe; ``plan`` says so in one line when the lock is missing or stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kgitops.spec.lock import read_lock
from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _demo(where: Path) -> Path:
    shutil.copytree(
        ROOT / "topics" / "demo", where, ignore=shutil.ignore_patterns(".state", "kgitops.lock")
    )
    assert not (where / "kgitops.lock").exists()
    return where


def test_apply_dir_records_the_lock_plan_update_lock_would_write(tmp_path: Path) -> None:
    applied = _demo(tmp_path / "applied")
    code, _, err = run_cli("apply", str(applied), "--yes")
    assert code == 0, err
    assert f"recorded 5 lock entries in {applied}/kgitops.lock: commit it" in err.splitlines()
    # the same folder and cluster state, the documented way: plan --update-lock first
    planned = _demo(tmp_path / "planned")
    assert run_cli("plan", str(planned), "--update-lock")[0] == 0
    assert (applied / "kgitops.lock").read_text() == (planned / "kgitops.lock").read_text()
    lock = read_lock(str(applied))
    assert lock is not None
    entries = {
        name: (e.placement, e.start_index, e.partitions, e.replication_factor)
        for name, e in lock.entries.items()
    }
    state = json.loads((applied / ".state" / "demo.json").read_text())
    assert sorted(entries) == sorted(state["topics"])  # every topic apply created
    assert entries["payments.transactions"] == ("rack-aware", 1, 24, 3)  # startIndex: 1 pinned
    assert entries["payments.audit"] == ("static", None, 3, 3)
    assert all(
        p == "rack-aware" and i is not None for p, i, _, _ in entries.values() if p != "static"
    )
    code, out, err = run_cli("plan", str(applied), "--locked")
    assert (code, err) == (0, "")
    assert "No changes" in out


def test_a_dry_run_records_nothing(tmp_path: Path) -> None:
    demo = _demo(tmp_path / "demo")
    assert run_cli("apply", str(demo), "--dry-run")[0] == 0
    assert not (demo / "kgitops.lock").exists()
    assert not (demo / ".state" / "demo.json").exists() or not json.loads(
        (demo / ".state" / "demo.json").read_text()
    ).get("topics")


def test_an_apply_with_nothing_to_change_still_records_a_missing_lock(tmp_path: Path) -> None:
    demo = _demo(tmp_path / "demo")
    assert run_cli("apply", str(demo), "--yes")[0] == 0
    (demo / "kgitops.lock").unlink()  # as an apply of an older kgitops left it
    code, out, err = run_cli("apply", str(demo), "--yes")
    assert code == 0 and "No changes" in out
    recorded = (demo / "kgitops.lock").read_text()
    assert run_cli("plan", str(demo), "--locked")[0] == 0
    assert run_cli("plan", str(demo), "--update-lock")[2] == ""  # nothing to add
    assert (demo / "kgitops.lock").read_text() == recorded
    code, _, err = run_cli("apply", str(demo), "--yes")  # up to date: not rewritten
    assert code == 0 and "lock" not in err


def test_apply_plan_records_the_lock_of_the_reviewed_plan(tmp_path: Path) -> None:
    demo = _demo(tmp_path / "demo")
    plan = tmp_path / "plan.json"
    assert run_cli("plan", str(demo), "--out", str(plan))[0] == 0
    assert not (demo / "kgitops.lock").exists()  # plan alone writes nothing
    code, _, err = run_cli("apply", "--plan", str(plan), "--yes")
    assert code == 0, err
    assert (demo / "kgitops.lock").exists()
    assert run_cli("plan", str(demo), "--locked")[0] == 0


def test_the_adopting_recipe_ends_with_a_plan_that_holds_locked(tmp_path: Path) -> None:
    """docs/adopting.md "Trying it without a cluster": apply some topics to the demo, delete
    their files, import, and ``plan --locked`` says No changes."""
    demo = _demo(tmp_path / "demo")
    assert run_cli("apply", str(demo), "--yes")[0] == 0
    (demo / "clicks.yaml").unlink()
    (demo / "payments.yaml").unlink()
    code, _, err = run_cli("import", str(demo))
    assert code == 0, err
    code, out, err = run_cli("plan", str(demo), "--locked", "--detailed-exitcode")
    assert (code, err) == (0, "")
    assert "No changes" in out


def test_plan_hints_at_update_lock_when_the_lock_is_missing_or_stale(tmp_path: Path) -> None:
    demo = _demo(tmp_path / "demo")
    hint = (
        f"hint: {demo}/kgitops.lock is missing; `kgitops plan {demo} --update-lock` writes "
        "it (and so does `kgitops apply`); commit the lock, or `plan --locked` fails"
    )
    assert run_cli("plan", str(demo))[2].splitlines() == [hint]
    assert run_cli("plan", str(demo), "--update-lock")[2] == f"wrote {demo}/kgitops.lock\n"
    assert run_cli("plan", str(demo))[2] == ""  # up to date: no hint
    orders = demo / "orders.yaml"
    orders.write_text(orders.read_text().replace("partitions: 12", "partitions: 24"))
    assert run_cli("plan", str(demo))[2].splitlines() == [
        f"hint: {demo}/kgitops.lock does not hold 1 placement choice(s) of this plan; "
        f"`kgitops plan {demo} --update-lock` writes it (and so does `kgitops apply`); "
        "commit the lock, or `plan --locked` fails"
    ]
