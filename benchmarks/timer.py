"""The benchmarks' one clock: the median wall time of a piece of work, after a warm-up call."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(work: Callable[[], object], *, repeats: int = 30) -> float:
    """Median wall time of `work` in milliseconds over `repeats` runs (after one warm-up call)."""
    work()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)
