"""Reading vLLM start-up logs and reconciling them with kvcore (real excerpts in data/vllm_logs/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvcore.data import load_models
from kvcore.units import GiB
from kvcore.vllm_log import MAX_LINES, MAX_TEXT_CHARS, parse_vllm_log, reconcile

LOGS = Path(__file__).resolve().parents[2] / "data" / "vllm_logs"


def excerpt(name: str) -> str:
    """A fixture without its first line (the source URL, whose command line would be read too)."""
    text = (LOGS / f"{name}.txt").read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    assert first.startswith("# source: https://")
    return rest


@pytest.fixture(scope="module")
def models():
    return load_models()


def status(log_name: str, model, kind: str, **settings_) -> str:
    check = reconcile(parse_vllm_log(excerpt(log_name)), model, **settings_).check(kind)
    assert check is not None
    return check.status


# --- vLLM issue #10517: Llama-3.1-8B on an RTX 3090, V0 ---------------------------------------------


def test_every_fixture_names_its_source_url():
    # A URL, or for files the search index stores without their repository, the index's file id.
    for path in LOGS.glob("*.txt"):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# source: https://") or first.startswith("# source: GitHub-hosted"), path.name
        assert "https://" in first or "search-index file id" in first, path.name


def test_issue_10517_20k_reads_blocks_even_without_the_hash_sign():
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k"))
    assert (log.gpu_blocks, log.cpu_blocks) == (1952, 2048)
    assert (log.max_concurrency_tokens, log.max_concurrency) == (20000, 1.56)
    assert log.version == "V0"


def test_v0_weights_labelled_gb_are_read_as_gib():
    # model_runner.py divides by float(2**30) and prints "GB": 14.9888 · 2**30 bytes.
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k"))
    assert log.weights_bytes == pytest.approx(14.9888 * GiB)


def test_memory_profiling_line_gives_pool_total_and_utilisation():
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k"))
    assert log.kv_cache_size_bytes == pytest.approx(3.81 * GiB)
    assert log.total_gpu_memory_bytes == pytest.approx(23.58 * GiB)
    assert log.gpu_memory_utilization == 0.90
    assert log.half_step["kv_cache_size_bytes"] == pytest.approx(0.005 * GiB)


def test_issue_10517_blocks_agree_with_kvcore_within_the_printed_rounding(models):
    # 3.81 GiB ÷ (16 · 131,072 B = 2 MiB) = 1,950.7 blocks; 3.805–3.815 GiB allows 1,948–1,953: 1,952 agrees.
    assert status("vllm_10517_llama31_8b_20k", models["llama-3.1-8b"], "gpu_blocks") == "agree"


def test_issue_10517_concurrency_agrees(models):
    # 1,952 blocks / ceil(20,000 / 16) = 1,952 / 1,250 = 1.5616 → printed 1.56.
    assert status("vllm_10517_llama31_8b_20k", models["llama-3.1-8b"], "max_concurrency") == "agree"


def test_issue_10517_bytes_per_token_agree_for_the_right_model(models):
    assert status("vllm_10517_llama31_8b_20k", models["llama-3.1-8b"], "bytes_per_token") == "agree"


def test_issue_10517_bf16_weights_agree(models):
    # 8.03e9 params · 2 B = 16.06e9 B = 14.96 GiB vs 14.9888 GiB logged.
    assert status("vllm_10517_llama31_8b_20k", models["llama-3.1-8b"], "weights_bytes") == "agree"


def test_a_wrong_model_shows_in_bytes_per_token(models):
    # Qwen3-8B stores 36 · 2 · 8 · 128 · 2 = 147,456 B/token, not Llama's 131,072.
    assert status("vllm_10517_llama31_8b_20k", models["qwen3-8b"], "bytes_per_token") == "differ"


def test_assuming_an_fp8_cache_halves_kvcore_figure_and_the_log_disagrees(models):
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k"))
    check = reconcile(log, models["llama-3.1-8b"], kv_bytes_per_value=1.0).check("bytes_per_token")
    assert check is not None and check.status == "differ"
    assert check.ratio == pytest.approx(2.0, rel=0.01)


def test_issue_10517_29k_reads_the_v0_max_seq_len_error():
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_29k"))
    assert (log.error_max_model_len, log.error_kv_cache_tokens) == (29000, 23648)
    assert log.requested_max_model_len == 29000


def test_issue_10517_29k_error_tokens_are_blocks_times_block_size(models):
    # 1,478 blocks · 16 = 23,648 tokens.
    assert status("vllm_10517_llama31_8b_29k", models["llama-3.1-8b"], "error_kv_cache_tokens") == "agree"


def test_issue_10517_29k_advice_names_the_longest_context_and_the_utilisation_that_fits(models):
    advice = reconcile(parse_vllm_log(excerpt("vllm_10517_llama31_8b_29k")), models["llama-3.1-8b"]).advice
    assert advice.longest_context_tokens == 23648
    assert advice.users_at_requested < 1
    # 29,000 tokens need 1,813 blocks · 2 MiB = 3.54 GiB; 0.65 GiB more of 23.58 GiB: u ≈ 0.93.
    assert advice.gpu_memory_utilization_to_fit == pytest.approx(0.9276, abs=1e-3)
    assert advice.fp8_longest_context_tokens > 29000


def test_users_at_a_chosen_context_come_from_the_logged_blocks(models):
    log = parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k"))
    advice = reconcile(log, models["llama-3.1-8b"], context_tokens=8192).advice
    assert advice.users_at_context == pytest.approx(1952 / 512)


# --- V1 logs ------------------------------------------------------------------------------------------


def test_v1_lines_with_prefixes_and_thousands_separators_are_read():
    log = parse_vllm_log(excerpt("lmcache_1739_qwen3_14b_v1"))
    assert log.available_kv_cache_bytes == pytest.approx(6.51 * GiB)
    assert log.gpu_kv_cache_tokens == 42656
    assert (log.max_concurrency_tokens, log.max_concurrency) == (32768, 1.30)
    assert log.version == "V1"


@pytest.mark.parametrize("kind", ["gpu_kv_cache_tokens", "bytes_per_token", "max_concurrency"])
def test_lmcache_1739_qwen3_14b_agrees_with_kvcore(models, kind):
    # 40 · 2 · 8 · 128 · 2 = 163,840 B/token; 6.51 GiB ÷ 2.5 MiB = 2,666 blocks · 16 = 42,656 tokens.
    assert status("lmcache_1739_qwen3_14b_v1", models["qwen3-14b"], kind) == "agree"


def test_v1_max_seq_len_error_is_read():
    log = parse_vllm_log(excerpt("mlperf_550_llama31_8b_v1_error"))
    assert log.error_max_model_len == 131072
    assert log.error_needed_kv_cache_bytes == pytest.approx(16 * GiB)
    assert log.error_available_kv_cache_bytes == pytest.approx(4.92 * GiB)
    assert log.error_estimated_max_model_len == 40304


@pytest.mark.parametrize("kind", ["error_needed_kv_cache_bytes", "error_estimated_max_model_len", "bytes_per_token"])
def test_mlperf_550_error_agrees_with_kvcore(models, kind):
    # 131,072 · 131,072 B = 16 GiB; 4.92 GiB ÷ 2 MiB = 2,519 blocks · 16 = 40,304 tokens.
    assert status("mlperf_550_llama31_8b_v1_error", models["llama-3.1-8b"], kind) == "agree"


def test_mlperf_550_advice_says_how_much_memory_is_missing(models):
    advice = reconcile(parse_vllm_log(excerpt("mlperf_550_llama31_8b_v1_error")), models["llama-3.1-8b"]).advice
    assert advice.missing_bytes == pytest.approx((16 - 4.92) * GiB)
    assert advice.longest_context_tokens == 40304


def test_a_v1_message_wrapped_over_two_lines_is_still_read():
    text = (
        "ValueError: To serve at least one request with the model's max seq len (1048576),\n"
        "22.5 GiB KV cache is needed, which is larger than the available KV cache memory (17.39 GiB).\n"
        "Based on the available memory, the estimated maximum model length is 810208.\n"
    )
    log = parse_vllm_log(text)
    assert log.error_max_model_len == 1048576
    assert log.error_available_kv_cache_bytes == pytest.approx(17.39 * GiB)
    assert log.ignored == ()


def test_the_one_line_v1_format_gives_tokens_and_concurrency():
    log = parse_vllm_log("GPU KV cache size: 89,760 tokens, Maximum concurrency for 262,144 tokens per request: 1.36x")
    assert (log.gpu_kv_cache_tokens, log.max_concurrency_tokens, log.max_concurrency) == (89760, 262144, 1.36)


def test_early_v1_blocks_without_cpu_blocks_count_as_v1():
    log = parse_vllm_log(excerpt("vllm_pr12569_llama31_70b_w8a8_v1"))
    assert (log.gpu_blocks, log.cpu_blocks, log.version) == (1381, None, "V1")


def test_pr_12569_concurrency_agrees(models):
    # 1,381 blocks / (2,048 / 16 = 128) = 10.79.
    assert status("vllm_pr12569_llama31_70b_w8a8_v1", models["llama-3.1-70b"], "max_concurrency") == "agree"


def test_an_int8_checkpoint_differs_from_bf16_weights_and_agrees_at_one_byte(models):
    model = models["llama-3.1-70b"]
    assert status("vllm_pr12569_llama31_70b_w8a8_v1", model, "weights_bytes") == "differ"
    assert status("vllm_pr12569_llama31_70b_w8a8_v1", model, "weights_bytes", weights_bytes_per_param=1.0) == "agree"


def test_pr_13596_old_and_new_v1_lines_agree_on_tokens(models):
    log = parse_vllm_log(excerpt("vllm_pr13596_v1_token_lines"))
    assert (log.gpu_blocks, log.gpu_kv_cache_tokens, log.conflicts) == (127626, 2042016, ())
    assert status("vllm_pr13596_v1_token_lines", models["llama-3.1-8b"], "gpu_kv_cache_tokens") == "agree"


def test_a_negative_v0_pool_and_device_named_blocks_are_read():
    log = parse_vllm_log(excerpt("vllm_13882_qwen25_7b_negative_kv"))
    assert log.kv_cache_size_bytes == pytest.approx(-1.05 * GiB)
    assert (log.gpu_blocks, log.cpu_blocks, log.max_concurrency) == (0, 4681, 0.0)
    assert log.gpu_memory_utilization == 0.70


def test_a_negative_pool_reconciles_to_zero_blocks(models):
    assert status("vllm_13882_qwen25_7b_negative_kv", models["qwen2.5-7b"], "gpu_blocks") == "agree"
    assert status("vllm_13882_qwen25_7b_negative_kv", models["qwen2.5-7b"], "max_concurrency") == "agree"


def test_numbers_the_log_lacks_cannot_be_checked(models):
    check = reconcile(parse_vllm_log(""), models["llama-3.1-8b"]).check("gpu_kv_cache_tokens")
    assert check is not None and (check.status, check.reason) == ("cannot_check", "not_in_log")


def test_a_log_tensor_parallel_size_that_does_not_split_the_heads_falls_back_to_one(models):
    log = parse_vllm_log("tensor_parallel_size=3, GPU KV cache size: 100 tokens")
    assert reconcile(log, models["llama-3.1-8b"]).tp == 1


def test_the_log_kv_cache_dtype_sets_the_bytes_per_value(models):
    log = parse_vllm_log("non-default args: {'kv_cache_dtype': 'fp8', 'block_size': 32}")
    result = reconcile(log, models["llama-3.1-8b"])
    assert (result.kv_bytes_per_value, result.block_size) == (1.0, 32)


# --- Robustness: nothing pasted can break the page -----------------------------------------------


def test_empty_text_gives_an_empty_log():
    log = parse_vllm_log("")
    assert (log.recognised, log.ignored, log.version, log.truncated) == ((), (), None, False)


def test_markup_is_listed_as_ignored_unchanged():
    log = parse_vllm_log("<script>alert('x')</script>\n\n  ")
    assert log.ignored == ("<script>alert('x')</script>",)


def test_colour_codes_are_removed_before_matching():
    log = parse_vllm_log("\x1b[32mINFO\x1b[0m 11-20 10:00:00 [kv_cache_utils.py:716] GPU KV cache size: 31,232 tokens")
    assert log.gpu_kv_cache_tokens == 31232
    assert log.recognised[0].text.startswith("INFO 11-20")


def test_the_multiplication_sign_is_read_like_an_x():
    assert parse_vllm_log("Maximum concurrency for 8,192 tokens per request: 4.61×").max_concurrency == 4.61


def test_random_bytes_never_raise():
    junk = bytes(range(256)) * 40
    log = parse_vllm_log(junk)
    assert log.gpu_kv_cache_tokens is None


def test_a_megabyte_of_text_is_truncated():
    log = parse_vllm_log("GPU KV cache size: 16 tokens\n" + "x" * 1_000_000)
    assert log.truncated and log.gpu_kv_cache_tokens == 16


def test_more_lines_than_the_cap_are_truncated():
    log = parse_vllm_log("line\n" * (MAX_LINES + 10))
    assert log.truncated and len(log.ignored) == MAX_LINES
    assert MAX_TEXT_CHARS >= 5 * MAX_LINES


def test_a_value_printed_twice_differently_is_a_conflict():
    log = parse_vllm_log("GPU KV cache size: 100 tokens\nGPU KV cache size: 200 tokens")
    assert (log.gpu_kv_cache_tokens, log.conflicts) == (100, ("gpu_kv_cache_tokens",))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parsing_any_text_never_raises(text):
    log = parse_vllm_log(text)
    assert isinstance(log.ignored, tuple)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("GPU KV cache size: 0123456789,.x×()#\n-GiB tokens"))))
def test_reconciling_any_near_miss_text_never_raises(models, text):
    reconcile(parse_vllm_log(text), models["llama-3.1-8b"])
