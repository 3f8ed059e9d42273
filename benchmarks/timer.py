"""The benchmarks' one clock: the median wall time of a piece of work, after a warm-up call."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np


def median_ms(work: Callable[[], object], *, repeats: int = 30) -> float:
    """Median wall time of `work` in milliseconds over `repeats` runs (after one warm-up call)."""
    work()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def host_probe_ms() -> float:
    """The median time of a fixed piece of work made like a rerun's (Python calls, dicts, numpy on small arrays), ms.

    It does not depend on the project's code, so printed beside a benchmark it tells how fast the host was at
    the time: this machine is a virtual one whose speed drifts by 20–25 % within minutes, and two runs compare
    only at a similar probe.
    """

    def work() -> float:
        values = np.arange(64.0)
        total = 0.0
        for step in range(2_000):
            total += float(np.add.reduce(values * step))
            counts = {str(key): key for key in range(20)}
            total += sum(counts.values())
        return total

    return median_ms(work, repeats=15)
