"""Units and formatting: bytes in, bytes out; words only at the edges.

Memory is measured in binary units (KiB = 2**10 bytes, GiB = 2**30 bytes), as
operating systems, PyTorch and vLLM report it. Rates are decimal (1 GB/s = 1e9
bytes/s, 1 TFLOP/s = 1e12 FLOP/s), as datasheets print them. Every formatter
names the unit it prints, so a reader always knows which one is meant.
"""

from __future__ import annotations

import math

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


def format_bytes(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a memory size in binary units, choosing B, KiB, MiB, GiB or TiB.

    >>> format_bytes(131072)
    '128 KiB'
    >>> format_bytes(17179869184)
    '16 GiB'
    """
    value = float(num_bytes)
    if not math.isfinite(value):
        return "—"
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(value) >= size:
            return f"{_trim(value / size, decimals)} {unit}"
    return f"{_trim(value, decimals)} B"


def format_bytes_decimal(num_bytes: float, *, decimals: int = 2) -> str:
    """Format a size in decimal units (kB, MB, GB, TB), the way a seed or a vendor writes it.

    >>> format_bytes_decimal(327_680_000_000)
    '327.68 GB'
    """
    value = float(num_bytes)
    if not math.isfinite(value):
        return "—"
    for unit, size in (("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB)):
        if abs(value) >= size:
            return f"{_trim(value / size, decimals)} {unit}"
    return f"{_trim(value, decimals)} B"


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


def _trim(value: float, decimals: int) -> str:
    """Round to `decimals` places and drop trailing zeros ('16.00' → '16')."""
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
