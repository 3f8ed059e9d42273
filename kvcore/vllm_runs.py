"""Real vLLM start-ups (data/vllm_logs/) beside what kvcore estimates for them from the GPU alone.

Each file of data/vllm_logs/ is one start-up copied from a public issue, notebook or post: a
header of ``# key: value`` lines (source, vllm release, model id of data/models.csv, GPU id of
data/gpus.csv with its count, the flags, the checkpoint's format, the outcome) and the log lines
verbatim (:func:`kvcore.vllm_log.read_log_header`). A start-up is *excluded* (``# excluded:``,
with the reason) when something outside the GPU, the model and the flags decided it — other
processes on the card, a virtual GPU — or when the thread does not say which GPU or release ran.

:func:`compare_startup` runs :func:`kvcore.vllm_startup.vllm_startup` with the header's settings and
sets its pool and verdict beside the log's: the figures the README's table reports and the golden
test (tests/kvcore/test_vllm_runs.py) holds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from .data import DATA_DIR, load_gpus, load_models
from .errors import KvError
from .hardware import GpuSpec
from .model import ModelSpec
from .units import GiB
from .vllm_log import VllmFlags, VllmLog, log_body, parse_vllm_log, read_log_header, read_vllm_flags
from .vllm_startup import VllmStartup, vllm_startup
from .vllm_versions import Entry

__all__ = [
    "LOG_TOLERANCE_BYTES",
    "LOG_TOLERANCE_SHARE",
    "VLLM_LOGS_DIR",
    "LoggedStartup",
    "StartupComparison",
    "compare_startup",
    "load_logged_startups",
]

#: Where the real start-ups live.
VLLM_LOGS_DIR = DATA_DIR / "vllm_logs"
#: An estimate "agrees" with a log when it is within max(5 %, 0.3 GiB) of the logged pool (issue 8's bar).
LOG_TOLERANCE_SHARE = 0.05
LOG_TOLERANCE_BYTES = 0.3 * GiB

#: The line vLLM V1 prints when its sampler is FlashInfer's (vllm/v1/sample/ops/topk_topp_sampler.py).
FLASHINFER_SAMPLER_LINE = "Using FlashInfer for top-p & top-k sampling"

_GPU_FIELD = re.compile(r"^\s*([a-z0-9][a-z0-9\-]*)(?:\s*[x×]\s*(\d+))?")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedStartup:
    """One real start-up: its header (settings, source, outcome) and the parsed log."""

    name: str
    header: dict[str, str]
    log: VllmLog
    flags: VllmFlags
    flashinfer_sampler: bool = False

    @property
    def source(self) -> str:
        """Where the log was copied from."""
        return self.header.get("source", "")

    @property
    def excluded(self) -> str:
        """Why the start-up cannot be estimated from the GPU alone ("" when it can)."""
        return self.header.get("excluded", "")

    @property
    def release(self) -> str:
        """The vLLM release the header names (its first word: "0.6.4.post1")."""
        return self.header.get("vllm", "").split()[0] if self.header.get("vllm") else ""

    @property
    def model_id(self) -> str:
        """The data/models.csv id of the model (the header's first word)."""
        return self.header.get("model", "").split()[0] if self.header.get("model") else ""

    @property
    def gpu_id(self) -> str:
        """The data/gpus.csv id of the GPU ("a100-80gb" of "a100-80gb x4")."""
        match = _GPU_FIELD.match(self.header.get("gpu", "").lower())
        return match.group(1) if match else ""

    @property
    def weights(self) -> str:
        """The checkpoint's format as the header names it ("bf16", "awq-int4", …; first word)."""
        return self.header.get("weights", "bf16").split()[0]

    @property
    def entry(self) -> Entry:
        """``vllm serve`` or the ``LLM`` class (their defaults differ)."""
        return "llm" if self.header.get("entry", "serve").startswith("llm") else "serve"

    @property
    def refused(self) -> bool:
        """The log shows vLLM refusing to start."""
        return self.header.get("outcome", "").startswith("refused")

    @property
    def logged_pool_bytes(self) -> float | None:
        """The pool the log prints: available KV memory, V0's kv_cache_size, or the refusal's figure."""
        return self.log.kv_pool_bytes

    @property
    def logged_stage_pools_bytes(self) -> tuple[float, ...]:
        """Each pipeline stage's printed pool, first stage first (empty without pp or per-rank lines)."""
        if self.flags.pipeline_parallel_size < 2:
            return ()
        return self.log.stage_kv_pools_bytes(self.flags.tensor_parallel_size)


def load_logged_startups(folder: str | Path = VLLM_LOGS_DIR) -> list[LoggedStartup]:
    """Every start-up of `folder`, sorted by file name (KvError ``data_unreadable`` if it cannot be read)."""
    runs = []
    for path in sorted(Path(folder).glob("*.txt")):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise KvError(
                "data_unreadable", f"cannot read {path}: {error.strerror}", file=str(path), reason=str(error.strerror)
            ) from None
        header = read_log_header(text)
        runs.append(
            LoggedStartup(
                name=path.stem,
                header=header,
                log=parse_vllm_log(log_body(text)),
                flags=read_vllm_flags(header.get("flags", "")),
                flashinfer_sampler=FLASHINFER_SAMPLER_LINE in text
                or header.get("sampler", "").startswith("flashinfer"),
            )
        )
    return runs


@dataclass(frozen=True, slots=True, kw_only=True)
class StartupComparison:
    """kvcore's estimate of one logged start-up beside the log: pools in bytes, the verdicts."""

    run: LoggedStartup
    estimate: VllmStartup
    logged_pool_bytes: float | None
    from_logged_pool: VllmStartup | None = None
    stage: int = 0

    @property
    def estimated_pool_bytes(self) -> float:
        """kvcore's pool for the GPU the log's figure is of: the compared pipeline stage's, else the one pool."""
        if self.estimate.stages:
            return self.estimate.stages[self.stage].kv_pool_bytes
        return self.estimate.log.kv_pool_bytes

    @property
    def error_bytes(self) -> float:
        """estimate − log (NaN when the log prints no pool)."""
        if self.logged_pool_bytes is None:
            return math.nan
        return self.estimated_pool_bytes - self.logged_pool_bytes

    @property
    def relative_error(self) -> float:
        """(estimate − log) / |log| (NaN without a logged pool)."""
        if self.logged_pool_bytes is None or self.logged_pool_bytes == 0:
            return math.nan
        return self.error_bytes / abs(self.logged_pool_bytes)

    @property
    def within_tolerance(self) -> bool:
        """|estimate − log| ≤ max(5 % of the log, 0.3 GiB)."""
        if self.logged_pool_bytes is None:
            return False
        bound = max(LOG_TOLERANCE_SHARE * abs(self.logged_pool_bytes), LOG_TOLERANCE_BYTES)
        return abs(self.error_bytes) <= bound

    @property
    def verdict_right(self) -> bool:
        """kvcore's fits / won't-start matches the log's outcome."""
        return self.estimate.fits == (not self.run.refused)


def compare_startup(
    run: LoggedStartup, *, models: dict[str, ModelSpec] | None = None, gpus: dict[str, GpuSpec] | None = None
) -> StartupComparison:
    """Estimate `run` from its GPU, model and flags alone (:func:`kvcore.vllm_startup.vllm_startup`) and compare.

    ``from_logged_pool`` is the same start-up handed the logged pool (vLLM's ``--kv-cache-memory``):
    its blocks, tokens and concurrency check kvcore's block arithmetic apart from the budget. The
    logged pool is "Available KV cache memory" / V0's "kv_cache_size" / the refusal's available
    figure; a log that prints only blocks or tokens gives blocks · block_size · bytes per token.
    With pipeline parallelism each stage prints its pool: the compared ``stage`` is the one whose
    blocks the server kept (the fewest, from the printed pools), and the replay gets every stage's.
    KvError ``log_not_estimable`` for an excluded start-up or an unknown model or GPU id.
    """
    models = load_models() if models is None else models
    gpus = load_gpus() if gpus is None else gpus
    if run.excluded or run.model_id not in models or run.gpu_id not in gpus or not run.release:
        raise KvError(
            "log_not_estimable",
            f"{run.name}: {run.excluded or 'its model, GPU or release is not in the data'}",
            name=run.name,
        )
    model, gpu = models[run.model_id], gpus[run.gpu_id]
    flags = run.flags
    settings = dict(
        version=run.release,
        utilization=flags.gpu_memory_utilization or 0.9,
        # Not set by a flag: the checkpoint's own config, as vLLM printed it (an Instruct checkpoint's
        # max_position_embeddings can differ from the base model's row in data/models.csv).
        max_model_len=flags.max_model_len or run.log.max_model_len,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        max_num_seqs=flags.max_num_seqs,
        kv_dtype=flags.kv_cache_dtype,
        weights_dtype=run.weights,
        enforce_eager=flags.enforce_eager,
        entry=run.entry,
        block_size=flags.block_size,
        tp=flags.tensor_parallel_size,
        pp=flags.pipeline_parallel_size,
        flashinfer_sampler=True if run.flashinfer_sampler else None,
    )
    estimate = vllm_startup(model, gpu, **settings)  # type: ignore[arg-type]
    stage_pools = run.logged_stage_pools_bytes
    if stage_pools:
        staged = vllm_startup(model, gpu, kv_cache_memory_bytes=stage_pools, **settings)  # type: ignore[arg-type]
        stage = staged.tightest_stage
        return StartupComparison(
            run=run, estimate=estimate, logged_pool_bytes=stage_pools[stage], from_logged_pool=staged, stage=stage
        )
    logged = run.logged_pool_bytes
    if logged is None:
        per_token = estimate.log.bytes_per_token  # the estimate's own bytes per token: its KV dtype, tp and stage
        if run.log.gpu_blocks is not None:
            logged = run.log.gpu_blocks * estimate.block_size * per_token
        elif run.log.gpu_kv_cache_tokens is not None:
            logged = run.log.gpu_kv_cache_tokens * per_token
    replayed: VllmStartup | None = None
    if logged is not None:
        replayed = vllm_startup(model, gpu, kv_cache_memory_bytes=logged, **settings)  # type: ignore[arg-type]
    return StartupComparison(run=run, estimate=estimate, logged_pool_bytes=logged, from_logged_pool=replayed)
