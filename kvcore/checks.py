"""Input checks shared by kvcore's functions, the data loaders and the CLI.

Each raises :class:`~kvcore.errors.KvError` (a ValueError) with a stable code, the
quantity's name and the value it got, and one sentence that says what is wrong:

* ``not_a_number`` — fields ``name``, ``value`` (text, a list, None…);
* ``not_positive`` — ``name``, ``value``: zero, negative, NaN or infinite where a number > 0 is needed;
* ``negative`` — ``name``, ``value``: below zero (or not finite) where zero is allowed;
* ``not_fraction`` — ``name``, ``value``: above 1 where a fraction in (0, 1] is needed;
* ``not_whole`` — ``name``, ``value``, ``minimum``: not a whole number ≥ minimum.

``where`` (optional) names what the quantity belongs to (``"model 'llama-3.1-8b'"``);
the message then starts with it and the fields carry it. For an array, ``value`` is
its first bad element. The CLI words these with its flag names, the app translates them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import KvError


def positive(name: str, value: Any, *, allow_zero: bool = False, where: str = "") -> Any:
    """Return `value` if every element is a finite number > 0 (or ≥ 0); else KvError not_positive / negative."""
    if isinstance(value, (int, float)) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0):
        return value  # a plain number that passes: no array (a lesson's rerun makes hundreds of these checks)
    array = _as_float_array(name, value, where)
    bad = ~np.isfinite(array) | ((array < 0) if allow_zero else (array <= 0))
    if np.any(bad):
        kind = "zero or more" if allow_zero else "greater than zero"
        raise KvError(
            "negative" if allow_zero else "not_positive",
            f"{_prefix(where)}{name} must be a finite number {kind}, got {_show(value, bad)}",
            **_fields(name, _first(value, bad), where),
        )
    return value


def fraction(name: str, value: Any, *, where: str = "") -> float:
    """Return `value` as a float if it lies in (0, 1]; else KvError not_fraction (or not_positive)."""
    number = float(positive(name, value, where=where))
    if number > 1:
        raise KvError(
            "not_fraction",
            f"{_prefix(where)}{name} must be in (0, 1] (a fraction such as 0.9), got {value}",
            **_fields(name, number, where),
        )
    return number


def whole(name: str, value: Any, *, minimum: int = 1, where: str = "") -> int:
    """Return `value` as an int if it is a whole number ≥ minimum; else KvError not_whole."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number) or number < minimum:
        raise KvError(
            "not_whole",
            f"{_prefix(where)}{name} must be a whole number ≥ {minimum}, got {_show(value)}",
            minimum=minimum,
            **_fields(name, value if isinstance(value, (int, float, np.number)) else _show(value), where),
        )
    return int(number)


def _as_float_array(name: str, value: Any, where: str) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise KvError(
            "not_a_number", f"{_prefix(where)}{name} must be a number, got {value!r}", **_fields(name, value, where)
        )
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise KvError(
            "not_a_number",
            f"{_prefix(where)}{name} must be a number, got {_show(value)}",
            **_fields(name, _show(value), where),
        ) from None


def _fields(name: str, value: Any, where: str) -> dict[str, Any]:
    return {"name": name, "value": value, **({"where": where} if where else {})}


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def _first(value: Any, bad: np.ndarray) -> Any:
    """The value itself, or for an array its first bad element (as a Python float)."""
    array = np.asarray(value, dtype=float)
    return float(array[bad].flat[0]) if array.ndim else value


def _show(value: Any, bad: np.ndarray | None = None) -> str:
    if isinstance(value, np.ndarray) and value.size > 1:
        mask = bad if bad is not None else ~np.isfinite(value) | (value <= 0)
        return f"an array containing {value[mask][:1]}"
    return repr(value)
