"""Reading vLLM start-up logs and reconciling them with kvcore (real excerpts in data/vllm_logs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvcore.data import load_gpus, load_models
from kvcore.log_lines import MAX_LINES, MAX_TEXT_CHARS
from kvcore.units import GiB
from kvcore.vllm_log import (
    MAX_UTILIZATION,
    blocks_from_tokens,
    log_flags,
    parse_vllm_log,
    pipeline_from_ranks,
    read_log_header,
    read_vllm_flags,
    reconcile,
    release_from_log,
    startup_advice,
)
from kvcore.vllm_startup import vllm_startup
from kvcore.vllm_versions import NEWEST_RELEASE, vllm_release

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


# --- The release a log's format belongs to (release_from_log) -------------------------------------

_VERSION_LINE = re.compile(r"(?:LLM engine \(v|vLLM API server version\s+|\bversion\s+)[01]\.\d+")


def header_era(header: dict[str, str]) -> str | None:
    """The era of the release a data/vllm_logs header names, on its GPU, checkpoint and flags (None: no release)."""
    if "vllm" not in header:
        return None
    gpu = load_gpus().get(header.get("gpu", "").split(" ")[0])
    weights = header.get("weights", "").split(" ")[0] or None
    flags = read_vllm_flags(header.get("flags", ""))
    return vllm_release(
        header["vllm"], gpu=gpu, weights_dtype=weights, pp=flags.pipeline_parallel_size, kv_dtype=flags.kv_cache_dtype
    ).era


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.txt")), ids=lambda path: path.stem)
def test_the_release_read_from_each_log_is_in_the_era_its_header_states(path):
    text = path.read_text(encoding="utf-8")
    era = header_era(read_log_header(text))
    found = release_from_log(parse_vllm_log(text))
    if era is None:
        return
    assert found is not None
    assert found.era == era, (found, era)


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.txt")), ids=lambda path: path.stem)
def test_without_its_version_line_each_log_is_still_placed_in_its_era(path):
    """The format markers alone (no "version X" line, no header) put every stated log in the right era."""
    text = path.read_text(encoding="utf-8")
    era = header_era(read_log_header(text))
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#") and not _VERSION_LINE.search(line))
    found = release_from_log(parse_vllm_log(body))
    if era is None:
        return
    assert found is not None and found.inferred
    assert found.era == era, (found, era)


def test_a_printed_version_is_taken_as_stated():
    found = release_from_log(parse_vllm_log("INFO [api_server.py:1805] vLLM API server version 0.10.1.1"))
    assert found is not None
    assert (found.release, found.inferred, found.evidence, found.era) == ("0.10.1.1", False, "version_line", "V1")


def test_a_v0_engine_line_of_0_8_is_era_v0():
    # vLLM 0.8.2 on a T4 fell back to V0 and says so: "Initializing a V0 LLM engine (v0.8.2)".
    found = release_from_log(parse_vllm_log(excerpt("hfcookbook_llama32_3b_t4_colab_serve")))
    assert found is not None
    assert (found.release, found.engine, found.era) == ("0.8.2", "V0", "V0")


def test_other_software_versions_are_not_vllms():
    found = release_from_log(parse_vllm_log("CUDA version 12.4\nNCCL version 2.21.5\nGPU KV cache size: 16 tokens"))
    assert found is not None
    assert found.inferred and found.evidence == "tokens_without_available"


@pytest.mark.parametrize(
    ("line", "release", "era"),
    [
        ("Memory profiling results: total_gpu_memory=23.58GiB memory_usage_post_profile=15.35Gib", "0.6.4", "V0"),
        ("Memory profiling results: total_gpu_memory=23.58GiB memory_usage_post_profile=15.35GiB", "0.6.4.post1", "V0"),
        ("# GPU blocks: 1381", "0.7.3", "early V1"),
        ("# GPU blocks: 1952, # CPU blocks: 2048", "0.5.5", "V0"),
        ("# cuda blocks: 3637, # CPU blocks: 1170", "0.7.3", "V0"),
        ("GPU KV cache size: 2,042,016 tokens", "0.8.5", "early V1"),
        ("Available KV cache memory: 6.51 GiB", "0.13.0", "V1"),
        ("Available KV cache memory: 12.3 GiB", "0.27.1", "V1"),
        ("Available KV cache memory: 20 GiB", "0.27.1", "V1"),
        ("GPU KV cache size: 89,760 tokens, Maximum concurrency for 262,144 tokens per request: 1.36x", "0.33.0", "V1"),
    ],
)
def test_format_markers_give_a_representative_release_of_their_era(line, release, era):
    found = release_from_log(parse_vllm_log(line))
    assert found is not None and found.inferred
    assert (found.release, found.era) == (release, era)


def test_a_log_without_markers_has_no_release():
    assert release_from_log(parse_vllm_log("hello\nMaximum concurrency for 2048 tokens per request: 3.00x")) is None


# --- A log whose numbers cannot belong to the selected model --------------------------------------


def test_a_real_log_with_the_wrong_model_is_flagged_and_agrees_on_nothing_about_the_cache(models):
    # Issue 10517 ran Llama 3.1 8B: 3.81 GiB / 31,232 tokens ≈ 130,990 B/token; Qwen3-8B stores 147,456.
    result = reconcile(parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k")), models["qwen3-8b"])
    mismatch = result.model_mismatch
    assert mismatch is not None
    assert mismatch.implied_bytes_per_token == pytest.approx(3.81 * GiB / 31232)
    assert mismatch.low <= mismatch.implied_bytes_per_token <= mismatch.high < mismatch.model_bytes_per_token == 147456
    kv_checks = [check for check in result.checks if check.kind != "weights_bytes"]
    assert not [check for check in kv_checks if check.status == "agree"]
    assert result.check("max_concurrency").reason == "model_mismatch"


def test_the_right_model_is_not_flagged(models):
    result = reconcile(parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k")), models["llama-3.1-8b"])
    assert result.model_mismatch is None
    assert result.check("max_concurrency").status == "agree"


def test_the_implied_interval_holds_the_printed_rounding(models):
    # 3.805–3.815 GiB over 31,232 tokens (plus up to one unused block): Llama's 131,072 lies inside.
    result = reconcile(parse_vllm_log(excerpt("vllm_10517_llama31_8b_20k")), models["llama-3.1-8b"])
    span = result.check("bytes_per_token")
    assert span is not None and span.low <= span.logged <= span.high


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.txt")), ids=lambda path: path.stem)
def test_no_real_log_is_flagged_against_the_model_it_ran(models, path):
    text = path.read_text(encoding="utf-8")
    header = read_log_header(text)
    model_id = header.get("model", "").split(" ")[0]
    if model_id not in models or "nomla" in path.stem:  # PR 10927 ran DeepSeek-V2-Lite with MLA switched off
        return
    result = reconcile(parse_vllm_log(text), models[model_id])
    assert result.model_mismatch is None, (path.stem, result.check("bytes_per_token"))


def test_a_model_with_linear_attention_state_is_not_checked_per_token(models):
    text = (LOGS / "index7292846353_qwen3next_80b_2xh200_tp2.txt").read_text(encoding="utf-8")
    result = reconcile(parse_vllm_log(text), models["qwen3-next-80b-a3b"])
    check = result.check("bytes_per_token")
    assert check is not None and (check.status, check.reason) == ("cannot_check", "hybrid_state_layers")
    assert result.model_mismatch is None


# --- Blocks from the logged tokens, not from the rounded GiB --------------------------------------


def test_blocks_come_from_the_logged_tokens_not_the_rounded_gib(models):
    # 93,872 tokens / 16 = 5,867 blocks exactly; floor(5.01 GiB / (16 · 57,344 B)) would say 5,863.
    log = parse_vllm_log(excerpt("dennislee_repo_qwen2_7b_1xa100_80gb_u025"))
    assert int(5.01 * GiB // (16 * 57344)) == 5863
    result = reconcile(log, models["qwen2-7b"], context_tokens=16384)
    assert result.advice.num_blocks == 5867
    assert result.advice.longest_context_tokens == 93872
    assert result.advice.users_at_context == pytest.approx(5867 / 1024)


def test_blocks_from_tokens_undoes_both_ways_vllm_prints_them():
    assert blocks_from_tokens(93872, block_size=16) == 5867
    # vLLM ≥ 0.20: int(concurrency · L) = int(1,478 · 29,000 / 1,813) = 23,641 tokens.
    assert blocks_from_tokens(23641, block_size=16, max_model_len=29000) == 1478
    assert blocks_from_tokens(0, block_size=16) == 0


def test_a_log_with_no_blocks_advises_no_zero_length(models):
    advice = reconcile(parse_vllm_log(excerpt("vllm_13882_qwen25_7b_negative_kv")), models["qwen2.5-7b"]).advice
    assert advice.num_blocks == 0
    assert advice.longest_context_tokens is None
    assert advice.fp8_longest_context_tokens is None


# --- The advice, from one budget (startup_advice) --------------------------------------------------


def startup_for(name: str, model, gpu, **kw):
    text = excerpt(name)
    log = parse_vllm_log(text)
    return log, startup_advice(log, model, gpu, flags=log_flags(log, text), **kw)


def test_the_estimate_uses_the_logs_release_and_flags(models):
    gpu = load_gpus()["rtx-3090"]
    log, plan = startup_for("vllm_10517_llama31_8b_29k", models["llama-3.1-8b"], gpu)
    assert plan.release is not None and plan.release.release == "0.6.4.post1"
    assert (plan.utilization, plan.max_model_len, plan.kv_dtype) == (0.9, 29000, "auto")
    same = vllm_startup(models["llama-3.1-8b"], gpu, version="0.6.4.post1", utilization=0.9, max_model_len=29000)
    assert plan.estimate.log.kv_pool_bytes == same.log.kv_pool_bytes
    assert plan.estimate.release.era == "V0"
    # From the GPU alone, within 5 % of the 2.89 GiB vLLM measured.
    assert plan.estimate.log.kv_pool_bytes == pytest.approx(log.kv_pool_bytes, rel=0.05)


def test_the_utilisation_advised_is_the_smallest_that_starts(models):
    model, gpu = models["llama-3.1-8b"], load_gpus()["rtx-3090"]
    _, plan = startup_for("vllm_10517_llama31_8b_29k", model, gpu)
    assert not plan.fits
    u = plan.utilization_to_fit
    assert u is not None and plan.utilization < u <= MAX_UTILIZATION

    def start(utilization):
        return vllm_startup(model, gpu, version="0.6.4.post1", utilization=utilization, max_model_len=29000).fits

    assert start(u) and not start(round(u - 0.01, 2))


def test_the_shorter_length_advised_is_the_longest_that_starts(models):
    model, gpu = models["llama-3.1-8b"], load_gpus()["rtx-3090"]
    _, plan = startup_for("vllm_10517_llama31_8b_29k", model, gpu)
    longest = plan.longest_max_model_len
    assert longest is not None and 1 <= longest < 29000

    def start(length):
        return vllm_startup(model, gpu, version="0.6.4.post1", utilization=0.9, max_model_len=length).fits

    assert start(longest) and not start(longest + 1)


def test_fp8_and_more_gpus_come_from_the_same_budget(models):
    model, gpu = models["llama-3.1-8b"], load_gpus()["rtx-3090"]
    _, plan = startup_for("vllm_10517_llama31_8b_29k", model, gpu)
    fp8 = vllm_startup(model, gpu, version="0.6.4.post1", utilization=0.9, max_model_len=29000, kv_dtype="fp8")
    assert plan.fp8 is not None and plan.fp8_fits == fp8.fits is True
    assert plan.tp_to_fit == 2
    assert plan.tp_estimate is not None and plan.tp_estimate.fits and plan.tp_estimate.log.tp == 2


def test_a_model_too_big_for_any_setting_gets_no_zero_or_negative_advice(models):
    model, gpu = models["llama-3.1-405b"], load_gpus()["rtx-4090"]
    log = parse_vllm_log(
        "Available KV cache memory: -120.00 GiB\nMaximum concurrency for 8,192 tokens per request: 0.00x"
    )
    plan = startup_advice(log, model, gpu)
    assert not plan.fits
    assert plan.utilization_to_fit is None
    assert plan.longest_max_model_len is None
    assert plan.fp8_fits is False
    assert plan.tp_to_fit is None


def test_an_fp8_log_is_not_advised_fp8(models):
    log = parse_vllm_log("non-default args: {'kv_cache_dtype': 'fp8_e4m3', 'max_model_len': 8192}")
    plan = startup_advice(log, models["llama-3.1-8b"], load_gpus()["rtx-4090"])
    assert plan.kv_dtype == "fp8" and plan.fp8 is None and plan.fp8_fits is None


def test_a_log_without_a_release_is_estimated_at_the_newest(models):
    plan = startup_advice(parse_vllm_log(""), models["llama-3.1-8b"], load_gpus()["rtx-4090"])
    assert plan.release is None and plan.estimate.release.label == NEWEST_RELEASE
    assert plan.max_model_len == models["llama-3.1-8b"].max_position_embeddings


def test_flags_come_from_the_log_lines_and_else_the_command_line():
    text = (
        "INFO Initializing a V1 LLM engine (v0.10.2) with config: enforce_eager=True, "
        "tensor_parallel_size=2, pipeline_parallel_size=1, max_seq_len=16384\n"
        "vllm serve m --max-num-seqs 64 --max-num-batched-tokens 4096 --gpu-memory-utilization 0.8\n"
    )
    log = parse_vllm_log(text)
    assert (log.enforce_eager, log.tensor_parallel_size, log.pipeline_parallel_size) == (True, 2, 1)
    flags = log_flags(log, text)
    assert (flags.max_model_len, flags.max_num_seqs, flags.max_num_batched_tokens) == (16384, 64, 4096)
    assert (flags.gpu_memory_utilization, flags.enforce_eager, flags.tensor_parallel_size) == (0.8, True, 2)


# --- Pipeline parallelism: one pool per stage (vLLM PR #20665, DeepSeek-V2-Lite, TP 2 × PP 2 on 4 × L4) ----


PP_LOG = "vllm_pr20665_deepseek_v2_lite_4xl4_tp2_pp2"


def test_each_workers_pool_is_read_with_its_rank_and_grouped_into_stages():
    log = parse_vllm_log(excerpt(PP_LOG))
    # "(VllmWorker rank=0 …) Available KV cache memory: 12.13 GiB" on ranks 0-1, 11.33 GiB on ranks 2-3.
    assert log.rank_kv_pools_bytes == ((0, 12.13 * GiB), (1, 12.13 * GiB), (2, 11.33 * GiB), (3, 11.33 * GiB))
    assert log.stage_kv_pools_bytes(2) == (12.13 * GiB, 11.33 * GiB)
    assert log.stage_kv_pools_bytes(4) == ()  # one stage of four ranks: no stages to tell apart
    assert pipeline_from_ranks(log) == (2, 2)


def test_ranks_that_print_one_pool_are_not_taken_for_stages():
    lines = "\n".join(f"(VllmWorker rank={rank} pid=1) INFO Available KV cache memory: 5.00 GiB" for rank in range(4))
    log = parse_vllm_log(lines)
    assert pipeline_from_ranks(log) is None
    assert log.stage_kv_pools_bytes(1) == (5 * GiB,) * 4  # asked for tp 1, four ranks are four stages
    assert pipeline_from_ranks(parse_vllm_log(lines.replace("rank=3", "rank=5"))) is None


def test_a_pipeline_log_is_checked_on_the_stage_whose_blocks_the_server_kept(models):
    # 807,792 tokens = 12.13 GiB / (14 layers × 1,152 B): the first stage, 14 of the 27 layers.
    result = reconcile(parse_vllm_log(excerpt(PP_LOG)), models["deepseek-v2-lite"])
    assert (result.tp, result.pp, result.stage) == (2, 2, 0)
    assert result.bytes_per_token == 14 * 576 * 2
    assert result.model_mismatch is None
    assert [result.check(kind).status for kind in ("gpu_kv_cache_tokens", "bytes_per_token", "max_concurrency")] == [
        "agree"
    ] * 3
    # Read as one GPU holding all 27 layers, the same lines cannot be this model.
    assert reconcile(parse_vllm_log(excerpt(PP_LOG)), models["deepseek-v2-lite"], pp=1).model_mismatch is not None
