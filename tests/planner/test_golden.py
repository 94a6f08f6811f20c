"""Golden plans: each tests/golden/<case>/ holds specs, a live state and the exact plan.

``KGITOPS_UPDATE_GOLDEN=1`` rewrites plan.json and plan.md; review them by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import kgitops
import kgitops.errors
from kgitops.cli import main
from kgitops.cluster.snapshot import read_state
from kgitops.plan.value import Plan
from kgitops.render.markdown import render_markdown

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "topics").is_dir())
UPDATE = os.environ.get("KGITOPS_UPDATE_GOLDEN") == "1"
_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((Path(kgitops.__file__).parent / "schemas" / "plan.json").read_text())
)


def _options(case: Path) -> dict[str, Any]:
    f = case / "case.json"
    return json.loads(f.read_text()) if f.exists() else {}


def _plan(case: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["plan", "topics", "--state", "state.json", "--format", "json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.mark.parametrize("name", CASES)
def test_golden_plan(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = GOLDEN / name
    monkeypatch.chdir(case)
    options = _options(case)
    data = _plan(case, list(options.get("args", [])), capsys)
    markdown = render_markdown(data)
    if UPDATE:
        (case / "plan.json").write_text(json.dumps(data, indent=1) + "\n")
        (case / "plan.md").write_text(markdown)
    assert data == json.loads((case / "plan.json").read_text())
    assert markdown == (case / "plan.md").read_text()
    assert Plan.from_json(data).to_json() == data
    errors = list(_SCHEMA.iter_errors(data))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]

    for check in options.get("safety", []):
        plan = Plan.from_json(data)
        state = read_state("state.json")
        if check["raises"] is None:
            plan.raise_if_unsafe(allow_delete=check["allowDelete"], state=state)
        else:
            error = getattr(kgitops.errors, check["raises"])
            with pytest.raises(error):
                plan.raise_if_unsafe(allow_delete=check["allowDelete"], state=state)

    locked = options.get("locked")
    if locked is not None:
        code = main(["plan", "topics", "--state", "state.json", "--locked"])
        _, err = capsys.readouterr()
        assert code == locked["exitCode"]
        assert locked["stderr"] in err
        assert "Traceback" not in err


def test_every_golden_case_has_its_expected_files() -> None:
    for name in CASES:
        for f in ("state.json", "plan.json", "plan.md"):
            assert (GOLDEN / name / f).exists(), f"{name}/{f}"
