"""Sizes and durations, both ways, for every command: one home, so a quantity reads the same
in ``plan``, ``apply``, ``status`` and ``simulate``.

Printed amounts of data (what a plan copies, what a broker holds) are binary (KiB = 1024), as
Kafka sizes its segments; durations are ``1h 2m 5s``, with decimals under a minute::

    human_bytes(1536)        -> "1.5 KiB"          parse_size("1.5GB")     -> 1500000000
    human_rate(50000000)     -> "50 MB/s"          (a rate keeps the family it was set in)
    human_bytes(10**9)       -> "953.7 MiB"        parse_size("2GiB")      -> 2147483648
    human_seconds(3725)      -> "1h 2m 5s"         parse_duration("2m30s") -> 150.0
    human_seconds(6.666)     -> "6.67s"

Sizes typed by people are decimal (kB = 1000) as Kafka's byte rates are, with the binary
``KiB``/``MiB``/``GiB``/``TiB`` also understood.

Topic configs that Kafka holds in milliseconds or bytes take the same words, exactly (an
amount that is not a whole number of milliseconds or bytes is refused, never rounded), and
print back in the largest unit that says the value exactly::

    spec_millis("7d")     -> 604800000             spec_millis_text(604800000)  -> "7d"
    spec_millis("1h30m")  -> 5400000               spec_millis_text(129600000)  -> "36h"
    spec_bytes("512MiB")  -> 536870912             spec_bytes_text(1073741824)  -> "1GiB"
    spec_bytes("10MB")    -> 10000000              spec_bytes_text(10000000)    -> "10MB"
    spec_bytes("10GB")    -> 10000000000           spec_bytes_text(10**10)      -> "10GB"
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction

from kgitops.names import INT64_MAX

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def human_bytes(n: float | None) -> str:
    """``1536`` -> ``1.5 KiB``; None -> ``unknown size``."""
    if n is None:
        return "unknown size"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def human_rate(n: float) -> str:
    """A rate someone set (a throttle, a produce rate), per second, in the unit family it was
    set in where a unit says it exactly: ``50000000`` -> ``50 MB/s``, ``52428800`` ->
    ``50 MiB/s``; else as ``human_bytes``: ``1234567`` -> ``1.2 MiB/s``."""
    if n > 0 and n == int(n):
        found = re.fullmatch(r"([0-9]+)([A-Za-z]+)", spec_bytes_text(int(n)))
        if found is not None:
            return f"{found.group(1)} {found.group(2)}/s"
    return f"{human_bytes(n)}/s"


def human_seconds(seconds: float) -> str:
    """``3725`` -> ``1h 2m 5s``; ``150`` -> ``2m 30s``; ``6.666`` -> ``6.67s``."""
    if not math.isfinite(seconds):
        return f"{seconds}s"
    if seconds < 60:
        return f"{max(seconds, 0):.3g}s"
    total = round(seconds)
    h, rest = divmod(total, 3600)
    m, sec = divmod(rest, 60)
    parts = [f"{h}h"] if h else []
    parts.append(f"{m}m")
    parts.append(f"{sec}s")
    return " ".join(parts)


# ------------------------------------------------------------------ the one grammar of each
#
# A duration is one or more parts ``<number><unit>`` with no space (``90s``, ``1h30m``,
# ``1.5s``, ``2w``), units ``ms``, ``s``, ``m``, ``h``, ``d``, ``w``; a size is ``<number>`` and
# one unit, ``B``, ``kB``/``MB``/``GB``/``TB`` (1000) or ``KiB``/``MiB``/``GiB``/``TiB`` (1024),
# case aside. A number is ASCII digits with an optional ASCII decimal part (``1.5``): no sign,
# no exponent, no other script's digits, no spaces. Amounts are exact (Fraction), never float.
# The command line (``--timeout``, ``--max-file-size``, ``simulate``) and the topic configs
# read the same words; only what a bare number means differs (seconds or bytes on the command
# line, milliseconds or bytes in a config) and what a caller does with a fraction.

_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_MILLIS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_MILLIS_TEXT = re.compile(rf"(?:{_NUMBER}(?:ms|s|m|h|d|w))+", re.ASCII)
_MILLIS_PART = re.compile(rf"({_NUMBER})(ms|s|m|h|d|w)", re.ASCII)
_BYTES_TEXT = re.compile(rf"({_NUMBER})([kKmMgGtT]i?[bB]|[bB])?", re.ASCII)
_BARE = re.compile(_NUMBER, re.ASCII)

MAX_AMOUNT = INT64_MAX
"""The most a size (bytes) or a duration (milliseconds) can be: Kafka's Long.MAX_VALUE. The
command line refuses more (``simulate advance 99999999d`` would be 292 million years)."""


class AmountTooLarge(ValueError):
    """A number in a duration or a size whose whole part has more digits than MAX_AMOUNT
    (``99999...9d`` with 5,000 nines): above the limit whatever its unit, and never turned
    into an integer (Python refuses more than 4,300 digits, and slowly)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"{_shown(text)} is too large: at most {MAX_AMOUNT} (a 64-bit long)")


