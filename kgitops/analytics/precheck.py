"""The key sample's columns, checked before Spark starts (a JVM and a session take tens of
seconds to say that a column is missing; the file's own header says it at once).

Only the names are checked here, from a Parquet footer (pyarrow) or a CSV header line; the
types, JSON input and anything this cannot read are left to the Spark job, which checks
them all again (``transforms.key_type_problem``) with the same wording."""

from __future__ import annotations

import csv
import gzip
import os

from kgitops.errors import AnalyticsError


def _parquet_columns(path: str) -> list[str] | None:
    try:
        import pyarrow.dataset as ds
    except ImportError:
        return None
    try:
        return list(ds.dataset(path, format="parquet").schema.names)
    except (OSError, ValueError, TypeError):  # pyarrow's ArrowInvalid is a ValueError
        return None  # unreadable here: the Spark job says why


def _csv_columns(path: str) -> list[str] | None:
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.startswith((".", "_")))
        if not names:
            return None
        path = os.path.join(path, names[0])
    opener = gzip.open if path.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as f:
            header = next(csv.reader(f), None)
    except (OSError, ValueError, UnicodeDecodeError, csv.Error):
        return None
    return None if header is None else [str(h) for h in header]


def check_columns(path: str, fmt: str, key_column: str, size_column: str | None) -> None:
    """AnalyticsError when the sample at ``path`` lacks the key or size column."""
    columns = (
        _parquet_columns(path) if fmt == "parquet" else _csv_columns(path) if fmt == "csv" else None
    )
    if columns is None:
        return
    names = ", ".join(sorted(columns)) or "none"
    if key_column not in columns:
        raise AnalyticsError(
            f"{path}: no key column {key_column!r} (columns: {names}); use --key-column"
        )
    if size_column is not None and size_column not in columns:
        raise AnalyticsError(f"{path}: no size column {size_column!r} (columns: {names})")
