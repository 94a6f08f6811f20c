"""The pull-request comment loop: rendering a 5,000-topic plan and keeping one comment.

Renders the markdown of a 5,000-topic plan and composes the comment body (marker, cut to
GitHub's 65,536 characters); then, against the local fake of GitHub's comments API (the one
the tests use, on 127.0.0.1), times ``upsert_comment`` on a pull request with 10 and with
1,000 other comments (100 per page), counting the requests, and a re-run with the same plan
(no write). Prints the figures and the ratios measured in this run.

    python3 benchmarks/github_comment.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "github"))

from fake_github import TOKEN, FakeGitHub  # noqa: E402
from test_large_plan import big_plan  # noqa: E402

from kgitops.integrations.github.body import compose_body  # noqa: E402
from kgitops.integrations.github.client import GitHubClient  # noqa: E402
from kgitops.integrations.github.upsert import upsert_comment  # noqa: E402
from kgitops.render.markdown import render_markdown  # noqa: E402


def timed_upsert(others: int, text: str) -> tuple[float, int, float, int]:
    fake = FakeGitHub(page_size=100)
    fake.start()
    try:
        for i in range(others):
            fake.add_comment("acme/topics", 42, f"review comment {i}")
        client = GitHubClient(TOKEN, fake.url)
        upsert_comment(client, "acme/topics", 42, text, marker="plan-prod")
        fake.requests.clear()
        started = time.perf_counter()
        upsert_comment(client, "acme/topics", 42, text + "\nchanged", marker="plan-prod")
        update_s, update_n = time.perf_counter() - started, len(fake.requests)
        fake.requests.clear()
        started = time.perf_counter()
        upsert_comment(client, "acme/topics", 42, text + "\nchanged", marker="plan-prod")
        return update_s, update_n, time.perf_counter() - started, len(fake.requests)
    finally:
        fake.stop()


def main() -> None:
    plan = big_plan()
    started = time.perf_counter()
    md = render_markdown(plan.to_json())
    render_s = time.perf_counter() - started
    started = time.perf_counter()
    body = compose_body(md * 20, "plan-prod", artifact_url="https://example.invalid/a")
    compose_s = time.perf_counter() - started
    print(f"render_markdown, 5,000 topics: {render_s * 1000:.0f} ms, {len(md):,} characters")
    print(
        f"compose_body, {len(md) * 20:,} characters cut to {len(body.text):,}: "
        f"{compose_s * 1000:.1f} ms"
    )
    timed_upsert(10, md)  # warm up (imports, first connections)
    small = timed_upsert(10, md)
    large = timed_upsert(1000, md)
    for label, (upd_s, upd_n, same_s, same_n) in (("10", small), ("1,000", large)):
        print(
            f"PR with {label} comments: update {upd_n} requests {upd_s * 1000:.0f} ms; "
            f"unchanged re-run {same_n} requests {same_s * 1000:.0f} ms"
        )
    print(
        f"ratio 1,000 vs 10 comments: {large[0] / small[0]:.1f}x time, "
        f"{large[1] / small[1]:.1f}x requests"
    )


if __name__ == "__main__":
    main()
