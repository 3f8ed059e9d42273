"""Number formats and their size in bytes per stored value.

Bytes per value are floats: INT4 is 0.5 byte, not ``4 // 8 == 0``.
"""

from __future__ import annotations

from .errors import KvError

__all__ = [
    "BYTES_PER_VALUE",
    "bytes_per_value",
    "dtype_name",
    "grouped_bytes_per_value",
]

#: Bytes per stored value for each supported format (IEEE / OCP FP8 / integer).
BYTES_PER_VALUE: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    # OCP Microscaling MXFP4: 32 FP4 (E2M1) values share one 8-bit scale → 4 + 8/32 = 4.25 bits
    # (OCP MX spec v1.0, 2023; the format of gpt-oss's MoE weights).
    "mxfp4": 4.25 / 8,
    # bitsandbytes NF4 with double quantisation: 4 bits, an 8-bit absmax per 64 values and an FP32
    # second-level scale per 256 blocks → 4 + 8/64 + 32/16384 ≈ 4.127 bits (Dettmers et al. 2023, QLoRA §3).
    "nf4": (4 + 8 / 64 + 32 / (64 * 256)) / 8,
}

_ALIASES = {
    "float32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float8": "fp8",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
}


def dtype_name(name: str) -> str:
    """Normalise a dtype name (``bfloat16`` → ``bf16``); ValueError if unknown."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in BYTES_PER_VALUE:
        known = ", ".join(BYTES_PER_VALUE)
        raise KvError("unknown_dtype", f"unknown dtype {name!r}: use one of {known}", value=str(name), known=known)
    return key


def bytes_per_value(name: str) -> float:
    """Bytes needed to store one value in format `name`.

    >>> bytes_per_value("int4")
    0.5
    """
    return BYTES_PER_VALUE[dtype_name(name)]


def grouped_bytes_per_value(
    bits: float, *, group_size: int = 128, scale_bytes: float = 2.0, zero_point_bytes: float = 0.0
) -> float:
    """Effective bytes per value of a group-quantised format, scales included.

    Formula: bits / 8 + (scale_bytes + zero_point_bytes) / group_size  [bytes/value].
    INT4 with one FP16 scale per 128 values costs 0.5 + 2/128 = 0.515625 bytes,
    3 % more than the bare half byte (the layout of GPTQ/AWQ-style weights and of
    KIVI-style KV caches; Lin et al. 2024, AWQ; Liu et al. 2024, KIVI).

    >>> grouped_bytes_per_value(4, group_size=128)
    0.515625
    """
    if group_size <= 0:
        raise KvError(
            "not_positive", "group_size must be a positive number of values", name="group size", value=group_size
        )
    return bits / 8.0 + (scale_bytes + zero_point_bytes) / group_size
