"""Accelerators: memory, bandwidth and tensor throughput, in base units."""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import checks
from .units import GB, TFLOP, GiB, KiB, MiB

__all__ = [
    "GpuSpec",
    "gpu",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    """One accelerator, with every figure in bytes, bytes/s or FLOP/s.

    ``fp8_dense_flop_per_s`` is NaN where the chip has no FP8 tensor cores;
    on-chip fields are NaN where the vendor does not publish them.
    """

    id: str
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    bf16_dense_flop_per_s: float
    fp8_dense_flop_per_s: float = math.nan
    vendor: str = ""
    category: str = ""
    memory_type: str = ""
    l2_cache_bytes: float = math.nan
    sm_count: float = math.nan
    sram_per_sm_bytes: float = math.nan
    source_url: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        where = f"GPU {self.id!r}"
        checks.positive("memory", self.memory_bytes, where=where)
        checks.positive("bandwidth", self.bandwidth_bytes_per_s, where=where)
        checks.positive("BF16 dense throughput", self.bf16_dense_flop_per_s, where=where)

    @property
    def sram_bytes(self) -> float:
        """Total L1/shared-memory SRAM over all SMs: sm_count · sram_per_sm (NaN if unknown)."""
        return self.sm_count * self.sram_per_sm_bytes

    @property
    def has_fp8(self) -> bool:
        """True if the chip has FP8 tensor cores."""
        return math.isfinite(self.fp8_dense_flop_per_s)


def gpu(
    *,
    id: str,
    name: str,
    memory_gib: float,
    bandwidth_gb_s: float,
    bf16_dense_tflops: float,
    fp8_dense_tflops: float = math.nan,
    l2_cache_mib: float = math.nan,
    sm_count: float = math.nan,
    sram_per_sm_kib: float = math.nan,
    **text: str,
) -> GpuSpec:
    """Build a GpuSpec from datasheet units (GiB, GB/s, TFLOP/s, MiB, KiB): converted once, here."""
    return GpuSpec(
        id=id,
        name=name,
        memory_bytes=memory_gib * GiB,
        bandwidth_bytes_per_s=bandwidth_gb_s * GB,
        bf16_dense_flop_per_s=bf16_dense_tflops * TFLOP,
        fp8_dense_flop_per_s=fp8_dense_tflops * TFLOP,
        l2_cache_bytes=l2_cache_mib * MiB,
        sm_count=sm_count,
        sram_per_sm_bytes=sram_per_sm_kib * KiB,
        **text,
    )
