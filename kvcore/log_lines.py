"""Reading an engine's pasted start-up log: the parts every engine's reader shares.

Each engine's reader (``kvcore.vllm_log``, ``kvcore.llamacpp``, ``kvcore.sglang``,
``kvcore.trtllm``) lists its :class:`LogPattern` s, one per message format of the
engine's source, and :func:`read_patterns` finds them anywhere in a paste: log
prefixes, colour codes and line wraps do not matter, numbers may carry thousands
separators. Values become base units once here (``"gib"``: × 2**30 bytes, ``"mib"``:
× 2**20, ``"gb"``: × 10**9), with half of the last printed digit kept beside each,
the rounding a check against kvcore must allow. A :class:`Check` sets one logged
number beside kvcore's. Nothing here raises on any text.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .units import GiB, MiB

__all__ = [
    "INT_PATTERN",
    "MAX_LINES",
    "MAX_TEXT_CHARS",
    "NUMBER_PATTERN",
    "Check",
    "CheckStatus",
    "LogPattern",
    "PatternReading",
    "RecognisedLine",
    "cannot_check",
    "clean_log_line",
    "log_pattern",
    "pasted_lines",
    "read_patterns",
    "verdict",
]

#: What a reader reads at most; the rest is dropped and ``truncated`` is set.
MAX_TEXT_CHARS = 200_000
MAX_LINES = 5_000

#: A whole number with optional thousands separators ("31,232"; vLLM V1 prints f"{n:,}").
INT_PATTERN = r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
#: A decimal number, possibly negative (vLLM V0 prints a negative KV size when weights do not fit).
NUMBER_PATTERN = r"(-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?)"

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\^\[\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

CheckStatus = Literal["agree", "differ", "cannot_check"]
#: How a matched group becomes a value: "int", "float", "gib", "mib", "gb" (bytes), "str", "bool", "flag".
ValueKind = str
_UNIT_BYTES: Mapping[str, float] = {"gib": float(GiB), "mib": float(MiB), "gb": 1e9}


@dataclass(frozen=True, slots=True, kw_only=True)
class RecognisedLine:
    """One line of the paste that gave at least one field (1-based number, cleaned text)."""

    line_number: int
    text: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LogPattern:
    """One message format: a regex whose groups give ``fields``, each read as its ``kinds`` entry."""

    fields: tuple[str, ...]
    kinds: tuple[ValueKind, ...]
    regex: re.Pattern[str]


def log_pattern(fields: tuple[str, ...], kinds: tuple[ValueKind, ...], regex: str, flags: int = 0) -> LogPattern:
    """A :class:`LogPattern` from its regex source."""
    return LogPattern(fields, kinds, re.compile(regex, flags))


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternReading:
    """What :func:`read_patterns` found: values in base units, their half steps, and the lines.

    ``values[name]`` is the first value of a field; a field printed again with another value
    is listed in ``conflicts``. ``occurrences[name]`` lists every value, in order (an engine
    may print one line per cache or per GPU). ``joined`` is the cleaned paste.
    """

    values: Mapping[str, object] = field(default_factory=dict)
    occurrences: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    half_step: Mapping[str, float] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    truncated: bool = False
    joined: str = ""


def clean_log_line(line: str) -> str:
    """A pasted line without colour codes and control characters, stripped ('\\x1b[32mINFO' → 'INFO')."""
    return _CONTROL.sub("", _ANSI.sub("", line)).strip()


def pasted_lines(text: object) -> tuple[list[str], bool]:
    """The paste as cleaned lines (at most MAX_TEXT_CHARS characters and MAX_LINES lines), and whether it was cut."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text[: MAX_TEXT_CHARS * 4]).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = "" if text is None else str(text)
    truncated = len(text) > MAX_TEXT_CHARS
    lines = text[:MAX_TEXT_CHARS].splitlines()
    if len(lines) > MAX_LINES:
        lines, truncated = lines[:MAX_LINES], True
    return [clean_log_line(line) for line in lines], truncated