_WHOLE_DIGITS = len(str(MAX_AMOUNT))
#: Decimals kept exactly; past them only "not a whole number" matters (module docs).
_DECIMALS = 60


def _fraction(number: str, text: str) -> Fraction:
    """``number`` (digits, optionally ``.`` and digits) exactly, without converting more than
    a few dozen digits: a whole part longer than MAX_AMOUNT's is AmountTooLarge; decimals
    past the 60th only make the amount not whole (no unit is divisible by 10**41, so an
    amount with more than 40 significant decimals is never a whole number anyway)."""
    whole, _, decimals = number.partition(".")
    whole = whole.lstrip("0")
    if len(whole) > _WHOLE_DIGITS:
        raise AmountTooLarge(text)
    decimals = decimals.rstrip("0")
    value = Fraction(int(whole or "0"))
    if decimals:
        kept = decimals[:_DECIMALS]
        value += Fraction(int(kept), 10 ** len(kept))
        if len(decimals) > _DECIMALS:
            value += Fraction(1, 10 ** (_DECIMALS + 1))
    return value


def _millis(text: str, *, bare_unit: int | None) -> Fraction | None:
    if bare_unit is not None and _BARE.fullmatch(text):
        return _fraction(text, text) * bare_unit
    if _MILLIS_TEXT.fullmatch(text) is None:
        return None
    parts = _MILLIS_PART.findall(text)
    return sum((_fraction(n, text) * _MILLIS[u] for n, u in parts), Fraction(0))


def _bytes(text: str, *, bare: bool) -> Fraction | None:
    m = _BYTES_TEXT.fullmatch(text)
    if m is None or (m.group(2) is None and not bare):
        return None
    return _fraction(m.group(1), text) * _SIZE_UNITS[(m.group(2) or "").lower()]


def shown_text(text: str) -> str:
    """``text`` quoted, or its length when it is too long to read in a message."""
    return repr(text) if len(text) <= 40 else f"a {len(text)}-character value"


_shown = shown_text


def parse_size(text: str) -> int:
    """``"1.5GB"`` -> 1500000000, ``"512"`` -> 512 (bytes); ValueError with a readable
    message otherwise, and above MAX_AMOUNT. A fraction of a byte is dropped."""
    amount = _within_max(
        lambda: _bytes(text, bare=True),
        text,
        "is not a size (e.g. 500MB, 1.5GB, 1073741824)",
        f"is too big: at most {MAX_AMOUNT} bytes (about 8 EiB)",
    )
    return int(amount)


