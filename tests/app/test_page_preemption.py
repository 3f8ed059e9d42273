"""The preemption lesson: the sliders drive kvcore's simulator, presets tell both stories, links restore it.

The page runs recompute under vLLM ``NEWEST_RELEASE``'s scheduler rules (``vllm_rules``) with that release's
batch defaults for the GPU (``batch_defaults``) until the learner moves them; swap is V0's.
"""

from __future__ import annotations

import dataclasses

import pytest

import kvcore
from i18n import translate
from kvcore.capacity import block_bytes
from kvcore.scheduler import (
    Workload,
    blocks_for_no_preemption,
    generate_requests,
    server_from_model,
    simulate,
    summarize,
    vllm_rules,
)
from kvcore.units import format_tokens
from tests.app.helpers import caption_with, metric, page_opener

PAGE = "lessons/preemption.py"
TRICKY = ["gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b", "llama-3.1-405b"]


open_page = page_opener(PAGE)


def defaults(gpus, gpu_id="rtx-4090"):
    """(max_num_batched_tokens, max_num_seqs) that vLLM's newest modelled release picks for `vllm serve` on the GPU."""
    return kvcore.batch_defaults(kvcore.vllm_release(), gpu=gpus[gpu_id], entry="serve", max_model_len=4096)


def expected_run(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", rate=20.0, pool=25, seqs=None, **rules):
    """What kvcore's simulator gives for the page's inputs (the page's defaults unless given), under V1's rules."""
    model = models[model_id]
    tokens, default_seqs = defaults(gpus, gpu_id)
    seqs = seqs or default_seqs
    trace = generate_requests(
        Workload(arrival_rate_per_s=rate, num_requests=300, prompt_mean_tokens=512, output_mean_tokens=256, seed=0)
    )
    needed = blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=trace.prompt_tokens + trace.output_tokens)
    server = server_from_model(
        model,
        gpus[gpu_id],
        kv_pool_bytes=block_bytes(model),
        max_num_seqs=seqs,
        max_num_batched_tokens=tokens,
        weight_bytes_per_param=kvcore.bytes_per_value(model.weights_dtype),
    )
    server = dataclasses.replace(server, num_blocks=max(1, round(needed * pool / 100)))
    server = dataclasses.replace(vllm_rules(server, kvcore.vllm_release()), **rules)
    return simulate(trace, server)


def expected_preemptions(models, gpus, **inputs):
    """The preemptions of ``expected_run``."""
    return summarize(expected_run(models, gpus, **inputs)).preemptions


def test_moving_the_rate_slider_changes_the_preemptions_as_kvcore_says(app, models, gpus):
    open_page(app)
    before = metric(app, "preemption.metric_preemptions")
    app.slider(key="pr_rate").set_value(5.0).run()
    after = metric(app, "preemption.metric_preemptions")
    assert after == format_tokens(expected_preemptions(models, gpus, rate=5.0))
    assert before == format_tokens(expected_preemptions(models, gpus))
    assert before != after


def test_the_right_sized_preset_never_preempts(app):
    open_page(app)
    app.button(key="pr_presets_0").click().run()
    assert app.session_state["gpu"] == "h100-sxm"
    assert app.slider(key="pr_pool").value == 100
    assert metric(app, "preemption.metric_preemptions") == "0"
    assert app.success


def test_the_too_small_preset_preempts_and_rings_the_alarm(app):
    open_page(app)
    app.button(key="pr_presets_1").click().run()
    assert int(metric(app, "preemption.metric_preemptions").replace(",", "")) > 0
    assert any(warning.value.startswith("**The pool is at its limit.**") for warning in app.warning)


def test_the_swap_preset_swaps(app):
    open_page(app)
    app.button(key="pr_presets_2").click().run()
    assert app.button_group(key="pr_mode").value == "swap"
    assert int(metric(app, "preemption.metric_preemptions").replace(",", "")) > 0


def test_a_link_restores_the_settings(app, models, gpus):
    open_page(app, pr_rate="12.0", pr_pool="40", pr_max_num_seqs="32")
    assert app.slider(key="pr_rate").value == 12.0
    assert app.slider(key="pr_pool").value == 40
    expected = expected_preemptions(models, gpus, rate=12.0, pool=40, seqs=32)
    assert metric(app, "preemption.metric_preemptions") == format_tokens(expected)


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, pr_pool="900")
    assert not app.exception
    assert app.slider(key="pr_pool").value == 25
    assert any("`pr_pool`" in info.value for info in app.info)


