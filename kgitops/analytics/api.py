"""The key analysis as a library call: what the planner uses for its KEY_REMAP warnings.

``key_report(sample, column, counts)`` returns the kgitops-keys/v1 report, running Spark only
when the answer is not cached. The cache key is the SHA-256 of the sample's bytes (every
data file of a folder, in path order) together with the column names, the counts and the
kgitops version, so an unchanged sample is never analysed twice and a changed one always is::

    ~/.cache/kgitops/keys/<sha256>.json

A sample on a remote file system (``hdfs://``, ``s3a://``) is analysed every time. Every
failure is an ``AnalyticsError`` with a message saying what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgitops import __version__
from kgitops.analytics import javaudf
from kgitops.errors import AnalyticsError

_CHUNK = 1 << 20


def _sample_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def sample_digest(sample: str) -> str | None:
    """SHA-256 over the content (and relative names) of a local sample; None for a URI."""
    if "://" in sample and not sample.startswith("file://"):
        return None
    path = Path(sample.removeprefix("file://"))
    if not path.exists():
        raise AnalyticsError(f"{sample}: no such file or directory")
    digest = hashlib.sha256()
    try:
        for file in _sample_files(path):
            digest.update(file.relative_to(path).as_posix().encode() if path.is_dir() else b"")
            digest.update(b"\0")
            with file.open("rb") as fh:
                while chunk := fh.read(_CHUNK):
                    digest.update(chunk)
    except OSError as exc:
        raise AnalyticsError(f"{sample}: cannot read the key sample: {exc.strerror}") from exc
    return digest.hexdigest()


def _cache_file(
    digest: str, column: str, counts: Sequence[int], size_column: str | None, folder: Path
) -> Path:
    key = json.dumps(
        [digest, column, list(counts), size_column, __version__], separators=(",", ":")
    )
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def key_report(
    sample: str,
    column: str,
    counts: Sequence[int],
    *,
    size_column: str | None = None,
    cache_dir: str | None = None,
    master: str | None = None,
) -> dict[str, Any]:
    """The kgitops-keys/v1 report of ``sample`` for ``counts`` (the first is the current
    count: every move is measured from it). Cached by the sample's content hash."""
    from kgitops.analytics.job import JobSpec, analyze, job_metadata
    from kgitops.analytics.report import ReportInput, build_report

    if not counts:
        raise AnalyticsError("key_report needs at least one partition count")
    digest = sample_digest(sample)
    folder = Path(cache_dir) if cache_dir else javaudf.cache_root() / "keys"
    cached = (
        _cache_file(digest, column, counts, size_column, folder) if digest is not None else None
    )
    if cached is not None and cached.is_file():
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(cached.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == "kgitops-keys/v1":
                return data
    spec = JobSpec(
        input=sample,
        counts=tuple(counts),
        key_column=column,
        size_column=size_column,
        base=counts[0],
    )
    result = analyze(spec, master=master or os.environ.get("KGITOPS_SPARK_MASTER"))
    report = build_report(
        ReportInput(
            counts=tuple(dict.fromkeys(counts)),
            base=counts[0],
            rows=result.rows,
            hot=result.hot,
            sizes=result.sizes,
            meta=job_metadata(spec, result),
        )
    )
    if cached is not None:
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(report, sort_keys=True), encoding="utf-8")
            os.replace(tmp, cached)
    return report
