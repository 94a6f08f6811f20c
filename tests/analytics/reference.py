"""What the Spark job must find, row by row in plain Python (kgitops.placement.partitioner)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from kgitops.placement.partitioner import partition_for


def expected(
    rows: Sequence[tuple[bytes | None, int]], counts: Sequence[int], base: int
) -> dict[str, Any]:
    per_key: Counter[bytes] = Counter()
    size_of: Counter[bytes] = Counter()
    nulls = 0
    for key, size in rows:
        if key is None:
            nulls += 1
            continue
        per_key[key] += 1
        size_of[key] += size
    out: dict[str, Any] = {
        "nullKeys": nulls,
        "distinctKeys": len(per_key),
        "messages": {},
        "bytes": {},
        "moves": {},
    }
    for n in counts:
        msgs = [0] * n
        sizes = [0] * n
        for key, m in per_key.items():
            msgs[partition_for(key, n)] += m
            sizes[partition_for(key, n)] += size_of[key]
        out["messages"][n] = msgs
        out["bytes"][n] = sizes
        moved = [k for k in per_key if partition_for(k, n) != partition_for(k, base)]
        out["moves"][n] = (len(moved), sum(per_key[k] for k in moved))
    return out
