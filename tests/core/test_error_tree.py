"""The error tree drawn in kgitops/errors.py's docstring is the real class hierarchy, and every
error a user can meet is defined there (as httpx's tests/test_exceptions.py checks its own)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import kgitops
from kgitops import errors
from kgitops.errors import KgitopsError

_NODE = re.compile(r"^(?P<indent>[ │]*)(?:[├└]── )?(?P<name>[A-Z]\w+)\b")


def _drawn_tree() -> dict[str, str | None]:
    """Class name -> its parent's name, read from the docstring's drawing."""
    doc = errors.__doc__ or ""
    drawing = doc.split("::", 1)[1].split('"""')[0]
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []  # (column of the name, name)
    for line in drawing.splitlines():
        m = _NODE.match(line.strip("\n")[4:] if line.startswith("    ") else line)
        if m is None:
            continue
        column = m.start("name")
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[m.group("name")] = stack[-1][1] if stack else None
        stack.append((column, m.group("name")))
    return parents


def _real_tree() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name, cls in vars(errors).items():
        if (
            inspect.isclass(cls)
            and issubclass(cls, KgitopsError)
            and cls.__module__ == errors.__name__
        ):
            base = cls.__bases__[0]
            out[name] = base.__name__ if issubclass(base, KgitopsError) else None
    return out


def test_the_documented_error_tree_is_the_real_class_hierarchy() -> None:
    assert _drawn_tree() == _real_tree()


def test_every_kgitops_error_class_is_defined_in_errors_py() -> None:
    for info in pkgutil.walk_packages(kgitops.__path__, "kgitops."):
        if info.name != "kgitops.__main__":
            importlib.import_module(info.name)
    elsewhere: list[str] = []
    todo = [KgitopsError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__ != errors.__name__:
                elsewhere.append(f"{sub.__module__}.{sub.__qualname__}")
    assert elsewhere == []
