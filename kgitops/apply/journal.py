"""Which reassignments in flight kgitops started: a small record in the cluster folder.

Kafka does not say who started a reassignment: ListPartitionReassignments shows the same
``replicas / adding / removing`` whether kgitops, kafka-reassign-partitions.sh or Cruise
Control submitted it. Apply must still tell them apart: it waits for (and on timeout or
Ctrl-C cancels) only the moves it started; a move another tool started is reported and left
alone. So every move apply submits is recorded here until apply sees it end (completed or
cancelled); ``apply --no-wait`` leaves its moves recorded, and a later apply in the same
folder finds them and waits for them::

    <cluster folder>/.kgitops/moves.json
    {"format": "kgitops-moves/v1", "cluster": "prod",
     "moves": {"orders": {"0": [4, 2, 3]}}}          # topic -> partition -> target

A move counts as kgitops' when the record has that partition with the same target. A record
that git tracks (committed, or added) is ignored with a note and never written: it would be a
pull request's say over which moves apply waits for and cancels (and, as no record of its
own can be written then, apply starts no move). Without
the record (a fresh CI checkout, a deleted folder) moves in flight count as another tool's:
reported, never waited for or cancelled -- the safe side. An unreadable record is treated
the same way, with a note. Each move is recorded *before* the request that starts it is sent;
when the record cannot be written the move is not submitted (a later apply could not tell it
from another tool's); a record that cannot be updated once a move ended is a note.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping

from kgitops.errors import KgitopsError
from kgitops.files import read_json, write_atomic
from kgitops.gitrepo import checkout_root, run_git

FORMAT = "kgitops-moves/v1"
JOURNAL = os.path.join(".kgitops", "moves.json")

TP = tuple[str, int]


class MoveJournal:
    """The moves kgitops submitted and has not seen end. ``path`` None: kept in memory only
    (then "ours" means submitted by this process)."""

    def __init__(
        self,
        path: str | None = None,
        *,
        cluster: str = "",
        root: str | None = None,
        moves: Mapping[TP, tuple[int, ...]] | None = None,
    ) -> None:
        self.path = path
        self.cluster = cluster
        self.root = root
        self.moves: dict[TP, tuple[int, ...]] = dict(moves or {})
        self.notes: list[str] = []
        self.refused: str | None = None  # why the folder's record may not be written

    @classmethod
    def open(cls, directory: str, cluster: str) -> MoveJournal:
        """The record of the cluster folder ``directory`` (empty when there is none)."""
        path = os.path.join(directory, JOURNAL)
        journal = cls(path, cluster=cluster, root=directory)
        if not os.path.lexists(path):
            return journal
        tracked = tracked_by_git(directory, JOURNAL)
        if tracked is not False:
            # A committed record is anyone's word (a pull request's), not this checkout's
            # memory: kept in memory only, it is neither read nor overwritten.
            why = "it is committed to git" if tracked else f"git cannot tell ({tracked})"
            journal.path = None
            journal.refused = f"{JOURNAL} may not be written ({why})"
            journal.notes.append(
                f"note: {JOURNAL} ignored ({why}; it is this checkout's own record and must "
                "not be committed: git rm --cached it): moves in flight count as not started "
                "by kgitops, and are left alone"
            )
            return journal
        try:
            data = read_json(path, root=directory)
            if data.get("format") != FORMAT:
                raise ValueError(f"not {FORMAT}")
            if data.get("cluster") not in (None, cluster):
                raise ValueError(f"it is for cluster {data.get('cluster')!r}")
            journal.moves = {
                (str(t), int(p)): tuple(int(b) for b in target)
                for t, parts in data["moves"].items()
                for p, target in parts.items()
            }
        except (KgitopsError, ValueError, TypeError, KeyError, AttributeError) as exc:
            journal.notes.append(
                f"note: {JOURNAL} ignored ({exc}): moves in flight count as not started by "
                "kgitops, and are left alone"
            )
        return journal

    def ours(self, tp: TP, target: Iterable[int]) -> bool:
        """Whether the move of ``tp`` to ``target`` in flight is one kgitops submitted."""
        return self.moves.get(tp) == tuple(target)

    def started(self, moves: Mapping[TP, tuple[int, ...]]) -> str | None:
        """Record ``moves`` *before* the request that starts them is sent (a kill -9 right
        after it leaves them recorded: the next apply waits for them). Returns why the record
        could not be written (then they must not be submitted: a later apply would take them
        for another tool's, and a ``--no-wait`` would promise what it will not do), or None."""
        if not moves:
            return None
        if self.refused is not None:
            return self.refused
        self.moves.update(moves)
        why = self._save()
        if why is not None:
            for tp in moves:
                self.moves.pop(tp, None)
        return why

    def ended(self, tps: Iterable[TP]) -> None:
        gone = [tp for tp in tps if tp in self.moves]
        for tp in gone:
            del self.moves[tp]
        if gone:
            self._save()

    def _save(self) -> str | None:
        """Write the record; why it could not be, or None."""
        if self.path is None:
            return None
        nested: dict[str, dict[str, list[int]]] = {}
        for (t, p), target in sorted(self.moves.items()):
            nested.setdefault(t, {})[str(p)] = list(target)
        text = json.dumps({"format": FORMAT, "cluster": self.cluster, "moves": nested}, indent=1)
        try:
            if not nested and os.path.lexists(self.path):
                os.remove(self.path)
                return None
            write_atomic(self.path, text + "\n", root=self.root, make_dirs=True)
        except (OSError, KgitopsError) as exc:
            note = (
                f"note: could not update the record of the moves in flight, {JOURNAL} ({exc}); "
                "moves that ended may still be listed in it"
            )
            if note not in self.notes:
                self.notes.append(note)
            return f"could not write {JOURNAL}: {exc}"
        return None


def _git_ls_files(directory: str, path: str, *args: str) -> tuple[int, str, str] | None:
    """``git ls-files ARGS -- PATH`` (``path`` relative to ``directory``) on the checkout
    holding ``directory`` (``kgitops.gitrepo``: never git started in the folder itself, which a
    pull request may have shaped as a git directory with its own index): (status, stdout
    relative to ``directory``, stderr), or None when ``directory`` is in no checkout. OSError
    (FileNotFoundError: no git) and TimeoutExpired as subprocess raises them."""
    root = checkout_root(directory)
    if root is None:
        return None
    rel = os.path.relpath(os.path.join(os.path.realpath(directory), path), root)
    done = run_git(root, ["ls-files", *args, "--", rel.replace(os.sep, "/")], timeout=30)
    out = done.stdout.decode("utf-8", "replace")
    base = os.path.relpath(os.path.realpath(directory), root).replace(os.sep, "/")
    if base != ".":
        prefix = base + "/"
        out = "\0".join(p[len(prefix) :] if p.startswith(prefix) else p for p in out.split("\0"))
    return done.returncode, out, done.stderr.decode("utf-8", "replace")


def tracked_by_git(directory: str, path: str) -> bool | str:
    """Whether git tracks ``path`` (relative to ``directory``): True, False (untracked, or
    ``directory`` not in a git repository, or no git), or why git could not tell (then the
    file is treated as tracked: the safe side)."""
    try:
        done = _git_ls_files(directory, path, "--error-unmatch")
    except FileNotFoundError:
        return False
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git ls-files failed: {type(exc).__name__}"
    if done is None:
        return False
    status, _, err = done
    if status == 0:
        return True
    if "did not match any file" in err or "not a git repository" in err:
        return False
    return f"git ls-files exited with status {status}"


def tracked_records(directory: str) -> list[str]:
    """The files under ``directory``/.kgitops/ that git tracks (none outside a repository)."""
    try:
        done = _git_ls_files(directory, ".kgitops", "-z")
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done is None or done[0] != 0:
        return []
    return [os.path.join(directory, p) for p in done[1].split("\0") if p]