@pytest.mark.parametrize("model", TRICKY)
def test_the_page_takes_tricky_models_on_a_4090(app, model):
    open_page(app, model=model, gpu="rtx-4090")
    assert not app.exception, [exception.value for exception in app.exception]
    bad = translate("en", "error.bad_combination", detail="")[:20]
    assert not [error for error in app.error if error.value.startswith(bad)]
    assert len(app.get("plotly_chart")) == 3


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_batch_limits_start_at_vllms_defaults_for_the_gpu_and_say_so(app, gpus, lang):
    open_page(app, lang)
    tokens, seqs = defaults(gpus)
    assert (app.slider(key="pr_max_num_seqs").value, app.slider(key="pr_max_num_batched_tokens").value) == (
        seqs,
        tokens,
    )
    expected = translate(lang, "preemption.defaults_used", seqs=seqs, tokens=tokens, version=kvcore.NEWEST_RELEASE,
                         gpu=gpus["rtx-4090"].name)  # fmt: skip
    assert caption_with(app, expected[:30]) == expected


def test_the_batch_limits_follow_a_new_gpu_until_moved(app, gpus):
    open_page(app)
    app.selectbox(key="gpu").set_value("h100-sxm").run()
    tokens, seqs = defaults(gpus, "h100-sxm")
    assert (tokens, seqs) == (8192, 1024)  # get_batch_defaults: 80 GiB ≥ 70 GiB
    assert (app.slider(key="pr_max_num_seqs").value, app.slider(key="pr_max_num_batched_tokens").value) == (
        seqs,
        tokens,
    )
    app.slider(key="pr_max_num_seqs").set_value(100).run()
    app.selectbox(key="gpu").set_value("rtx-4090").run()
    assert app.slider(key="pr_max_num_seqs").value == 100
    assert app.slider(key="pr_max_num_batched_tokens").value == defaults(gpus)[0]
    moved = translate("en", "preemption.defaults_moved", seqs=256, tokens=2048, version=kvcore.NEWEST_RELEASE,
                      gpu=gpus["rtx-4090"].name)  # fmt: skip
    assert caption_with(app, moved[:20]) == moved


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_recompute_runs_under_v1s_rules_and_reports_the_tokens_reused(app, models, gpus, lang):
    open_page(app, lang, pr_pool="10")
    result = expected_run(models, gpus, pool=10)
    assert metric(app, "preemption.metric_preemptions", lang) == ui_number(summarize(result).preemptions, lang)
    assert result.reused_tokens.sum() > 0
    text = translate(
        lang,
        "preemption.v1_rules",
        full_prompt=translate(lang, "preemption.on"),
        prefix_caching=translate(lang, "preemption.on"),
        reused=ui_number(int(result.reused_tokens.sum()), lang),
        recomputed=ui_number(summarize(result).recomputed_tokens, lang),
    )
    assert text in [markdown.value for markdown in app.markdown]


def test_without_prefix_caching_nothing_is_reused(app, models, gpus):
    open_page(app, pr_pool="10")
    app.toggle(key="pr_prefix_caching").set_value(False).run()
    result = expected_run(models, gpus, pool=10, prefix_caching=False)
    assert result.reused_tokens.sum() == 0
    assert metric(app, "preemption.metric_preemptions") == format_tokens(summarize(result).preemptions)
    off = translate("en", "preemption.off")
    assert any(f"prefix cache ({off})" in markdown.value for markdown in app.markdown)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_swap_is_shown_as_vllm_v0_only(app, lang):
    open_page(app, lang, pr_pool="10")
    app.button_group(key="pr_mode").set_value("swap").run()
    assert not app.exception
    assert translate(lang, "preemption.v0_swap") in [markdown.value for markdown in app.markdown]
    assert "V0" in translate(lang, "preemption.mode_swap")


def ui_number(value, lang):
    """`value` as the page writes a count: thousands separators in the language's style."""
    from i18n import localize_number

    return localize_number(format_tokens(value), lang)
