"""Speed of the continuous-batching simulator (run: python benchmarks/bench_scheduler.py).

Goal (issue 4, part 5): 1,000 requests simulated in well under a second. Medians
of repeated runs, after one warm-up; the trace is drawn once, outside the timing.
Measured, not asserted: timings belong here, not in the test suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # a script, not a test: find kvcore beside it
from benchmarks.timer import median_ms
from course import scheduler_presets
from kvcore import scheduler

#: The simulator takes tens of milliseconds a run: fewer repeats than the formulas' benchmark.
REPEATS = 7


def main() -> None:
    rows = []
    for name in scheduler_presets.PRESETS:
        workload, server = scheduler_presets.preset(name)
        trace = scheduler.generate_requests(workload)
        summary = scheduler.summarize(scheduler.simulate(trace, server))
        label = f"{len(trace):,} requests, preset {name!r} ({summary.preemptions} preemptions)"
        rows.append(
            (label, median_ms(lambda trace=trace, server=server: scheduler.simulate(trace, server), repeats=REPEATS))
        )
        if name == "too-small":
            step_by_step = lambda trace=trace, server=server: scheduler.simulate(trace, server, fast_forward=False)  # noqa: E731
            rows.append((f"{len(trace):,} requests, preset {name!r}, step by step (no fast-forward)",
                         median_ms(step_by_step, repeats=REPEATS)))  # fmt: skip
    workload, _ = scheduler_presets.preset("right-sized")
    rows.append(("Draw a 1,000-request trace", median_ms(lambda: scheduler.generate_requests(workload), repeats=30)))
    width = max(len(name) for name, _ in rows)
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:8.1f} ms")


if __name__ == "__main__":
    main()
