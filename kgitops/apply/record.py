"""What throttles an apply has set, written down before it sets them.

Throttles are state (docs/apply.md): the next plan removes any that no move in flight needs,
whatever left them. The record says *who* left them, so the plan's reason can tell a
``--no-wait`` apply's throttles (expected) from an apply that never finished (killed, lost
power) -- and so a person reading ``~ remove_throttles`` knows which run to look at::

    {"format": "kgitops-throttles/v1", "by": "pid 4242 on ci-7", "since": "2026-11-24T19:50:00Z",
     "state": "running" | "no-wait" | "left-running",
     "brokers": [1, 2, 3], "topics": {"orders": {"leader...replicas": "0:1,0:2"}}}

It is written *before* each APPEND / SET (so a ``kill -9`` between the two leaves a record of
at least what was set), updated after each acknowledged SUBTRACT / DELETE, marked
``no-wait`` when ``--no-wait`` leaves moves running (``left-running`` when an apply that waits
leaves some: at its timeout, a move an earlier apply left running; a cancel that failed), and
deleted when an apply ends with nothing of its own left. It lives next to the apply lock
(``kgitops.apply.exclusive``): ``<stateFile>.apply-throttles.json`` or
``<cluster folder>/.kgitops/apply-throttles.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Collection, Mapping
from typing import Any

from kgitops.errors import KgitopsError
from kgitops.files import read_json, write_atomic
from kgitops.model import ClusterSpec
from kgitops.plan.throttles import Entry, format_entries

FORMAT = "kgitops-throttles/v1"


def record_path(cluster: ClusterSpec) -> str:
    """Where the record of ``cluster`` lives: next to its apply lock."""
    if cluster.simulated is not None:
        return cluster.simulated.state_file + ".apply-throttles.json"
    return os.path.join(cluster.directory, ".kgitops", "apply-throttles.json")


def read_record(cluster: ClusterSpec) -> Mapping[str, Any] | None:
    """The record, or None when there is none or it cannot be read (it only words reasons)."""
    path = record_path(cluster)
    if not os.path.exists(path):
        return None
    try:
        data = read_json(path)
    except (KgitopsError, OSError):
        return None
    return data if isinstance(data, Mapping) and data.get("format") == FORMAT else None


class ThrottleRecord:
    """Keeps the record file of one apply run up to date (module docstring)."""

    def __init__(self, cluster: ClusterSpec) -> None:
        self.path = record_path(cluster)
        self.root = cluster.directory if cluster.simulated is None else None
        self.by = f"pid {os.getpid()} on {socket.gethostname()}"
        self.since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def save(
        self,
        brokers: Collection[int],
        topics: Mapping[str, Mapping[str, Collection[Entry]]],
        *,
        state: str = "running",
    ) -> None:
        """Write what is (or is about to be) set; nothing set means no record."""
        listed = {
            t: {k: format_entries(v) for k, v in sorted(keys.items()) if v}
            for t, keys in sorted(topics.items())
        }
        listed = {t: keys for t, keys in listed.items() if keys}
        if not brokers and not listed:
            self.clear()
            return
        data = {
            "format": FORMAT,
            "by": self.by,
            "since": self.since,
            "state": state,
            "brokers": sorted(brokers),
            "topics": listed,
        }
        # the record only words the next plan's reasons (throttles are state anyway): a
        # record that cannot be written never stops an apply
        with contextlib.suppress(KgitopsError, OSError):
            write_atomic(
                self.path, json.dumps(data, indent=1) + "\n", root=self.root, make_dirs=False
            )

    def clear(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)
