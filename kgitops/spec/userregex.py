"""Regular expressions written by people (cluster.yaml ``policies.names``), run in bounded time.

A pattern is the platform team's and the name it is matched against a pull request's:
Python's ``re`` backtracks, so ``^(a+)+$`` against 31 ``a``s and a ``!`` takes half a
minute, doubling with each character, and cannot be interrupted. So a user pattern runs on
RE2 (the ``google-re2`` package), whose matching is linear in the name whatever the
pattern, and whose compiled size is capped (``max_mem``)::

    compile_user_pattern(r"^team-a\\.").search("team-a.orders")   -> True
    compile_user_pattern(r"(?=x)")      -> UserPatternError: ... RE2, which has no lookaround

RE2 reads Python's syntax except what needs backtracking: lookarounds, backreferences and
possessive quantifiers are refused with the reason. Topic names are ASCII, so ``\\d``,
``\\w`` and ``$`` mean the same in both engines.

Without ``google-re2`` installed (an environment made before it was a dependency), Python's
``re`` runs the pattern after a static check refuses the shape that backtracks
exponentially: a quantifier on a group that holds a quantifier (``(a+)+``, ``(a*b?)*``,
``(?:x{2,})+``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: RE2's memory budget for one compiled pattern (its default, 8 MiB): ``a{1000}{1000}`` is
#: refused as too large instead of growing.
MAX_MEM = 8 << 20


class UserPatternError(ValueError):
    """A pattern refused: the reason, for a ``path:line:col: error:`` line."""


@dataclass(frozen=True)
class UserPattern:
    """A compiled user pattern: ``search(name)`` says whether it matches anywhere."""

    pattern: str
    compiled: Any  # re2._Regexp[str] or re.Pattern[str]

    def search(self, text: str) -> bool:
        return self.compiled.search(text) is not None


def _re2() -> Any:
    try:
        import re2
    except ImportError:
        return None
    return re2


def compile_user_pattern(text: str) -> UserPattern:
    """``text`` compiled for bounded-time searching; UserPatternError with the reason:
    ``is not a regular expression: missing ), ...`` (Python's words, whichever engine runs
    it), or what RE2 cannot run."""
    try:
        compiled = re.compile(text)  # compiling is bounded; only matching backtracks
    except re.error as exc:
        raise UserPatternError(f"is not a regular expression: {exc}") from None
    re2 = _re2()
    if re2 is not None:
        options = re2.Options()
        options.log_errors = False  # else RE2 writes its own line to stderr
        options.max_mem = MAX_MEM
        try:
            return UserPattern(text, re2.compile(text, options))
        except re2.error as exc:
            raise UserPatternError(_re2_reason(exc)) from None
    problem = nested_quantifier(text)
    if problem is not None:
        raise UserPatternError(problem)
    return UserPattern(text, compiled)


def _re2_reason(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else exc
    reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return (
        f"cannot run in time linear in the name ({reason}): kgitops runs patterns on RE2, "
        "which has no lookaround, backreference or possessive quantifier"
    )


#: A quantifier that lets one text split more than one way (``{3}`` does not).
_QUANTIFIER = re.compile(r"[*+]|\{\d*,\d*\}")


def nested_quantifier(text: str) -> str | None:
    """Why ``text`` could backtrack exponentially in Python's ``re`` (None: it cannot in
    the way this checks): a repeated group that itself holds a repetition.

    ``nested_quantifier("^(a+)+$")`` -> ``"cannot run in bounded time: a quantifier on the
    group at column 2, which holds a quantifier, ..."``.
    """
    stack: list[tuple[int, bool]] = []  # (column of '(', holds a quantifier)
    i = 0
    closed: tuple[int, bool] | None = None  # the group just closed, until the next token
    while i < len(text):
        ch = text[i]
        step = 1
        follows_group, closed = closed, None
        if ch == "\\":
            step = 2
        elif ch == "[":
            step = _class_end(text, i) - i
        elif ch == "(":
            stack.append((i + 1, False))
        elif ch == ")":
            if stack:
                closed = stack.pop()
                if closed[1] and stack:
                    stack[-1] = (stack[-1][0], True)
        else:
            m = _QUANTIFIER.match(text, i)
            if m is not None or ch == "?":
                repeats = m is not None
                if repeats and follows_group is not None and follows_group[1]:
                    return (
                        f"cannot run in bounded time: a quantifier on the group at column "
                        f"{follows_group[0]}, which holds a quantifier, may take exponential "
                        "time in Python's re (install google-re2, or write the pattern "
                        "without nesting)"
                    )
                if repeats and stack:
                    stack[-1] = (stack[-1][0], True)
                step = len(m.group()) if m is not None else 1
        i += step
    return None


def _class_end(text: str, start: int) -> int:
    """The index after the ``]`` closing the character class opened at ``start``."""
    i = start + 1
    if i < len(text) and text[i] == "^":
        i += 1
    if i < len(text) and text[i] == "]":
        i += 1
    while i < len(text) and text[i] != "]":
        i += 2 if text[i] == "\\" else 1
    return i + 1
