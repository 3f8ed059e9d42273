"""Units and formatting: bytes in, bytes out; words only at the edges.

Memory is measured in binary units (KiB = 2**10 bytes, GiB = 2**30 bytes), as
operating systems, PyTorch and vLLM report it. Rates are decimal (1 GB/s = 1e9
bytes/s, 1 TFLOP/s = 1e12 FLOP/s), as datasheets print them. Every formatter
names the unit it prints, so a reader always knows which one is meant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "GB",
    "KB",
    "MB",
    "TB",
    "TFLOP",
    "GiB",
    "KiB",
    "MiB",
    "TiB",
]

KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40

KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12

TFLOP = 10**12


def gib(num_bytes: float) -> float:
    """Bytes → GiB (÷ 2**30)."""
    return float(num_bytes) / GiB


def gb(num_bytes: float) -> float:
    """Bytes → decimal GB (÷ 1e9)."""
    return float(num_bytes) / GB


#: The units ``format_bytes`` and ``format_bytes_decimal`` choose from, largest first (below the last: bytes, "B").
BINARY_UNITS = (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB))
DECIMAL_UNITS = (("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB))


def format_bytes(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a memory size in binary units, choosing B, KiB, MiB, GiB or TiB.

    >>> format_bytes(131072)
    '128 KiB'
    >>> format_bytes(17179869184)
    '16 GiB'
    """
    return _in_units(num_bytes, BINARY_UNITS, decimals)


