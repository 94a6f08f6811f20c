"""Every file kgitops reads or writes goes through here: paths kept inside the cluster folder,
only regular files read, and at most ``max_file_size()`` bytes of them, writes atomic and
never through a symlink.

A cluster folder comes from a pull request, so its contents are hostile until checked:

* a path written in a spec (``simulated.stateFile``, ``keys.sample``, ``ssl.caFile`` ...)
  must be relative and resolve, symlinks followed, inside the cluster folder
  (``path_problem``, ``resolve_inside``): ``../../../x``, ``/etc/passwd``, ``file:///x`` and
  a committed symlink ``certs -> /etc`` are refused;
* ``read_bytes`` opens only regular files (a symlink to ``/dev/zero``, a FIFO, a folder are
  refused, without blocking on the FIFO), and refuses more than the size cap (10 MB unless
  ``--max-file-size`` raises it) before reading it;
* ``read_json`` reads a file that way and turns it into JSON with one positioned line for
  every way it can be wrong (``kgitops.jsontext.loads_json``: binary content, bad UTF-8,
  nesting too deep, malformed JSON, ``NaN``, numbers out of range);
* ``write_atomic`` writes a temporary file next to the target (a fresh random name,
  ``O_EXCL``: a committed ``kgitops.lock.tmp`` symlink is never opened) and renames it over
  the target; a target that is a symlink is refused, not replaced, and missing folders are
  created only when the caller says so, and only inside ``root``;
* ``check_output``/``write_output`` are the one rule for every ``--out`` (plan, snapshot,
  export-reassignment, sample-keys, analyze keys): the name ends as the format does
  (``.json``, ``.parquet``), so a spec, ``kgitops.lock`` or a ``.lock`` file is never a
  target; a file a spec names (the simulated state file and its locks, a key sample) is
  never replaced; an existing file is replaced only by one of its own kind (a plan by a
  plan, Parquet by Parquet); never through a symlink; and an empty result never replaces
  a file.

Every refusal is a ``FileRefused``: ``path[:line:col]: error: reason``, exit 1.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from kgitops.errors import FileRefused, Mark
from kgitops.jsontext import loads_json

#: The size cap when ``--max-file-size`` is not given: 10 MB.
DEFAULT_MAX_FILE_SIZE = 10_000_000

_max_size: ContextVar[int] = ContextVar("kgitops_max_file_size", default=DEFAULT_MAX_FILE_SIZE)

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|data|https?|s3a?|gs|hdfs):", re.I)


def max_file_size() -> int:
    """The size cap on every file read, in bytes."""
    return _max_size.get()


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Raise (or lower) the size cap for the duration of a command (``--max-file-size``)."""
    token = _max_size.set(limit)
    try:
        yield
    finally:
        _max_size.reset(token)


# ------------------------------------------------------------------------- paths


def inside(root: str, target: str) -> bool:
    """Whether the (already resolved) ``target`` is ``root`` or below it."""
    root = root.rstrip(os.sep) or os.sep
    return target == root or target.startswith(root if root == os.sep else root + os.sep)


def _shape_problem(path: str) -> str | None:
    """Why ``path`` as written is no path relative to a cluster folder (None: it is one)."""
    if not path:
        return "an empty path"
    if "\x00" in path:
        return "a path with a NUL character"
    if _URI.match(path):
        return f"{path!r} is a URI; give a path relative to the cluster folder"
    if os.path.isabs(path):
        return f"{path!r} is an absolute path; give a path relative to the cluster folder"
    return None


def path_problem(directory: str, path: str) -> str | None:
    """Why ``path``, written in a spec of the cluster folder ``directory``, may not be used
    (None: it may). The path must be relative and stay inside the folder once every symlink
    on the way is followed; the file need not exist yet.

    >>> path_problem(".", "../x")
    "'../x' leads outside the cluster folder"
    """
    shape = _shape_problem(path)
    if shape is not None:
        return shape
    root = os.path.realpath(directory)
    target = os.path.realpath(os.path.join(directory, path))
    if inside(root, target):
        return None
    if not inside(os.path.abspath(directory), os.path.abspath(os.path.join(directory, path))):
        return f"{path!r} leads outside the cluster folder"
    return f"{path!r} leads outside the cluster folder through a symlink"


def repository_path_problem(directory: str, path: str, root: str) -> str | None:
    """Why ``path`` (``simulated.stateFile`` of the cluster folder ``directory``) may not be
    used; None when it may. Like ``path_problem``, but the path may leave the cluster folder
    for another folder of the repository (``root``, resolved): two cluster folders share one
    simulated cluster with ``../shared-state.json``. It must stay inside ``root``, and no part
    of it below ``root`` may be a symlink (the file, or a folder on the way)::

        path_problem(".", "../../outside.json")  ->  "'../../outside.json' leads outside
        the repository"
    """
    shape = _shape_problem(path)
    if shape is not None:
        return shape
    root = os.path.realpath(root)
    target = os.path.normpath(os.path.join(os.path.realpath(directory), path))
    if not inside(root, target):
        return f"{path!r} leads outside the repository ({root})"
    here = root
    for part in os.path.relpath(target, root).split(os.sep):
        if part in ("", "."):
            continue
        here = os.path.join(here, part)
        if part == ".git":
            return f"{path!r} leads into the repository's .git folder"
        if os.path.islink(here):
            return (
                f"{path!r} leads through a symlink ({here}); kgitops keeps a state file only "
                "on the repository's own folders"
            )
    if not inside(root, os.path.realpath(target)):  # pragma: no cover - no symlink above
        return f"{path!r} leads outside the repository ({root})"
    return None


