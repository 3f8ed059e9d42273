"""vLLM's KV pool lesson: the release's start-up from the GPU alone (kvcore.vllm_startup), its log, presets, links."""

from __future__ import annotations

import dataclasses

import pytest

import kvcore
from course.exercises import exercise_for
from i18n import LANGUAGES, catalogue
from kvcore.units import format_tokens
from kvcore.vllm_startup import startup_lines
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


def expected(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", **knobs):
    """The start-up the page must show: kvcore.vllm_startup with the page's defaults unless given."""
    settings = {"version": kvcore.NEWEST_RELEASE, "utilization": 0.90, "max_model_len": 8192} | knobs
    return kvcore.vllm_startup(models[model_id], gpus[gpu_id], **settings)


def test_the_default_page_prints_kvcores_log_lines(app, models, gpus):
    open_page(app)
    start = expected(models, gpus)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(start.printed_tokens)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(start.log.num_blocks)
    assert app.code[0].value == "\n".join(startup_lines(start))


def test_moving_the_utilization_slider_changes_the_tokens_by_what_kvcore_computes(app, models, gpus):
    open_page(app)
    before = metric(app, "vllm_pool.metric_tokens")
    app.slider(key="vp_utilization").set_value(0.95).run()
    start = expected(models, gpus, utilization=0.95)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(start.printed_tokens) != before


def test_a_bigger_profiling_batch_leaves_fewer_blocks(app, models, gpus):
    open_page(app, vp_own_batch="true")
    app.slider(key="vp_batched_tokens").set_value(32768).run()
    start = expected(models, gpus, max_num_batched_tokens=32768)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(start.log.num_blocks)
    assert start.log.num_blocks < expected(models, gpus).log.num_blocks


def test_the_issue_preset_starts_with_the_logged_blocks_from_the_gpu_alone(app, models, gpus):
    open_page(app)
    app.button(key="vp_presets_0").click().run()
    assert app.slider(key="vp_max_model_len").value == 20000
    assert app.select_slider(key="vp_version").value == "0.6.4.post1"
    start = expected(models, gpus, gpu_id="rtx-3090", version="0.6.4.post1", max_model_len=20000)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(start.log.num_blocks)
    # vLLM #10517's log: "GPU blocks: 1952", "Maximum concurrency for 20000 tokens per request: 1.56x"
    assert start.log.num_blocks == pytest.approx(1952, rel=0.015)
    assert "Memory profiling results: total_gpu_memory=23.58GiB" in app.code[0].value
    assert any(success.value.startswith("**It starts.**") for success in app.success)


def test_the_29k_preset_refuses_with_the_estimated_length(app, models, gpus):
    open_page(app)
    app.button(key="vp_presets_1").click().run()
    start = expected(models, gpus, gpu_id="rtx-3090", version="0.6.4.post1", max_model_len=29000)
    assert not start.fits
    assert start.log.estimated_max_model_len == pytest.approx(23648, rel=0.02)  # the log's 23,648
    assert f"stored in KV cache ({start.log.tokens})" in app.code[0].value
    assert any(warning.value.startswith("**vLLM will not start.**") for warning in app.warning)


def test_the_70b_preset_splits_over_four_gpus(app, models, gpus):
    open_page(app)
    app.button(key="vp_presets_2").click().run()
    assert app.select_slider(key="vp_tp").value == 4
    assert app.session_state["model"] == "llama-3.1-70b"
    start = expected(models, gpus, model_id="llama-3.1-70b", gpu_id="h100-sxm", max_model_len=131072, tp=4)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(start.printed_tokens)


def test_the_deepseek_preset_replicates_the_latent(app):
    open_page(app)
    app.button(key="vp_presets_3").click().run()
    assert app.select_slider(key="vp_tp").value == 8
    assert app.session_state["model"] == "deepseek-v3"
    assert any("MLA" in markdown.value for markdown in app.markdown)


def test_a_link_restores_every_setting(app, models, gpus):
    open_page(
        app,
        vp_version="0.10.2",
        vp_utilization="0.85",
        vp_max_model_len="4096",
        vp_own_batch="true",
        vp_batched_tokens="4096",
        vp_eager="true",
        vp_block_size="32",
        vp_kv_dtype="fp8",
        vp_tp="2",
        vp_pp="2",
        vp_cp="2",
    )
    assert app.slider(key="vp_utilization").value == 0.85
    start = expected(
        models,
        gpus,
        version="0.10.2",
        utilization=0.85,
        max_model_len=4096,
        max_num_batched_tokens=4096,
        enforce_eager=True,
        block_size=32,
        kv_dtype="fp8",
        tp=2,
        pp=2,
        cp=2,
    )
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(start.printed_tokens)
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(start.log.num_blocks)


def test_every_term_is_listed_with_its_source(app, models, gpus):
    open_page(app)
    start = expected(models, gpus)
    text = "\n".join(markdown.value for markdown in app.markdown)
    for term in start.log.budget.terms:
        assert term.source in text


@pytest.mark.parametrize(
    ("version", "key"), [("0.6.4.post1", "era_v0"), ("0.8.5", "era_early_v1"), ("0.33.0", "era_v1")]
)
def test_the_page_says_what_the_release_does(app, version, key):
    open_page(app, vp_version=version)
    heading = catalogue("en")[f"vllm_pool.{key}"].split("**")[1].split("{")[0]
    assert any(heading in markdown.value for markdown in app.markdown)


def test_cuda_graphs_come_off_the_pool_only_from_0_20(models, gpus):
    before = expected(models, gpus, version="0.19.1").log.budget.term_bytes("cuda_graphs")
    after = expected(models, gpus, version="0.20.0").log.budget.term_bytes("cuda_graphs")
    assert before == 0 < after


def test_enforce_eager_gives_the_graphs_back(app, models, gpus):
    open_page(app, vp_version="0.20.0", vp_eager="true")
    eager = expected(models, gpus, version="0.20.0", enforce_eager=True)
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(eager.printed_tokens)
    assert eager.log.num_blocks > expected(models, gpus, version="0.20.0").log.num_blocks


def test_the_prediction_box_and_the_metric_share_one_budget(app, models, gpus):
    open_page(app)
    start = expected(models, gpus)
    gpu = dataclasses.replace(gpus["rtx-4090"], memory_bytes=start.log.memory_bytes)
    asked = exercise_for(
        "max_context",
        model=models["llama-3.1-8b"],
        gpu=gpu,
        utilization=0.9,
        kv_dtype="bf16",
        gpus=1,
        weights_gib=start.log.weights_bytes / 2**30,
        overhead_gib=(start.log.activation_bytes + start.log.non_torch_bytes + start.log.cuda_graph_bytes) / 2**30,
    )
    # floor(pool / bytes per token) against blocks · block_size: the same pool, less than one block apart
    assert abs(asked.answer_value - start.log.tokens) < start.block_size
    # …and the page's box accepts the page's own metric as the answer
    [key] = {w.key.removesuffix("_answer") for w in app.text_input if w.key and w.key.startswith("pv_vllm_pool_")}
    app.text_input(key=f"{key}_answer").input(str(start.log.tokens))
    app.button(key=f"{key}_check").click().run()
    right = catalogue("en")["practice.verdict_right"].split("{", 1)[0]
    assert any(message.value.startswith(right) for message in app.success)


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, vp_utilization="1.7")
    assert not app.exception
    assert app.slider(key="vp_utilization").value == 0.90
    assert any("`vp_utilization`" in info.value for info in app.info)


