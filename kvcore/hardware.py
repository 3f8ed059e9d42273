"""Accelerators: memory, bandwidth and tensor throughput, in base units."""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import checks
from .units import GB, TFLOP, GiB, KiB, MiB

__all__ = [
    "ECC_REPORTED_MEMORY_SHARE",
    "REPORTED_MEMORY_SHARE",
    "GpuSpec",
    "gpu",
]

#: Share of a card's nominal memory that torch reports as total when no log gives the figure: the
#: median over data/gpus.csv's logged figures (RTX 3090 23.58/24, A100 40GB 39.38/40, H100 79.10/80,
#: RTX 5090 31.4/32, A100 80GB 79.32/80, H200 139.81/141, B200 178.35/180; tests/kvcore/test_data.py).
REPORTED_MEMORY_SHARE = 0.989
#: The same share for data-centre cards with GDDR memory (T4, L4, A10, L40S), whose ECC is on by default
#: and keeps about 1/16 of the memory: a T4 sold as 16 GB reports 14.74 GiB (vLLM 0.7.2 and 0.8.2 logs).
ECC_REPORTED_MEMORY_SHARE = 14.74 / 16


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
    torch_memory_bytes: float = math.nan
    torch_memory_source: str = ""

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
    def reported_memory_bytes(self) -> float:
        """Total memory as torch reports it (``torch.cuda.mem_get_info()[1]``), the M of vLLM's budget [bytes].

        The card's nominal size less what the driver, ECC and the display keep: an RTX 3090
        sold as 24 GB reports 23.58 GiB (vLLM issue #10517's log), an H100 80GB 79.10 GiB.
        data/gpus.csv's ``torch_memory_gib`` where a real log printed it (its source in
        ``torch_memory_source``); otherwise an estimate, nominal · ``REPORTED_MEMORY_SHARE`` (the
        median share of the cards with a logged figure), or · ``ECC_REPORTED_MEMORY_SHARE`` for a
        data-centre card with GDDR memory, whose ECC is on by default — see ``reported_memory_is_logged``.
        """
        if math.isfinite(self.torch_memory_bytes):
            return self.torch_memory_bytes
        ecc = self.category == "datacenter" and self.memory_type.upper().startswith("GDDR")
        return self.memory_bytes * (ECC_REPORTED_MEMORY_SHARE if ecc else REPORTED_MEMORY_SHARE)

    @property
    def reported_memory_is_logged(self) -> bool:
        """True if ``reported_memory_bytes`` comes from a real log rather than the estimate."""
        return math.isfinite(self.torch_memory_bytes)

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
    torch_memory_gib: float = math.nan,
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
        torch_memory_bytes=torch_memory_gib * GiB,
        **text,
    )
