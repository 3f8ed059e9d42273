"""vLLM's KV pool lesson: controls drive kvcore.vllm_pool, the log lines match it, presets and links restore it."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES
from kvcore.units import GiB, format_tokens
from kvcore.vllm_pool import pool_log, startup_log_lines
from tests.app.helpers import metric, no_bad_combination, page_opener

PAGE = "lessons/vllm_pool.py"
TRICKY = [
    ("gpt2", "rtx-3060-12gb"),
    ("deepseek-v3", "h100-sxm"),
    ("gemma-3-27b", "m4-max-128gb"),
    ("qwen3-next-80b-a3b", "a100-80gb"),
    ("llama-3.1-405b", "rtx-4090"),
]


open_page = page_opener(PAGE)


def expected_log(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", **knobs):
    model = models[model_id]
    return pool_log(
        model,
        memory_bytes=gpus[gpu_id].memory_bytes,
        utilization=knobs.get("utilization", 0.90),
        weights_bytes=kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(model.weights_dtype)),
        max_model_len=knobs.get("max_model_len", 8192),
        max_num_batched_tokens=knobs.get("batched", 8192),
        non_torch_bytes=knobs.get("non_torch_gib", 0.5) * GiB,
        cuda_graph_bytes=knobs.get("graphs_gib", 0.5) * GiB,
        block_size=knobs.get("block_size", 16),
        bytes_per_value=knobs.get("kv_b", 2.0),
        tp=knobs.get("tp", 1),
        pp=knobs.get("pp", 1),
        cp=knobs.get("cp", 1),
    )


def test_the_default_page_prints_kvcores_log_lines(app, models, gpus):
    open_page(app)
    log = expected_log(models, gpus)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(log.tokens)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(log.num_blocks)
    assert app.code[0].value == "\n".join(startup_log_lines(log))


def test_moving_the_utilization_slider_changes_the_tokens_by_what_kvcore_computes(app, models, gpus):
    open_page(app)
    before = metric(app, "vllm_pool.metric_tokens")
    app.slider(key="vp_utilization").set_value(0.95).run()
    log = expected_log(models, gpus, utilization=0.95)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(log.tokens) != before


def test_a_bigger_profiling_batch_leaves_fewer_blocks(app, models, gpus):
    open_page(app)
    app.slider(key="vp_batched_tokens").set_value(32768).run()
    log = expected_log(models, gpus, batched=32768)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(log.num_blocks)
    assert log.num_blocks < expected_log(models, gpus).num_blocks


def test_the_issue_preset_reproduces_the_logged_concurrency(app, models, gpus):
    open_page(app)
    app.button(key="vp_presets_0").click().run()
    assert app.slider(key="vp_max_model_len").value == 20000
    log = expected_log(models, gpus, max_model_len=20000, batched=20000)
    assert metric(app, "vllm_pool.metric_concurrency", length="20,000") == "1.56×"
    assert "Maximum concurrency for 20,000 tokens per request: 1.56x" in app.code[0].value
    assert abs(log.num_blocks - 1952) <= 1


def test_the_70b_preset_splits_over_four_gpus(app, models, gpus):
    open_page(app)
    app.button(key="vp_presets_1").click().run()
    assert app.select_slider(key="vp_tp").value == 4
    assert app.session_state["model"] == "llama-3.1-70b"
    log = expected_log(models, gpus, model_id="llama-3.1-70b", gpu_id="h100-sxm", max_model_len=131072, tp=4)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(log.tokens)


def test_the_deepseek_preset_replicates_the_latent(app):
    open_page(app)
    app.button(key="vp_presets_2").click().run()
    assert app.select_slider(key="vp_tp").value == 8
    assert app.session_state["model"] == "deepseek-v3"
    assert any("MLA" in markdown.value for markdown in app.markdown)


def test_a_link_restores_every_setting(app, models, gpus):
    open_page(
        app,
        vp_utilization="0.85",
        vp_max_model_len="4096",
        vp_batched_tokens="4096",
        vp_non_torch="1.0",
        vp_block_size="32",
        vp_kv_dtype="fp8",
        vp_pp="2",
        vp_cp="2",
    )
    assert app.slider(key="vp_utilization").value == 0.85
    log = expected_log(
        models,
        gpus,
        utilization=0.85,
        max_model_len=4096,
        batched=4096,
        non_torch_gib=1.0,
        block_size=32,
        kv_b=1.0,
        pp=2,
        cp=2,
    )
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(log.tokens)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(log.num_blocks)


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, vp_utilization="1.7")
    assert not app.exception
    assert app.slider(key="vp_utilization").value == 0.90
    assert any("`vp_utilization`" in info.value for info in app.info)


def test_a_request_too_long_for_the_pool_shows_vllms_error_and_the_estimate(app, models, gpus):
    open_page(app, vp_max_model_len="131072", vp_utilization="0.80")
    log = expected_log(models, gpus, max_model_len=131072, utilization=0.80)
    assert not log.fits
    assert f"estimated maximum model length is {log.estimated_max_model_len}." in app.code[0].value
    assert any(warning.value.startswith("**vLLM will not start.**") for warning in app.warning)


def test_weights_bigger_than_the_gpu_warn_without_an_error(app):
    open_page(app, model="llama-3.1-405b")
    assert not app.exception
    assert any(warning.value.startswith("**No room for the cache.**") for warning in app.warning)
    assert "No available memory for the cache blocks" in app.code[0].value
    assert no_bad_combination(app)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY, ids=[model for model, _ in TRICKY])
def test_the_page_takes_any_model_and_gpu_in_both_languages(app, lang, model, gpu):
    open_page(app, lang=lang, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert no_bad_combination(app)
    assert len(app.get("plotly_chart")) == 2


def test_the_portuguese_page_uses_a_decimal_comma(app):
    open_page(app, lang="pt")
    assert "," in metric(app, "vllm_pool.metric_pool", lang="pt")
