"""The PagedAttention lesson: the same requests reserved whole or block by block, numbers from kvcore.paging."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kvcore
from course.seeds import SHAREGPT_ON_OPT
from i18n import LANGUAGES, translate
from kvcore.paging import allocation_report, request_lengths_tokens, requests_that_fit
from kvcore.units import format_gib
from tests.app.helpers import first_figure, metric, page_opener, plotly_array

PAGE = "lessons/paged_attention.py"
TRICKY = ["gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b"]
DEFAULTS = {"mean": 499, "spread": 0.8, "max_len": 2048, "block": 16, "requests": 1000, "pool": 262144, "seed": 0}


open_page = page_opener(PAGE)


def expected(**knobs):
    k = DEFAULTS | knobs
    lengths = request_lengths_tokens(
        k["requests"], mean_tokens=k["mean"], spread=k["spread"], max_model_len=k["max_len"], seed=k["seed"]
    )
    common = {"max_model_len": k["max_len"], "block_size": k["block"]}
    reports = {scheme: allocation_report(lengths, scheme=scheme, **common) for scheme in ("contiguous", "paged")}
    fits = {
        scheme: int(requests_that_fit(pool_tokens=k["pool"], lengths_tokens=lengths, scheme=scheme, **common))
        for scheme in ("contiguous", "paged")
    }
    return reports, fits


def shown_percent(fraction: float) -> str:
    return f"{fraction:.1%}"


def test_the_default_page_shows_kvcores_waste(app):
    open_page(app)
    reports, fits = expected()
    assert metric(app, "paged_attention.metric_waste_contiguous") == shown_percent(reports["contiguous"].waste_fraction)
    assert metric(app, "paged_attention.metric_waste_paged") == shown_percent(reports["paged"].waste_fraction)
    assert metric(app, "paged_attention.metric_fit") == f"{fits['contiguous']} → {fits['paged']}"


def test_moving_the_mean_length_changes_the_contiguous_waste(app):
    open_page(app)
    app.slider(key="pa_mean").set_value(1000).run()
    reports, _ = expected(mean=1000)
    assert metric(app, "paged_attention.metric_waste_contiguous") == shown_percent(reports["contiguous"].waste_fraction)


def test_the_waste_memory_is_the_pools_empty_part_as_the_chart_draws_it(app, models):
    """The share is the draw's (all requests, as the formula); the memory only what the requests in the pool waste."""
    open_page(app)
    _, fits = expected()
    per_token = kvcore.kv_bytes_per_token(models["llama-3.1-8b"])
    lengths = request_lengths_tokens(1000, mean_tokens=499, spread=0.8, max_model_len=2048, seed=0)
    _, wasted, _ = (plotly_array(trace["y"]) for trace in first_figure(app)["data"])
    for index, (scheme, key) in enumerate(
        [("contiguous", "paged_attention.metric_waste_contiguous"), ("paged", "paged_attention.metric_waste_paged")]
    ):
        held = allocation_report(lengths[: fits[scheme]], scheme=scheme, max_model_len=2048, block_size=16)
        [shown] = [m for m in app.metric if m.label == translate("en", key)]
        assert shown.proto.delta == translate(
            "en", "paged_attention.waste_in_pool", memory=format_gib(held.wasted_tokens * per_token)
        )
        np.testing.assert_allclose(wasted[index], held.wasted_tokens * per_token / 2**30)


def test_the_sharegpt_preset_reproduces_the_papers_60_to_80_percent(app):
    open_page(app, pa_mean="3000", pa_block="64")
    app.button(key="pa_presets_0").click().run()
    assert app.slider(key="pa_mean").value == SHAREGPT_ON_OPT.mean_tokens
    assert app.select_slider(key="pa_block").value == 16
    reports, _ = expected()
    assert 0.6 <= reports["contiguous"].waste_fraction <= 0.8
    assert any(warning.value.startswith("**76.9% of the reserved memory is empty**") for warning in app.warning)


def test_the_128k_preset_wastes_almost_everything(app):
    open_page(app)
    app.button(key="pa_presets_1").click().run()
    assert app.select_slider(key="pa_max_len").value == 131072
    reports, _ = expected(mean=800, spread=1.0, max_len=131072, pool=1048576)
    assert metric(app, "paged_attention.metric_waste_contiguous") == shown_percent(reports["contiguous"].waste_fraction)
    assert reports["contiguous"].waste_fraction > 0.99


def test_the_block_128_preset_raises_paged_waste(app):
    open_page(app)
    app.button(key="pa_presets_2").click().run()
    reports, _ = expected(block=128)
    assert metric(app, "paged_attention.metric_waste_paged") == shown_percent(reports["paged"].waste_fraction)


def test_a_link_restores_every_setting(app):
    open_page(app, pa_mean="700", pa_spread="1.5", pa_max_len="4096", pa_block="32", pa_requests="500", pa_seed="7")
    assert app.slider(key="pa_spread").value == 1.5
    assert app.select_slider(key="pa_max_len").value == 4096
    reports, _ = expected(mean=700, spread=1.5, max_len=4096, block=32, requests=500, seed=7)
    assert metric(app, "paged_attention.metric_waste_paged") == shown_percent(reports["paged"].waste_fraction)


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, pa_mean="huge")
    assert not app.exception
    assert app.slider(key="pa_mean").value == 499
    assert any("`pa_mean`" in info.value for info in app.info)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("model", TRICKY)
def test_the_page_takes_any_model_in_both_languages(app, lang, model):
    open_page(app, lang=lang, model=model, gpu="rtx-4090")
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error
    assert len(app.get("plotly_chart")) == 2


def test_the_waste_chart_draws_the_pool_as_the_requests_that_fit_fill_it(app, models):
    """Issue 15: the chart drew 1,000 slabs (250 GiB "reserved") beside a 32 GiB pool; now it draws the pool."""
    open_page(app)
    per_token = kvcore.kv_bytes_per_token(models["llama-3.1-8b"])
    _, fits = expected()
    lengths = request_lengths_tokens(1000, mean_tokens=499, spread=0.8, max_model_len=2048, seed=0)
    figure = first_figure(app)
    used, wasted, free = (plotly_array(trace["y"]) for trace in figure["data"])
    pool_gib = DEFAULTS["pool"] * per_token / 2**30
    np.testing.assert_allclose(used + wasted + free, [pool_gib, pool_gib])
    held = [
        allocation_report(lengths[: fits[scheme]], scheme=scheme, max_model_len=2048, block_size=16)
        for scheme in ("contiguous", "paged")
    ]
    np.testing.assert_allclose(used, [report.used_tokens * per_token / 2**30 for report in held])


@pytest.mark.parametrize(("lang", "drawn"), [("en", "473.1"), ("pt", "473,1")])
def test_the_page_says_why_the_formulas_mean_is_not_the_sliders(app, lang, drawn):
    open_page(app, lang=lang)
    lengths = request_lengths_tokens(1000, mean_tokens=499, spread=0.8, max_model_len=2048, seed=0)
    assert f"{lengths.mean():.1f}" == "473.1"
    [said] = [
        caption.value
        for caption in app.caption
        if caption.value.startswith(
            translate(lang, "paged_attention.mean_drawn", mean="499", requests="1", drawn="", max_len="")[:12]
        )
    ]
    assert f"**{drawn}**" in said and "**499**" in said
    assert any(drawn.replace(",", "{,}") in formula.value for formula in app.latex), "the formula's own mean"


def test_a_one_slot_cell_is_singular_in_portuguese(app):
    open_page(app, lang="pt")
    heading = json.loads(app.get("plotly_chart")[1].proto.spec)["layout"]["title"]["text"]  # title and subtitle
    assert "1 posição " in heading and "(ões)" not in heading
