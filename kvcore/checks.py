"""Input checks shared by kvcore's functions, the data loaders and the CLI.

Each raises ValueError with one sentence that says what is wrong and what to do,
so the CLI can print it as is and the app can show it in an error box.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def positive(name: str, value: Any, *, allow_zero: bool = False) -> Any:
    """Return `value` if every element is a finite number > 0 (or ≥ 0); else ValueError."""
    array = _as_float_array(name, value)
    bad = ~np.isfinite(array) | ((array < 0) if allow_zero else (array <= 0))
    if np.any(bad):
        kind = "zero or more" if allow_zero else "greater than zero"
        raise ValueError(f"{name} must be a finite number {kind}, got {_show(value)}")
    return value


def fraction(name: str, value: Any) -> float:
    """Return `value` as a float if it lies in (0, 1]; else ValueError."""
    number = float(positive(name, value))
    if number > 1:
        raise ValueError(f"{name} must be in (0, 1] (a fraction such as 0.9), got {value}")
    return number


def whole(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return `value` as an int if it is a whole number ≥ minimum; else ValueError."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number ≥ {minimum}, got {_show(value)}") from None
    if not math.isfinite(number) or number != int(number) or number < minimum:
        raise ValueError(f"{name} must be a whole number ≥ {minimum}, got {_show(value)}")
    return int(number)


def _as_float_array(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {_show(value)}") from None


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray) and value.size > 1:
        return f"an array containing {value[~np.isfinite(value) | (value <= 0)][:1]}"
    return repr(value)