def resolve_inside(directory: str, path: str, *, shown: str | None = None) -> str:
    """``directory/path`` (absolute), or ``FileRefused`` naming ``shown`` (default: the path)
    when ``path_problem`` finds one."""
    problem = path_problem(directory, path)
    if problem is not None:
        raise FileRefused(Mark(shown or path), problem)
    return os.path.abspath(os.path.join(directory, path))


# ------------------------------------------------------------------------- reading

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, word in _KINDS:
        if test(mode):
            return word
    return "not a regular file"


def read_bytes(path: str, *, shown: str | None = None, root: str | None = None) -> bytes:
    """The content of the regular file ``path``, at most ``max_file_size()`` bytes.

    ``root``: the file must resolve inside this folder (a symlink out of it is refused, and
    its target is never opened). ``OSError`` (no such file, permission) is the caller's to
    word; anything that is not a regular file, or is too big, is ``FileRefused``.
    """
    where = Mark(shown or path)
    real = os.path.realpath(path)
    if root is not None and not inside(os.path.realpath(root), real):
        raise FileRefused(
            where, "a symlink to a file outside the cluster folder; kgitops reads only files in it"
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(real, flags | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(where, f"{_kind(st.st_mode)}, not a regular file")
        limit = max_file_size()
        if st.st_size > limit:
            raise FileRefused(where, _too_big(st.st_size, limit))
        chunks: list[bytes] = []
        size = 0
        step = max(st.st_size + 1, 1 << 20)  # a regular file in one read: no copy to join
        while True:
            chunk = os.read(fd, min(step, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while read, or says size 0 (/proc)
                raise FileRefused(where, _too_big(size, limit))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_big(size: int, limit: int) -> str:
    return (
        f"the file is larger than the {limit:,}-byte limit ({size:,} bytes or more); "
        "raise the limit with --max-file-size if it is meant to be this big"
    )


def read_json(path: str, *, shown: str | None = None, root: str | None = None) -> Any:
    """``loads_json(read_bytes(path))``."""
    return loads_json(read_bytes(path, shown=shown, root=root), shown or path)


# ------------------------------------------------------------------------- writing


def _check_folder(where: Mark, folder: str, shown: str, *, may_be_missing: bool) -> None:
    """Refuse (``FileRefused`` at ``where``) a file whose ``folder`` is not a folder, or
    does not exist unless ``may_be_missing``; messages name ``shown``'s folder."""
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise FileRefused(where, f"{os.path.dirname(shown)} is not a folder")
    if not may_be_missing and not os.path.isdir(folder):
        raise FileRefused(
            where, f"the folder {os.path.dirname(shown) or '.'} does not exist; create it first"
        )


def write_atomic(
    path: str,
    data: str | bytes,
    *,
    root: str | None = None,
    make_dirs: bool = False,
    shown: str | None = None,
) -> None:
    """Replace ``path`` with ``data`` in one rename: a reader (or a crash) sees the old file
    or the new one, never half of one.

    The temporary file is created next to the target with a fresh name and ``O_EXCL`` (no
    existing file or symlink is ever opened); a target that is a symlink or not a regular
    file is refused. ``root``: the target's folder must resolve inside it. ``make_dirs``:
    create missing folders (only inside ``root``); otherwise a missing folder is refused.
    ``OSError`` (permissions, disk full) is the caller's to word.
    """
    where = Mark(shown or path)
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    real_root = os.path.realpath(root) if root is not None else None

    def check_folder() -> None:
        if real_root is not None and not inside(real_root, os.path.realpath(folder)):
            raise FileRefused(where, "the file would be written outside the cluster folder")

    check_folder()
    _check_folder(where, folder, shown or path, may_be_missing=make_dirs and real_root is not None)
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        check_folder()
    if os.path.islink(target):
        raise FileRefused(where, "a symlink; kgitops does not write through symlinks (remove it)")
    if os.path.lexists(target) and not os.path.isfile(target):
        raise FileRefused(where, f"{_kind(os.lstat(target).st_mode)}, not a regular file")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_private(path: str, text: str) -> None:
    """``text`` into ``path``, mode 0600 -- also a file already there, before any byte of
    ``text`` (``open``'s mode applies to a new file only) -- never through a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(fd, 0o600)
        f.write(text)


# ------------------------------------------------------------------------- --out


@dataclass(frozen=True)
class OutputKind:
    """What one ``--out`` writes: its name in messages, the endings its file name may have,
    and how the head of an existing file of this kind reads (what it may replace)."""

    what: str  # "a plan (JSON)"
    suffixes: tuple[str, ...]  # (".json",)
    head: Callable[[bytes], bool]  # whether the first HEAD_BYTES are a file of this kind


#: How much of an existing file ``check_output`` reads to tell its kind.
HEAD_BYTES = 4096


_FORMAT = re.compile(rb'"format"\s*:\s*"([^"]*)"')


def _starts(pattern: bytes) -> Callable[[bytes], bool]:
    """Whether a file's head matches ``pattern`` at its start."""
    compiled = re.compile(pattern)
    return lambda data: compiled.match(data) is not None


def _json_format(prefix: str) -> Callable[[bytes], bool]:
    """A JSON object whose first ``format`` field starts with ``prefix`` (a plan holds a
    state's ``format`` further on, in its ``recordedState``)."""

    def head(data: bytes) -> bool:
        found = _FORMAT.search(data)
        return (
            data.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{")
            and found is not None
            and found.group(1).startswith(prefix.encode())
        )

    return head


PLAN_OUT = OutputKind("a plan (JSON)", (".json",), _json_format("kgitops-plan/"))
STATE_OUT = OutputKind("a state snapshot (JSON)", (".json",), _json_format("kgitops-state/"))
KEYS_REPORT_OUT = OutputKind("a key report (JSON)", (".json",), _json_format("kgitops-keys/"))
REASSIGNMENT_OUT = OutputKind(
    "a Kafka reassignment (JSON)",
    (".json",),
    _starts(rb'\A\s*\{\s*"(?:version|partitions)"\s*:'),
)
SAMPLE_OUT = OutputKind("a key sample (Parquet)", (".parquet",), _starts(rb"\APAR1"))


def _head(path: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def check_output(
    path: str,
    kind: OutputKind,
    *,
    named: Mapping[str, str] | None = None,
    own: str | None = None,
    new_folder: bool = False,
) -> None:
    """Refuse (``FileRefused``, nothing written) an ``--out`` target that is not this
    writer's to replace; call it before any work, and ``write_output`` writes.

    ``named``: the real paths of files a spec names, each with what it is (the simulated
    state file, its ``.lock``, a key sample...); ``own``: the one of them this command
    writes (``sample-keys`` into its topic's ``keys.sample``).

    ``new_folder``: the folder may be missing (the caller has ``write_atomic`` make it).

    ``check_output("cluster.yaml", PLAN_OUT)`` refuses: ``cluster.yaml: error: a plan (JSON)
    is written to a file whose name ends in .json, not .yaml (...)``.
    """
    where = Mark(path)
    ending = os.path.splitext(path)[1].lower()
    if not path or ending not in kind.suffixes:
        raise FileRefused(
            where,
            f"{kind.what} is written to a file whose name ends in "
            f"{' or '.join(kind.suffixes)}, not {ending or 'nothing'} (--out never writes a "
            "spec, the lock or a file of another kind)",
        )
    _check_folder(where, os.path.dirname(os.path.abspath(path)), path, may_be_missing=new_folder)
    if os.path.islink(path):
        raise FileRefused(where, "a symlink; kgitops does not write through symlinks (remove it)")
    real = os.path.realpath(path)
    for name, what in (named or {}).items():
        if name.startswith("\0in:"):  # every path under a folder
            if inside(name[len("\0in:") :], real):
                raise FileRefused(where, f"{what}; --out does not write there")
            continue
        if name == real and name != own:
            raise FileRefused(
                where, f"{what}; --out never replaces a file a spec names (choose another path)"
            )
    if not os.path.lexists(path):
        return
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(where, f"{_kind(st.st_mode)}, not a regular file")
    if st.st_size and not kind.head(_head(path)):
        raise FileRefused(
            where,
            f"the file exists and is not {kind.what}; --out replaces only a file of the kind "
            "it writes (remove it or choose another path)",
        )


def write_output(
    path: str,
    data: str | bytes,
    kind: OutputKind,
    *,
    named: Mapping[str, str] | None = None,
    own: str | None = None,
    empty: bool = False,
    root: str | None = None,
    make_dirs: bool = False,
) -> None:
    """``check_output`` again (the file may have changed since), then ``write_atomic``.
    ``empty``: the result holds nothing (no message sampled, no move), so it may not replace
    a file: the old one is kept and ``FileRefused`` says so. ``root``/``make_dirs`` as for
    ``write_atomic`` (only a path a spec names may have its folder made)."""
    check_output(path, kind, named=named, own=own, new_folder=make_dirs and root is not None)
    if empty and os.path.lexists(path):
        raise FileRefused(
            Mark(path),
            f"the result is empty, so it does not replace the file; {path} is left as it was",
        )
    write_atomic(path, data, root=root, make_dirs=make_dirs)
