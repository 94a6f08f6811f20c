"""A throw-away cluster folder per test, and what ``load_specs`` says about it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from kgitops.model import Broker
from kgitops.spec.load import load_specs
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml

# Three brokers in three racks; a simulated cluster, so the brokers are known.
CLUSTER = cluster_yaml("test", brokers=THREE_RACKS)

# A valid topic; line 3 is the name (value at col 7), line 4 partitions (col 13),
# line 5 replicationFactor (col 20). Tests append fields from line 6 on.
TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 3
"""

Problems = Callable[..., list[str]]


@pytest.fixture
def problems(tmp_path: Path) -> Problems:
    """``problems({"a.yaml": text}, cluster=CLUSTER, brokers=None)``: every diagnostic of
    the folder as ``path:line:col: severity: message`` lines, paths relative to it."""

    def run(
        files: dict[str, str | bytes],
        cluster: str | None = CLUSTER,
        brokers: Sequence[Broker] | None = None,
    ) -> list[str]:
        if cluster is not None:
            cluster_folder(tmp_path, cluster=cluster)
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        specs = load_specs(str(tmp_path), brokers=brokers)
        prefix = str(tmp_path) + os.sep
        return [str(d).replace(prefix, "") for d in specs.diagnostics]

    return run