def format_bytes_decimal(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a size in decimal units (kB, MB, GB, TB), the way a seed or a vendor writes it.

    >>> format_bytes_decimal(327_680_000_000)
    '327.68 GB'
    """
    return _in_units(num_bytes, DECIMAL_UNITS, decimals)


def _in_units(num_bytes: float, units: tuple[tuple[str, int], ...], decimals: int) -> str:
    """`num_bytes` in the largest of `units` (name, bytes) it reaches, else in bytes; "—" when not finite."""
    value = float(num_bytes)
    if not math.isfinite(value):
        return "—"
    for unit, size in units:
        if abs(value) >= size:
            return f"{_trim(value / size, decimals)} {unit}"
    return f"{_trim(value, decimals)} B"


def format_bytes_many(num_bytes: Any, *, decimal: bool = False, decimals: int = 2) -> list[str]:
    """``format_bytes`` (or, with `decimal`, ``format_bytes_decimal``) of every value of `num_bytes`, in order.

    The same texts, the units chosen for all values in one numpy pass (a chart's hover texts: hundreds a
    figure); the division is numpy's float64 one, bit for bit Python's.

    >>> format_bytes_many([512, 131072, 17179869184])
    ['512 B', '128 KiB', '16 GiB']
    """
    values = np.asarray(num_bytes, dtype=float).ravel()
    units = DECIMAL_UNITS if decimal else BINARY_UNITS
    sizes = np.array([size for _, size in units] + [1], dtype=float)
    names = [name for name, _ in units] + ["B"]
    finite = np.isfinite(values)
    # The first unit (largest first) the value reaches; the last entry (bytes) when it reaches none.
    reached = np.abs(values)[:, None] >= sizes[None, :-1]
    chosen = np.where(reached.any(axis=1), reached.argmax(axis=1), len(units))
    scaled = values / sizes[chosen]
    return [
        f"{_trim(value, decimals)} {names[index]}" if ok else "—"
        for value, index, ok in zip(scaled.tolist(), chosen.tolist(), finite.tolist(), strict=True)
    ]


def format_gib(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a memory size in GiB whatever its magnitude (for tables and axes).

    >>> format_gib(2 * 2**30)
    '2 GiB'
    """
    return f"{_trim(gib(num_bytes), decimals)} GiB"


def format_gb(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a memory size in decimal GB (10**9 bytes) whatever its magnitude, as a seed or vendor writes it.

    >>> format_gb(327_680_000_000)
    '327.68 GB'
    """
    return f"{_trim(gb(num_bytes), decimals)} GB"


def format_bandwidth(bytes_per_s: float, *, decimals: int = 2) -> str:
    """Format a bandwidth in decimal GB/s, or TB/s from 1 TB/s up.

    >>> format_bandwidth(3.35e12)
    '3.35 TB/s'
    >>> format_bandwidth(936e9)
    '936 GB/s'
    """
    value = float(bytes_per_s)
    if abs(value) >= TB:
        return f"{_trim(value / TB, decimals)} TB/s"
    return f"{_trim(value / GB, decimals)} GB/s"


def format_flops(flop_per_s: float, *, decimals: int = 1) -> str:
    """Format a compute rate in decimal TFLOP/s.

    >>> format_flops(989.4e12)
    '989.4 TFLOP/s'
    """
    return f"{_trim(float(flop_per_s) / TFLOP, decimals)} TFLOP/s"


def format_seconds(seconds: float, *, decimals: int = 1) -> str:
    """Format a duration as µs, ms, s, min or h, whichever reads best.

    >>> format_seconds(0.0978)
    '97.8 ms'
    """
    value = float(seconds)
    if not math.isfinite(value):
        return "—"
    if abs(value) >= 3600:
        return f"{_trim(value / 3600, decimals)} h"
    if abs(value) >= 60:
        return f"{_trim(value / 60, decimals)} min"
    if abs(value) >= 1:
        return f"{_trim(value, decimals)} s"
    if abs(value) >= 1e-3:
        return f"{_trim(value * 1e3, decimals)} ms"
    return f"{_trim(value * 1e6, decimals)} µs"


def format_tokens(tokens: float) -> str:
    """Format a token count with thousands separators.

    >>> format_tokens(31232)
    '31,232'
    """
    return f"{round(float(tokens)):,}"


def format_flop(flops: float, *, decimals: int = 2) -> str:
    """Format a count of FLOPs (not a rate) in GFLOP, TFLOP or PFLOP.

    >>> format_flop(16.5e12)
    '16.5 TFLOP'
    >>> format_flop(3.2e10)
    '32 GFLOP'
    """
    value = float(flops)
    for unit, size in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9)):
        if abs(value) >= size:
            return f"{_trim(value / size, decimals)} {unit}"
    return f"{_trim(value, decimals)} FLOP"


def format_quantity(value: float) -> str:
    """A number with as many decimals as it needs: two below 10, one below 1,000, none above.

    >>> format_quantity(1.0315), format_quantity(295.343), format_quantity(6620.29)
    ('1.03', '295.3', '6,620')
    """
    number = float(value)
    decimals = 2 if abs(number) < 10 else 1 if abs(number) < 1000 else 0
    return _trim(number, decimals)


def format_flop_per_byte(intensity: float) -> str:
    """Format an arithmetic intensity in FLOP/byte.

    >>> format_flop_per_byte(295.343)
    '295.3 FLOP/byte'
    """
    return f"{format_quantity(intensity)} FLOP/byte"


def format_seconds_in_s(seconds: float, *, decimals: int = 1) -> str:
    """Format a duration in seconds whatever its size, to set it beside a figure quoted in seconds.

    >>> format_seconds_in_s(97.8149)
    '97.8 s'
    """
    value = float(seconds)
    if not math.isfinite(value):
        return "—"
    text = f"{value:,.{decimals}f}"
    return f"{text.rstrip('0').rstrip('.') if '.' in text else text} s"


def format_tokens_per_s(rate: float, *, unit: bool = True) -> str:
    """Format a token rate so that a slow one does not read as zero: '0.32', '58.8', '6,620 tokens/s'.

    ``unit=False`` leaves out ' tokens/s' (for a metric whose label names it).

    >>> format_tokens_per_s(6620.29), format_tokens_per_s(0.3217), format_tokens_per_s(58.81, unit=False)
    ('6,620 tokens/s', '0.32 tokens/s', '58.8')
    """
    if not math.isfinite(float(rate)):
        return "—"
    return format_quantity(rate) + (" tokens/s" if unit else "")


def _trim(value: float, decimals: int) -> str:
    """Round to `decimals` places and drop trailing zeros ('16.00' → '16')."""
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
