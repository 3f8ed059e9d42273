"""TensorRT-LLM's pool sizing (kvcore.trtllm): bytes per token, blocks, releases, the log reader."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvcore.data import load_gpus, load_models
from kvcore.errors import KvError
from kvcore.trtllm import (
    TRTLLM_MARKERS,
    parse_trtllm_log,
    reconcile_trtllm,
    trtllm_bytes_per_token,
    trtllm_default_tokens_per_block,
    trtllm_startup,
)
from kvcore.units import GiB


@pytest.fixture(scope="module")
def models():
    return load_models()


def test_llama_8b_takes_128_kib_per_token_in_bf16_and_half_in_fp8(models):
    # 32 layers · 2 (K, V) · 8 KV heads · 128 · 2 B = 131,072; FP8: 65,536 (issue #4275's engine).
    assert trtllm_bytes_per_token(models["llama-3.1-8b"]) == 131_072
    assert trtllm_bytes_per_token(models["llama-3.1-8b"], kv_cache_dtype="fp8") == 65_536


def test_tensor_parallel_splits_the_kv_heads(models):
    assert trtllm_bytes_per_token(models["llama-3.1-8b"], tp=2) == 65_536


def test_mla_stores_one_latent_on_every_rank(models):
    # DeepSeek-V3: 61 layers · (512 + 64) · 2 B = 70,272, kvFactor 1, the same with TP 8.
    model = models["deepseek-v3"]
    assert trtllm_bytes_per_token(model) == 61 * 576 * 2
    assert trtllm_bytes_per_token(model, tp=8) == 61 * 576 * 2


def test_sliding_layers_count_at_every_token_with_one_window(models):
    # gpt-oss-120b: 36 layers (sliding and full) · 2 · 8 · 64 · 2 = 73,728, the "kv size is" of its log.
    assert trtllm_bytes_per_token(models["gpt-oss-120b"]) == 73_728


def test_default_block_size_is_64_for_013_engines_and_32_otherwise():
    assert trtllm_default_tokens_per_block("0.13.0.dev2024082000", "trt") == 64
    assert trtllm_default_tokens_per_block("0.19", "trt") == 32
    assert trtllm_default_tokens_per_block("1.1", "pytorch") == 32


def test_blocks_round_the_tokens_up_and_the_pool_is_whole_blocks(models):
    run = trtllm_startup(models["llama-3.1-8b"], backend="trt", release="0.19", free_memory_bytes=20 * GiB)
    assert run.max_tokens == math.floor(20 * GiB * 0.9) // 131_072
    assert run.primary_blocks == math.ceil(run.max_tokens / 32)
    assert run.tokens == run.primary_blocks * 32
    assert run.kv_pool_bytes == run.tokens * 131_072


def test_max_tokens_caps_the_pool(models):
    run = trtllm_startup(
        models["llama-3.1-8b"],
        backend="trt",
        release="0.19",
        free_memory_bytes=20 * GiB,
        max_tokens_in_paged_kv_cache=1000,
    )
    assert run.tokens == 1024 and run.primary_blocks == 32


def test_host_cache_gives_secondary_blocks(models):
    # 45 GB / 65,536 B per token (Llama 3 8B, TP 2) = 686,645 tokens → 10,728 blocks of 64, as issue #576 logs.
    run = trtllm_startup(
        models["llama-3-8b"],
        backend="trt",
        release="0.13",
        tp=2,
        free_memory_bytes=74.69 * GiB,
        host_cache_size=45_000_000_000,
    )
    assert run.secondary_blocks == 10_728


def test_pytorch_backend_keeps_the_fraction_of_total_minus_peak_plus_profiling_cache(models):
    run = trtllm_startup(
        models["llama-3.1-8b"], gpu=load_gpus()["h100-sxm"], peak_memory_bytes=20 * GiB, max_seq_len=4096
    )
    expected = (run.total_memory_bytes - 20 * GiB + run.profiling_kv_bytes) * 0.8999999761581421
    assert run.kv_memory_bytes == pytest.approx(expected)
    assert run.max_tokens == int(expected // 131_072)


def test_a_gpu_alone_is_enough_to_size_the_pool(models):
    run = trtllm_startup(models["llama-3.1-8b"], gpu=load_gpus()["h100-sxm"])
    assert run.fits and run.tokens > 0
    assert {term.name for term in run.terms} >= {"weights", "profiling_peak"}


def test_as_json_has_the_issue_keys_and_is_json_ready(models):
    data = trtllm_startup(models["llama-3.1-8b"], gpu=load_gpus()["a100-80gb"], backend="trt").as_json()
    for key in (
        "max_tokens_in_paged_kv_cache",
        "num_blocks",
        "allocated_bytes",
        "primary_blocks",
        "secondary_blocks",
        "engine",
        "release",
        "kv_pool_bytes",
        "tokens",
        "fits",
    ):
        assert key in data
    assert data["engine"] == "trtllm"
    json.dumps(data)


def test_max_concurrency_counts_whole_blocks_per_request(models):
    run = trtllm_startup(models["llama-3.1-8b"], backend="trt", release="0.19", free_memory_bytes=20 * GiB)
    assert run.max_concurrency(33) == run.primary_blocks / 2


def test_bad_inputs_raise_kverrors_with_codes(models):
    model = models["llama-3.1-8b"]
    with pytest.raises(KvError) as err:
        trtllm_startup(model)
    assert err.value.code == "trtllm_needs_memory"
    with pytest.raises(KvError) as err:
        trtllm_startup(model, free_memory_bytes=GiB, free_gpu_memory_fraction=1.0)
    assert err.value.code == "trtllm_bad_fraction"
    with pytest.raises(KvError) as err:
        trtllm_startup(model, free_memory_bytes=GiB, release="0.4")
    assert err.value.code == "trtllm_unknown_release"
    with pytest.raises(KvError) as err:
        trtllm_startup(model, free_memory_bytes=GiB, kv_cache_dtype="q4_0")
    assert err.value.code == "trtllm_unknown_kv_dtype"


def test_later_patches_map_to_the_modelled_release(models):
    run = trtllm_startup(models["llama-3.1-8b"], free_memory_bytes=10 * GiB, release="1.2.0rc6")
    assert run.release == "1.1"


def test_the_reader_takes_the_last_allocation_and_keeps_the_profiling_one():
    text = (
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 0.56 GiB for max tokens in paged KV cache (8224).\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 5.95 GiB for max tokens in paged KV cache (86720).\n"
    )
    log = parse_trtllm_log(text)
    assert log.max_tokens_in_paged_kv_cache == 86_720
    assert log.estimation_tokens == 8_224
    assert log.allocated_bytes == pytest.approx(5.95 * GiB)


def test_the_reader_reads_the_windowed_line_of_1x():
    log = parse_trtllm_log(
        "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 65 [window size=2049], tokens per block=32, "
        "primary blocks=13189, max sequence length=2049"
    )
    assert (log.max_pages_per_sequence, log.window_size, log.tokens_per_block, log.primary_blocks) == (
        65,
        2049,
        32,
        13189,
    )


def test_reconcile_says_cannot_check_without_the_free_memory(models):
    log = parse_trtllm_log("[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 631")
    (check,) = reconcile_trtllm(log, models["qwen1.5-7b"], tokens_per_block=64)
    assert check.status == "cannot_check" and check.reason


def test_markers_match_tensorrt_llm_lines_only():
    assert TRTLLM_MARKERS.search("[TensorRT-LLM][INFO] Number of tokens per block: 32.")
    assert TRTLLM_MARKERS.search("[12/20/2025-04:21:51] [TRT-LLM] [I] Estimated max memory in KV cache : 5.95 GiB")
    assert not TRTLLM_MARKERS.search("INFO 11-20 [kv_cache_utils.py:716] GPU KV cache size: 31,232 tokens")
    assert not TRTLLM_MARKERS.search("llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs)")


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400)))
def test_the_reader_never_raises(text):
    log = parse_trtllm_log(text)
    assert isinstance(log.recognised, tuple)


@settings(max_examples=40, deadline=None)
@given(free_gib=st.floats(min_value=1.0, max_value=70.0), fraction=st.floats(min_value=0.05, max_value=0.95))
def test_the_pool_never_exceeds_the_kept_memory_by_more_than_one_block(free_gib, fraction):
    model = load_models()["llama-3.1-8b"]
    run = trtllm_startup(
        model, backend="trt", release="0.19", free_memory_bytes=free_gib * GiB, free_gpu_memory_fraction=fraction
    )
    assert run.kv_pool_bytes <= free_gib * GiB * fraction + 32 * run.bytes_per_token
    assert run.kv_pool_bytes >= free_gib * GiB * fraction - 32 * run.bytes_per_token


def test_the_startup_lines_read_back_to_the_same_numbers(models):
    run = trtllm_startup(
        models["llama-3.1-8b"],
        backend="trt",
        release="0.19",
        free_memory_bytes=20 * GiB,
        total_memory_bytes=79.10 * GiB,
        max_seq_len=4096,
    )
    log = parse_trtllm_log("\n".join(run.lines()))
    assert (log.primary_blocks, log.max_tokens_in_paged_kv_cache, log.tokens_per_block) == (
        run.primary_blocks,
        run.tokens,
        32,
    )
    assert all(c.status == "agree" for c in reconcile_trtllm(log, models["llama-3.1-8b"], max_seq_len=4096))


def test_memory_counter_lines_use_units_of_1024():
    # MemoryCounters::bytesToString divides by 1024: "1.14 GB" is 1.14 · 2**30 bytes.
    log = parse_trtllm_log(
        "[TensorRT-LLM][INFO] Loaded engine size: 6214 MiB\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 928.77 MiB for execution context memory.\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 1.14 GB GPU memory for runtime buffers.\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 43.29 MB GPU memory for decoder.\n"
    )
    assert log.engine_size_bytes == 6214 * 2**20
    assert log.runtime_buffers_bytes == pytest.approx(1.14 * GiB)
    assert log.decoder_bytes == pytest.approx(43.29 * 2**20)


def test_pages_per_sequence_follow_the_attention_window():
    # trtllm-bench's 0.12 log: window 4098, 64 tokens per block → 65 pages.
    log = parse_trtllm_log(
        "[TensorRT-LLM][INFO] TRTGptModel mMaxAttentionWindowSize: 4098\n"
        "[TensorRT-LLM][INFO] Max KV cache pages per sequence: 65\n"
        "[TensorRT-LLM][INFO] Number of tokens per block: 64.\n"
    )
    (check,) = reconcile_trtllm(log, load_models()["llama-2-7b"])
    assert check.kind == "max_pages_per_sequence" and check.status == "agree"


def test_the_013_rule_lets_max_tokens_alone_replace_the_memory_rule(models):
    # 0.13 calculateMaxNumBlocks: maxTokens given without a fraction is used as is, even above the memory.
    model = models["llama-3.1-8b"]
    only = trtllm_startup(
        model, backend="trt", release="0.13", free_memory_bytes=GiB, max_tokens_in_paged_kv_cache=50_000
    )
    both = trtllm_startup(
        model,
        backend="trt",
        release="0.13",
        free_memory_bytes=GiB,
        max_tokens_in_paged_kv_cache=50_000,
        free_gpu_memory_fraction=0.9,
    )
    later = trtllm_startup(
        model, backend="trt", release="0.19", free_memory_bytes=GiB, max_tokens_in_paged_kv_cache=50_000
    )
    assert only.tokens == 50_048
    assert both.max_tokens == later.max_tokens == int(0.9 * GiB) // 131_072
