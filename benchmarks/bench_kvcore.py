"""Speed of kvcore's vectorised formulas (run: python benchmarks/bench_kvcore.py).

Goals (issue 2): a 1,000 × 1,000 context × concurrency grid of KV bytes in under
20 ms; every model × 2,000 context points reported. Medians of repeated runs.
Measured, not asserted: timings belong here, not in the test suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # a script, not a test: find kvcore beside it
import kvcore as kv
from benchmarks.timer import median_ms


def main() -> None:
    models = kv.load_models()
    gpus = kv.load_gpus()
    context = np.linspace(1, 131_072, 1000)[:, None]
    users = np.arange(1, 1001)[None, :]
    llama = models["llama-3.1-8b"]
    gemma = models["gemma-3-27b"]
    points = np.linspace(1, 131_072, 2000)

    rows = [
        ("KV bytes, 1,000 × 1,000 grid, Llama 3.1 8B (goal < 20 ms)",
         median_ms(lambda: kv.kv_cache_bytes(llama, context_tokens=context, concurrency=users))),
        ("KV bytes, 1,000 × 1,000 grid, Gemma 3 27B (sliding + global)",
         median_ms(lambda: kv.kv_cache_bytes(gemma, context_tokens=context, concurrency=users))),
        (f"KV bytes, all {len(models)} models × 2,000 context points",
         median_ms(lambda: [kv.sequence_kv_bytes(m, context_tokens=points) for m in models.values()], repeats=10)),
        ("Decode step time, 2,000 context points",
         median_ms(lambda: kv.decode_step_s(kv.decode_bytes_per_step(llama, context_tokens=points).total,
                                            bandwidth_bytes_per_s=gpus["h100-sxm"].bandwidth_bytes_per_s))),
        ("vLLM pool report (incl. estimated max model len)",
         median_ms(lambda: kv.pool_report(llama, kv_pool_bytes=40 * kv.GiB, max_model_len=131_072))),
        ("Load and validate data/models.csv + data/gpus.csv",
         median_ms(lambda: (kv.load_models(), kv.load_gpus()), repeats=10)),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:8.3f} ms")


if __name__ == "__main__":
    main()
