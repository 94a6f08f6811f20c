"""One apply at a time per cluster: a second one refuses at once, before it changes anything.

Two applies on one cluster would fight over the same moves and throttles: the second sees the
first's moves in flight and its throttles, and whatever it cancels or removes is the first's
work. So apply takes an exclusive lock (POSIX ``flock``, non-blocking) for its whole run:

* simulated cluster: ``<stateFile>.apply.lock``, next to the state file every run shares;
* real cluster: ``<cluster folder>/.kgitops/apply.lock`` (keep ``.kgitops/`` out of git).

The lock file says who holds it (pid, host, since when) so the refusal can name them. The
kernel drops the lock when its process ends, ``kill -9`` included: a lock never goes stale.
What a file lock cannot see -- two CI runners on different machines -- is covered by the
plan's fingerprint: once the first apply has started moving, the replicas of its topics are
``target + removing`` and the second apply's plan is refused as stale (docs/apply.md,
"Concurrent applies"); run CI applies of one cluster in one concurrency group as well.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kgitops.errors import ApplyInProgress, FileRefused, Mark
from kgitops.files import path_problem
from kgitops.model import ClusterSpec


def lock_path(cluster: ClusterSpec) -> str:
    """Where the apply lock of ``cluster`` lives (module docstring)."""
    if cluster.simulated is not None:
        return cluster.simulated.state_file + ".apply.lock"
    return os.path.join(cluster.directory, ".kgitops", "apply.lock")


@contextmanager
def exclusive_apply(cluster: ClusterSpec) -> Iterator[None]:
    """Hold the apply lock of ``cluster`` for the block; ApplyInProgress if another holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, as documented
        yield
        return
    path = lock_path(cluster)
    if cluster.simulated is None:
        problem = path_problem(cluster.directory, os.path.relpath(path, cluster.directory))
        if problem is not None:
            raise FileRefused(Mark(path), f"the apply lock cannot go here: {problem}")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:
        raise FileRefused(
            Mark(path), f"cannot create the apply lock: {exc.strerror or exc}"
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise FileRefused(
            Mark(path), f"the apply lock is {kind}; remove it (kgitops makes a new one)"
        )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ApplyInProgress(f"{path}: cannot lock: {exc.strerror or exc}") from None
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
            raise ApplyInProgress(
                f"another `kgitops apply` is running on cluster {cluster.name!r} ({holder}); "
                "nothing was changed: wait for it to finish (`kgitops status` shows its moves), "
                "then plan again"
            ) from None
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            os.ftruncate(fd, 0)
            os.pwrite(
                fd, f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode(), 0
            )
        except OSError as exc:
            raise FileRefused(
                Mark(path), f"cannot write the apply lock: {exc.strerror or exc}"
            ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock
