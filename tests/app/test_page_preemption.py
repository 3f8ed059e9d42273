"""The preemption lesson: the sliders drive kvcore's simulator, presets tell both stories, links restore it."""

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
)
from kvcore.units import format_tokens
from tests.app.helpers import metric, page_opener

PAGE = "lessons/preemption.py"
TRICKY = ["gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b", "llama-3.1-405b"]


open_page = page_opener(PAGE)


def expected_preemptions(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", rate=20.0, pool=25, seqs=64):
    """What kvcore's simulator gives for the page's inputs (the page's defaults unless given)."""
    model = models[model_id]
    trace = generate_requests(
        Workload(arrival_rate_per_s=rate, num_requests=300, prompt_mean_tokens=512, output_mean_tokens=256, seed=0)
    )
    needed = blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=trace.prompt_tokens + trace.output_tokens)
    server = server_from_model(
        model,
        gpus[gpu_id],
        kv_pool_bytes=block_bytes(model),
        max_num_seqs=seqs,
        weight_bytes_per_param=kvcore.bytes_per_value(model.weights_dtype),
    )
    server = dataclasses.replace(server, num_blocks=max(1, round(needed * pool / 100)))
    return summarize(simulate(trace, server)).preemptions


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
