"""Quantizing the KV cache: bytes per value with scales, and what each format does to K and V.

Storing K and V in FP8 or INT8 instead of FP16/BF16 halves the cache; INT4 quarters
it (plus the scales that make integers usable). Seed 000: "something to measure on
your task, not to assume"; seed 002: FP8 cache, "minimal noise in V, moderate in K";
seed 004: FP8 first, INT4 only after measuring recall on your own traffic.

The round trips below are a synthetic demonstration, vectorised with numpy: they show
why keys suffer more than values (a few key channels carry much larger values than
the rest, documented by KIVI, Liu et al. 2024, arXiv:2402.02750, and KVQuant, Hooper
et al. 2024, arXiv:2401.18079), and why the axis the scales are shared along matters.
They do not say how a model's answers change: only an evaluation on one's own task does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks
from .dtypes import dtype_name, grouped_bytes_per_value
from .errors import KvError

__all__ = [
    "FP8_E4M3_MANTISSA_BITS",
    "FP8_E4M3_MAX",
    "FP8_E4M3_MIN_NORMAL_EXPONENT",
    "KV_FORMATS",
    "SCALE_AXES",
    "SCALE_BYTES",
    "fp8_round_trip",
    "int_round_trip",
    "max_abs_error",
    "outlier_channel_indices",
    "relative_rms_error",
    "round_to_bf16",
    "round_to_fp8_e4m3",
    "round_to_fp16",
    "round_trip",
    "stored_bytes_per_value",
    "synthetic_keys",
    "synthetic_values",
]

ArrayLike = Any

#: The formats the lesson compares, from the baseline to the smallest.
KV_FORMATS = ("bf16", "fp8", "int8", "int4")
#: Largest finite FP8 E4M3 value (OCP 8-bit floating point spec v1.0, "E4M3FN": 1.75 · 2**8).
FP8_E4M3_MAX = 448.0
#: E4M3: 3 mantissa bits; exponents below −6 are subnormal (spacing 2**−9).
FP8_E4M3_MANTISSA_BITS = 3
FP8_E4M3_MIN_NORMAL_EXPONENT = -6
#: Scales are shared by the values of one token (across channels) or of one channel (across tokens).
SCALE_AXES = ("token", "channel")
#: Scale stored per group: one FP16 number (KIVI's and most INT4 kernels' layout).
SCALE_BYTES = 2.0


def stored_bytes_per_value(fmt: str, *, group_size: int = 128, scale_bytes: float = SCALE_BYTES) -> float:
    """Bytes one cached value really takes, scales included.

    bf16/fp16: 2; fp8: 1 (one scale for the whole tensor, negligible; vLLM's
    ``--kv-cache-dtype fp8``); int8 and int4: bits/8 + scale_bytes / group_size
    (one scale per group of values; ``kvcore.dtypes.grouped_bytes_per_value``).
    INT4 in groups of 128: 0.5 + 2/128 = 0.515625 B, not the nominal 0.5.

    >>> stored_bytes_per_value("int4", group_size=32)
    0.5625
    """
    name = dtype_name(fmt)
    if name in ("int8", "int4"):
        bits = 8 if name == "int8" else 4
        return grouped_bytes_per_value(bits, group_size=group_size, scale_bytes=scale_bytes)
    if name not in ("fp32", "fp16", "bf16", "fp8"):
        raise KvError(
            "not_a_kv_format",
            f"{fmt!r} is not a KV cache format: use one of {', '.join(KV_FORMATS)} or fp16",
            value=str(fmt),
            known=f"{', '.join(KV_FORMATS)}, fp16",
        )
    return {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}[name]


# ---------------------------------------------------------------- rounding to a format


def round_to_bf16(values: ArrayLike) -> np.ndarray:
    """Nearest BF16 number (8 exponent bits, 7 mantissa bits), round half to even, as float64.

    Keeps the top 16 bits of the float32 pattern after adding half of the dropped part.
    """
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((bits >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)
    kept = (bits + rounding) & np.uint32(0xFFFF0000)
    return kept.view(np.float32).astype(np.float64)


def round_to_fp16(values: ArrayLike) -> np.ndarray:
    """Nearest IEEE FP16 number (5 exponent bits, 10 mantissa bits), as float64."""
    return np.asarray(values, dtype=np.float64).astype(np.float16).astype(np.float64)


def round_to_fp8_e4m3(values: ArrayLike) -> np.ndarray:
    """Nearest FP8 E4M3 number, saturating at ±448, as float64.

    Spacing in the binade [2**e, 2**(e+1)) is 2**(e − 3) (3 mantissa bits); below
    2**−6 the numbers are subnormal with the fixed spacing 2**−9. Round half to even
    (numpy's rounding), then clip to the largest finite value 448. Source: OCP 8-bit
    Floating Point Specification (OFP8) v1.0, 2023; Micikevicius et al. 2022, arXiv:2209.05433.

    >>> round_to_fp8_e4m3([1.06, 300.0, 1000.0]).tolist()
    [1.0, 288.0, 448.0]
    """
    x = np.asarray(values, dtype=np.float64)
    magnitude = np.minimum(np.abs(x), FP8_E4M3_MAX)
    smallest = 2.0**FP8_E4M3_MIN_NORMAL_EXPONENT
    exponent = np.floor(np.log2(np.maximum(magnitude, smallest)))
    spacing = 2.0 ** (exponent - FP8_E4M3_MANTISSA_BITS)
    rounded = np.minimum(np.round(magnitude / spacing) * spacing, FP8_E4M3_MAX)
    return np.sign(x) * rounded


# ---------------------------------------------------------------- quantize, then read back


def fp8_round_trip(values: ArrayLike) -> np.ndarray:
    """Store in FP8 E4M3 with one per-tensor scale, read back: round(x / s) · s, s = max|x| / 448.

    The per-tensor scale is how vLLM and TensorRT-LLM store an FP8 KV cache (a scale
    per layer's K or V). A floating-point format keeps its relative precision over a
    wide range, so a few large channels hurt it little.
    """
    x = np.asarray(values, dtype=np.float64)
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    scale = peak / FP8_E4M3_MAX if peak > 0 else 1.0
    return round_to_fp8_e4m3(x / scale) * scale


def int_round_trip(values: ArrayLike, *, bits: int, group_size: int, axis: str = "token") -> np.ndarray:
    """Symmetric integer quantization with one absmax scale per group, read back.

    For a tensor of shape (tokens, channels): axis="token" shares a scale among
    `group_size` channels of one token; axis="channel" among `group_size` tokens of
    one channel (KIVI quantizes keys per channel and values per token). Per group:
    s = max|x| / (2**(bits−1) − 1);  x̂ = clip(round(x / s), −q, q) · s  (q = 127 for
    INT8, 7 for INT4). One large channel inflates s for every value sharing it.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise KvError(
            "bad_tensor_shape", f"expected a (tokens, channels) tensor, got shape {x.shape}", shape=str(x.shape)
        )
    if axis not in SCALE_AXES:
        raise KvError(
            "unknown_scale_axis",
            f"axis must be one of {', '.join(SCALE_AXES)}, got {axis!r}",
            value=str(axis),
            known=", ".join(SCALE_AXES),
        )
    bits = checks.whole("bits", bits, minimum=2)
    group_size = checks.whole("group size", group_size)
    rows = x if axis == "token" else x.T  # groups run along the last axis
    if rows.shape[1] % group_size:
        raise KvError(
            "group_size_not_dividing",
            f"group size {group_size} must divide the {rows.shape[1]} values it groups",
            group_size=group_size,
            values=rows.shape[1],
        )
    groups = rows.reshape(rows.shape[0], -1, group_size)
    top = float(2 ** (bits - 1) - 1)
    peak = np.max(np.abs(groups), axis=-1, keepdims=True)
    scale = np.where(peak > 0, peak / top, 1.0)
    restored = (np.clip(np.round(groups / scale), -top, top) * scale).reshape(rows.shape)
    return restored if axis == "token" else restored.T


def round_trip(values: ArrayLike, fmt: str, *, group_size: int = 128, axis: str = "token") -> np.ndarray:
    """What reading `values` back from a cache in format `fmt` gives (bf16, fp16, fp8, int8, int4).

    Integer formats use `group_size` and `axis` (``int_round_trip``); FP8 a per-tensor
    scale (``fp8_round_trip``); BF16 and FP16 plain rounding.
    """
    name = dtype_name(fmt)
    if name == "bf16":
        return round_to_bf16(values)
    if name == "fp16":
        return round_to_fp16(values)
    if name == "fp8":
        return fp8_round_trip(values)
    if name in ("int8", "int4"):
        return int_round_trip(values, bits=8 if name == "int8" else 4, group_size=group_size, axis=axis)
    raise KvError(
        "not_a_kv_format",
        f"{fmt!r} is not a KV cache format: use one of {', '.join(KV_FORMATS)} or fp16",
        value=str(fmt),
        known=f"{', '.join(KV_FORMATS)}, fp16",
    )


# ---------------------------------------------------------------- how much was lost


def relative_rms_error(original: ArrayLike, restored: ArrayLike) -> float:
    """sqrt(mean((x − x̂)²)) / sqrt(mean(x²)): the error's size relative to the signal's (0 = exact)."""
    x = np.asarray(original, dtype=np.float64)
    error = x - np.asarray(restored, dtype=np.float64)
    signal = float(np.sqrt(np.mean(x**2)))
    if signal == 0:
        raise KvError("all_zeros", "the original tensor is all zeros: a relative error is undefined")
    return float(np.sqrt(np.mean(error**2))) / signal


def max_abs_error(original: ArrayLike, restored: ArrayLike) -> float:
    """max |x − x̂|: the worst single value, in the tensor's own units."""
    return float(np.max(np.abs(np.asarray(original, dtype=np.float64) - np.asarray(restored, dtype=np.float64))))


# ---------------------------------------------------------------- synthetic K and V


def synthetic_values(*, tokens: int = 512, channels: int = 128, seed: int = 0) -> np.ndarray:
    """A V-like tensor (tokens, channels): independent standard normals, no outlier channel. Seeded."""
    tokens, channels = checks.whole("tokens", tokens), checks.whole("channels", channels)
    return np.random.default_rng(seed).standard_normal((tokens, channels))


def outlier_channel_indices(*, channels: int = 128, outlier_channels: int = 4, seed: int = 0) -> np.ndarray:
    """Which channels of the synthetic keys are outliers (sorted, chosen by the seeded generator)."""
    checks.whole("outlier channels", outlier_channels, minimum=0)
    if outlier_channels > channels:
        raise KvError(
            "too_many_outliers",
            f"cannot pick {outlier_channels} outlier channels out of {channels}",
            outliers=outlier_channels,
            channels=channels,
        )
    chosen = np.random.default_rng([seed, 1]).choice(channels, size=outlier_channels, replace=False)
    return np.sort(chosen)


def synthetic_keys(
    *, tokens: int = 512, channels: int = 128, outlier_channels: int = 4, outlier_scale: float = 10.0, seed: int = 0
) -> np.ndarray:
    """A K-like tensor (tokens, channels): standard normals, with a few channels `outlier_scale` times larger.

    Real keys have a few channels whose magnitude is much larger than the rest, in
    every token (KIVI, Liu et al. 2024, §3; KVQuant, Hooper et al. 2024, §3.1); values
    do not. Same seed, same tensor.
    """
    checks.positive("outlier scale", outlier_scale)
    keys = synthetic_values(tokens=tokens, channels=channels, seed=seed)
    scale = np.ones(channels)
    scale[outlier_channel_indices(channels=channels, outlier_channels=outlier_channels, seed=seed)] = outlier_scale
    return keys * scale
