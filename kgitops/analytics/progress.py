"""What a long Spark job tells a person while it runs: stage lines from the job itself
(``Say``), and the task counts of Spark's running stages every few seconds, read from the
status tracker by a thread beside the blocking action::

    stage 3: 7/12 tasks
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Say = Callable[[str], None]


def silent(_: str) -> None:
    """The ``Say`` that says nothing (``--quiet``, library calls)."""


@contextlib.contextmanager
def task_counter(spark: SparkSession, say: Say, every: float = 10.0) -> Iterator[None]:
    """While the body runs, every ``every`` seconds: how many tasks of the running Spark
    stages are done (``stage 3: 5/12 tasks``), from the status tracker."""
    if say is silent:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        tracker = spark.sparkContext.statusTracker()
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a stage can end between the calls
                parts = []
                for sid in sorted(tracker.getActiveStageIds()):
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
                if parts:
                    say(", ".join(parts))

    thread = threading.Thread(target=watch, name="kgitops-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