def parse_duration(text: str) -> float:
    """``"90"``, ``"90s"``, ``"2m30s"``, ``"1h"``, ``"1w"`` -> seconds; ValueError otherwise,
    and above MAX_AMOUNT milliseconds (about 292 million years)."""
    millis = _within_max(
        lambda: _millis(text, bare_unit=1000),
        text,
        "is not a duration (e.g. 90, 90s, 2m30s, 1h, 7d)",
        f"is too long: at most {MAX_AMOUNT} milliseconds",
    )
    return float(millis / 1000)


def _within_max(
    read: Callable[[], Fraction | None], text: str, unreadable: str, too_large: str
) -> Fraction:
    """What ``read`` makes of ``text``; a ValueError ``'text' <unreadable>`` when it reads
    nothing, ``'text' <too_large>`` above MAX_AMOUNT."""
    try:
        amount = read()
    except AmountTooLarge:
        amount = Fraction(MAX_AMOUNT + 1)
    if amount is None:
        raise ValueError(f"{_shown(text)} {unreadable}")
    if amount > MAX_AMOUNT:
        raise ValueError(f"{_shown(text)} {too_large}")
    return amount


# ------------------------------------------------------------ exact amounts in topic configs

#: Each family largest first; a size prints in the family that says it in fewer digits.
_BINARY = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_DECIMAL = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3))


def spec_millis(text: str) -> int | None:
    """``"7d"`` -> 604800000, ``"1h30m"`` -> 5400000, ``"1.5s"`` -> 1500; None when ``text``
    is not a duration with units or is not a whole number of milliseconds (``"0.5ms"``).
    Units: ``ms``, ``s``, ``m``, ``h``, ``d``, ``w``; a bare number is the caller's business.
    AmountTooLarge (a ValueError) for a number with more whole digits than MAX_AMOUNT."""
    total = _millis(text, bare_unit=None)
    return None if total is None or total.denominator != 1 else int(total)


def spec_bytes(text: str) -> int | None:
    """``"1GiB"`` -> 1073741824, ``"10MB"`` -> 10000000, ``"1.5KiB"`` -> 1536; None when
    ``text`` is not a size with a unit or not a whole number of bytes. ``kB``/``MB``/``GB``/``TB``
    are decimal (1000), ``KiB``/``MiB``/``GiB``/``TiB`` binary (1024), case aside.
    AmountTooLarge (a ValueError) for a number with more whole digits than MAX_AMOUNT."""
    total = _bytes(text, bare=False)
    return None if total is None or total.denominator != 1 else int(total)


def spec_millis_text(ms: int) -> str:
    """The shortest exact form: ``604800000`` -> ``"7d"``, ``129600000`` -> ``"36h"``,
    ``1500`` -> ``"1500ms"``; 0, negative values (Kafka's markers) and a minute or more that
    no unit says exactly (``9223372036854775807``, Long.MAX_VALUE) stay numbers."""
    if ms <= 0:
        return str(ms)
    for unit in ("d", "h", "m", "s"):
        if ms % _MILLIS[unit] == 0:
            return f"{ms // _MILLIS[unit]}{unit}"
    return f"{ms}ms" if ms < _MILLIS["m"] else str(ms)


def spec_bytes_text(n: int) -> str:
    """``1073741824`` -> ``"1GiB"``, ``10000000000`` -> ``"10GB"``: the largest unit of each
    family (binary, decimal) that says the amount exactly, and of those two the one with
    fewer digits, binary on a tie. So a size reads back in the family it was written in
    (``10GB`` stays ``10GB``, never ``9765625KiB``; ``512MiB`` stays ``512MiB``), unless
    the other family says it much shorter. An amount that no unit says exactly
    (``1048588``), 0 and negative markers stay numbers."""
    if n <= 0:
        return str(n)
    found = [
        next((f"{n // size}{unit}" for unit, size in family if n % size == 0), None)
        for family in (_BINARY, _DECIMAL)
    ]
    shown = [t for t in found if t is not None]
    if not shown:
        return str(n)
    return min(shown, key=lambda t: len(t.rstrip("TGMKkiB")))
