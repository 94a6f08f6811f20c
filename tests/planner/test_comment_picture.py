"""scripts/render_comment.py: the comment drawn as GitHub draws it, and how tall it is.

The HTML is checked everywhere; the height only where Debian's Chromium is installed (the
script needs it; nothing is downloaded): the review plan's comment, every block closed, must
stay well under the 4,193 px the comment with three mermaid charts measured.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from kgitops.render.markdown import render_markdown

ROOT = Path(__file__).resolve().parent.parent.parent
PLAN = ROOT / "tests" / "golden" / "review-comment" / "plan.json"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "render_comment", ROOT / "scripts" / "render_comment.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown() -> str:
    return render_markdown(json.loads(PLAN.read_text()))


def test_the_page_draws_alerts_coloured_diffs_and_opens_only_what_is_asked() -> None:
    page = _script().page(_markdown(), mermaid=None, opened=["<b>shop.orders</b>"])
    assert '<div class="alert alert-caution">' in page and "[!WARNING]" not in page
    assert '<span class="d-del">- compression.type = zstd</span>' in page
    assert '<span class="d-add">+ compression.type = lz4</span>' in page
    assert '<span class="d-hunk">@@ alter_config @@</span>' in page
    assert page.count("<details open>") == 1
    assert "<details open><summary><code>~</code> <b>shop.orders</b>" in page


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium not installed")
def test_the_review_comment_is_under_half_the_height_it_had_with_charts() -> None:
    height = _script().height_of(_markdown())
    assert 1000 < height < 2100, height