def read_patterns(text: object, patterns: Iterable[LogPattern]) -> PatternReading:
    """Find every pattern anywhere in the paste (a match may span lines) and convert its groups.

    >>> p = log_pattern(("tokens",), ("int",), r"#tokens:\\s*(\\d+)")
    >>> read_patterns("x\\n[TP0] KV Cache is allocated. #tokens: 1024", [p]).values["tokens"]
    1024
    """
    cleaned, truncated = pasted_lines(text)
    joined = "\n".join(cleaned)
    starts, offset = [], 0
    for line in cleaned:
        starts.append(offset)
        offset += len(line) + 1

    values: dict[str, object] = {}
    occurrences: dict[str, list[object]] = {}
    half_step: dict[str, float] = {}
    conflicts: list[str] = []
    line_fields: dict[int, list[str]] = {}
    for pattern in patterns:
        for match in pattern.regex.finditer(joined):
            found = []
            for index, (name, kind) in enumerate(zip(pattern.fields, pattern.kinds, strict=True)):
                raw = match.group(index + 1) if pattern.regex.groups > index else None
                if kind != "flag" and raw is None:
                    continue
                value, step = convert_value(raw, kind)
                if value is None:
                    continue
                found.append(name)
                occurrences.setdefault(name, []).append(value)
                if name not in values:
                    values[name] = value
                    if step is not None:
                        half_step[name] = step
                elif values[name] != value and name not in conflicts:
                    conflicts.append(name)
            if found:
                first = bisect.bisect_right(starts, match.start()) - 1
                last = bisect.bisect_right(starts, max(match.end() - 1, match.start())) - 1
                for number in range(first, last + 1):
                    bucket = line_fields.setdefault(number, [])
                    bucket.extend(name for name in found if name not in bucket)

    recognised = tuple(
        RecognisedLine(line_number=number + 1, text=cleaned[number], fields=tuple(line_fields[number]))
        for number in sorted(line_fields)
    )
    ignored = tuple(line for number, line in enumerate(cleaned) if line and number not in line_fields)
    return PatternReading(
        values=values,
        occurrences={name: tuple(items) for name, items in occurrences.items()},
        half_step=half_step,
        conflicts=tuple(conflicts),
        recognised=recognised,
        ignored=ignored,
        truncated=truncated,
        joined=joined,
    )


def convert_value(raw: str | None, kind: ValueKind) -> tuple[object | None, float | None]:
    """A matched string → (value in base units, half of its last printed digit in the same units)."""
    if kind == "flag":
        return True, None
    if raw is None:
        return None, None
    if kind == "str":
        return raw, None
    if kind == "bool":
        return raw.lower() == "true", None
    plain = raw.replace(",", "")
    if kind == "int":
        return int(plain), 0.0
    number = float(plain)
    if not math.isfinite(number):
        return None, None
    decimals = len(plain.partition(".")[2])
    step = 0.5 * 10.0**-decimals
    scale = _UNIT_BYTES.get(kind, 1.0)
    return number * scale, step * scale


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One logged number beside kvcore's: they agree when ``low ≤ logged ≤ high``.

    ``kind`` names the number (a field of the engine's log, or ``bytes_per_token``),
    ``unit`` its unit ("bytes", "tokens", "blocks", "cells", "requests", "bytes_per_token").
    ``low``/``high`` widen ``expected`` by the rounding the engine printed with. When
    status is ``cannot_check``, ``reason`` says what was missing.
    """

    kind: str
    status: CheckStatus
    unit: str
    logged: float | None = None
    expected: float | None = None
    low: float | None = None
    high: float | None = None
    reason: str = ""

    @property
    def ratio(self) -> float | None:
        """logged ÷ expected (2.0: the log counts twice what kvcore does), None if either is missing or 0."""
        if self.logged is None or not self.expected:
            return None
        return self.logged / self.expected


def cannot_check(kind: str, unit: str, reason: str, logged: float | None = None) -> Check:
    """A :class:`Check` kvcore cannot make: what was missing, in `reason` (the logged number kept when printed)."""
    return Check(kind=kind, status="cannot_check", unit=unit, logged=logged, reason=reason)


def verdict(kind: str, unit: str, logged: float, expected: float, half_step: float = 0.0) -> Check:
    """A :class:`Check` that agrees when logged is expected within the printed rounding (± half_step)."""
    low, high = expected - half_step, expected + half_step
    # A float printed with k decimals: allow a relative 1e-9 besides, for the conversion itself.
    slack = 1e-9 * max(abs(expected), 1.0)
    status: CheckStatus = "agree" if low - slack <= logged <= high + slack else "differ"
    return Check(kind=kind, status=status, unit=unit, logged=logged, expected=expected, low=low, high=high)