def test_a_request_too_long_for_the_pool_shows_vllms_error_and_the_estimate(app, models, gpus):
    open_page(app, vp_max_model_len="131072", vp_utilization="0.80")
    start = expected(models, gpus, max_model_len=131072, utilization=0.80)
    assert not start.fits
    assert f"estimated maximum model length is {start.log.estimated_max_model_len}." in app.code[0].value
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


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pipeline_stages_are_named_with_their_layers_and_the_stage_that_sets_the_blocks(app, models, gpus, lang):
    # Llama 3.1 8B has 32 layers: PP 4 cuts them 8 + 8 + 8 + 8; the first stage also holds the embedding and the
    # last the LM head and the sampler, so the stages' pools differ and the server keeps the fewest blocks.
    open_page(app, lang=lang, vp_pp="4")
    start = expected(models, gpus, pp=4)
    assert start.stage_layers == (8, 8, 8, 8)
    blocks = format_tokens(min(stage.num_blocks for stage in start.stages))
    shown = metric(app, "vllm_pool.metric_blocks", lang)
    assert shown == (blocks.replace(",", ".") if lang == "pt" else blocks)
    text = "\n".join(block.value for block in app.markdown)
    assert "8 + 8 + 8 + 8" in text
    assert f"**{start.tightest_stage + 1}**" in text
