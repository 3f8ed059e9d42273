"""Print the README's table of real vLLM start-ups beside kvcore's estimate from the GPU alone.

    .venv/bin/python scripts/vllm_runs_table.py

One row per start-up of data/vllm_logs/ that can be estimated (kvcore.vllm_runs), then the
excluded ones with their reason; tests/kvcore/test_vllm_runs.py checks the README holds this table.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kvcore
from kvcore.units import GiB

BEGIN = "<!-- vllm-runs-table:begin -->"
END = "<!-- vllm-runs-table:end -->"


def table_markdown() -> str:
    """The table, its summary line and the excluded start-ups, as Markdown."""
    models, gpus = kvcore.load_models(), kvcore.load_gpus()
    runs = kvcore.load_logged_startups()
    comparisons = [kvcore.compare_startup(run, models=models, gpus=gpus) for run in runs if not run.excluded]
    rows = [_row(c) for c in comparisons]
    errors = [abs(c.relative_error) for c in comparisons if not math.isnan(c.relative_error)]
    within = sum(c.within_tolerance for c in comparisons)
    right = sum(c.verdict_right for c in comparisons)
    return "\n".join(
        [
            BEGIN,
            "| start-up | vLLM (era) | model | GPU | logged pool, GiB | kvcore, GiB | error "
            "| within max(5 %, 0.3 GiB) | kvcore's verdict |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"{within} of {len(comparisons)} within max(5 %, 0.3 GiB) ({100 * within / len(comparisons):.0f} %); "
            f"verdict right on {right} of {len(comparisons)}; median |error| {100 * statistics.median(errors):.1f} %.",
            "",
            "Excluded (something other than the GPU, the model and the flags decided them, or the thread does not "
            "say which GPU or release ran):",
            "",
            *(f"- `{run.name}`: {run.excluded}." for run in runs if run.excluded),
            END,
        ]
    )


def _row(c: kvcore.StartupComparison) -> str:
    """One start-up's row: where it ran, the logged pool, kvcore's, the error and the verdicts."""
    run = c.run
    gpu = run.header.get("gpu", "").split("(")[0].strip()
    logged = "—" if c.logged_pool_bytes is None else f"{c.logged_pool_bytes / GiB:.2f}"
    if c.estimate.stages and c.logged_pool_bytes is not None:
        logged += f" (stage {c.stage + 1} of {len(c.estimate.stages)})"
    verdict = "starts" if c.estimate.fits else "refuses"
    return (
        f"| `{run.name}` | {run.release} ({c.estimate.release.era}) | {run.model_id} | {gpu} "
        f"| {logged} | {c.estimated_pool_bytes / GiB:.2f} | {100 * c.relative_error:+.1f} % "
        f"| {'yes' if c.within_tolerance else 'no'} | {verdict} ({'right' if c.verdict_right else 'WRONG'}) |"
    )


if __name__ == "__main__":
    print(table_markdown())
