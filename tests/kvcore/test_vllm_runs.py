"""Real vLLM start-ups (data/vllm_logs/) against kvcore's estimate from the GPU, the model and the flags alone.

Sources: each log's first line (a GitHub issue, PR, notebook or post; six files the search index
stores without their repository are cited by its file id). The bar is issue 8's: within
max(5 %, 0.3 GiB) of the logged "available KV cache memory" on at least 80 % of them, and the
fits / won't-start verdict right on every one.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import kvcore
from kvcore.units import GiB
from scripts.vllm_runs_table import BEGIN, END, table_markdown

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def models():
    return kvcore.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kvcore.load_gpus()


REQUIRED_HEADER = ("source", "vllm", "vllm-evidence", "model", "weights", "gpu", "flags", "entry", "outcome")


@pytest.fixture(scope="module")
def comparisons(models, gpus):
    return [
        kvcore.compare_startup(run, models=models, gpus=gpus)
        for run in kvcore.load_logged_startups()
        if not run.excluded
    ]


def test_every_estimable_log_states_what_ran_and_every_other_says_why_not():
    runs = kvcore.load_logged_startups()
    for run in runs:
        if run.excluded:
            assert len(run.excluded) > 20, run.name
            continue
        assert [key for key in REQUIRED_HEADER if key not in run.header] == [], run.name
        assert run.header["outcome"].split()[0] in ("started", "refused"), run.name
    # Issue 8 asks for at least 20 start-ups known well enough to estimate from the GPU alone.
    assert sum(not run.excluded for run in runs) >= 20


def test_the_logs_span_the_three_eras_and_the_architectures(comparisons):
    eras = {c.estimate.release.era for c in comparisons}
    assert eras == {"V0", "early V1", "V1"}
    models = {c.run.model_id for c in comparisons}
    assert {"gpt-oss-120b", "qwen3-next-80b-a3b", "llama-3.1-8b"} <= models  # MoE + sliding, hybrid, dense GQA
    assert any(c.run.flags.tensor_parallel_size > 1 for c in comparisons)
    assert any(c.run.refused for c in comparisons)


def test_at_least_80_percent_are_within_5_percent_or_a_third_of_a_gib(comparisons):
    within = [c for c in comparisons if c.within_tolerance]
    assert len(within) / len(comparisons) >= 0.8


def test_the_fits_or_refuses_verdict_is_right_on_every_log(comparisons):
    assert [c.run.name for c in comparisons if not c.verdict_right] == []


def test_the_median_error_is_small(comparisons):
    errors = sorted(abs(c.relative_error) for c in comparisons if not math.isnan(c.relative_error))
    assert errors[len(errors) // 2] < 0.03


def test_the_readme_reports_every_row_as_the_script_computes_it():
    text = README.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == table_markdown(), "run .venv/bin/python scripts/vllm_runs_table.py and paste it"


# --- vLLM issue #10517 (Llama 3.1 8B, RTX 3090, vLLM 0.6.4.post1): the preset of /vllm_pool -------------


def test_issue_10517_at_20k_starts_with_the_logged_blocks_within_one_percent(models, gpus):
    start = kvcore.vllm_startup(models["llama-3.1-8b"], gpus["rtx-3090"], version="0.6.4.post1", max_model_len=20000)
    assert start.fits
    assert start.log.num_blocks == pytest.approx(1952, rel=0.015)  # log: "# GPU blocks: 1952"
    assert start.log.kv_pool_bytes / GiB == pytest.approx(3.81, abs=0.05)


def test_issue_10517_at_29k_refuses_with_the_logged_longest_length_within_two_percent(models, gpus):
    start = kvcore.vllm_startup(models["llama-3.1-8b"], gpus["rtx-3090"], version="0.6.4.post1", max_model_len=29000)
    assert not start.fits
    # log: "larger than the maximum number of tokens that can be stored in KV cache (23648)"
    assert start.log.estimated_max_model_len == pytest.approx(23648, rel=0.02)


def test_the_profile_of_v0_grows_with_max_model_len_and_v1s_does_not(models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-3090"]
    v0 = [kvcore.vllm_startup(model, gpu, version="0.6.4.post1", max_model_len=n).log.budget for n in (20000, 29000)]
    v1 = [kvcore.vllm_startup(model, gpu, version="0.33.0", max_model_len=n).log.budget for n in (20000, 29000)]
    # V0 profiles max(max_model_len, 2048) tokens without chunked prefill: 9,000 more tokens · 108 KiB
    assert v0[1].term_bytes("activation_peak") - v0[0].term_bytes("activation_peak") == pytest.approx(
        9000 * kvcore.forward_values_per_token(model) * 2
    )
    assert v1[0].term_bytes("activation_peak") == v1[1].term_bytes("activation_peak")


def test_handed_the_logged_pool_kvcores_blocks_give_the_logged_tokens_and_concurrency(comparisons):
    checked = 0
    for c in comparisons:
        replayed, log = c.from_logged_pool, c.run.log
        if replayed is None or log.kv_pool_bytes is None:
            continue
        # The pool is printed to 0.01 GiB: allow that rounding, plus one block.
        slack = 0.005 * GiB / log.kv_pool_bytes + 1e-3
        if log.gpu_kv_cache_tokens is not None:
            assert replayed.printed_tokens == pytest.approx(
                log.gpu_kv_cache_tokens, rel=slack, abs=replayed.block_size
            ), c.run.name
            checked += 1
        if log.gpu_blocks is not None:
            assert replayed.log.num_blocks == pytest.approx(log.gpu_blocks, rel=slack, abs=1), c.run.name
            checked += 1
        if log.max_concurrency is not None and c.run.log.max_concurrency_tokens:
            assert replayed.log.max_concurrency == pytest.approx(log.max_concurrency, rel=slack, abs=0.01), c.run.name
    assert checked >= 14


def test_a_hybrid_models_groups_and_block_size_reproduce_vllms_line_exactly(models):
    # vLLM 0.10.2, Qwen3-Next-80B-A3B on 2 × H200 (data/vllm_logs/index7292846353_…): "Available KV cache memory:
    # 44.59 GiB", "GPU KV cache size: 973,760 tokens", "Maximum concurrency for 262,144 tokens per request: 14.77x";
    # its --kv-cache-memory advice line gives the exact pool, 47,878,721,024 bytes.
    model = models["qwen3-next-80b-a3b"]
    assert kvcore.hybrid_block_size(model, tp=2) == 544
    start = kvcore.vllm_startup(
        model, kvcore.load_gpus()["h200"], version="0.10.2", tp=2, kv_cache_memory_bytes=47_878_721_024
    )
    assert (start.log.num_blocks, start.printed_tokens) == (7162, 973_760)
    assert round(start.log.max_concurrency, 2) == 14.77
