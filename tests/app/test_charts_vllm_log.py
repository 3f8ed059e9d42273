"""The vLLM log charts draw kvcore's numbers, with units on their axes, in both languages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from charts.vllm_log import (
    RATIO_LABELS,
    USERS_LABELS,
    checks_ratio_figure,
    context_grid,
    ratio_checks,
    users_by_context_figure,
)
from i18n import LANGUAGES, translate
from kvcore import capacity
from kvcore.vllm_log import parse_vllm_log, reconcile
from tests.app.figures import one_line

LOGS = Path(__file__).resolve().parents[2] / "data" / "vllm_logs"
USERS_KEYS = {
    "title": "vllm_log.users_title",
    "subtitle": "vllm_log.users_subtitle",
    "x_title": "vllm_log.users_x",
    "y_title": "vllm_log.users_y",
    "curve": "vllm_log.users_curve",
    "chosen": "vllm_log.users_chosen",
    "requested": "vllm_log.users_requested",
    "one_user": "vllm_log.users_one",
    "users": "vllm_log.hover_users",
    "tokens": "chart.tokens",
}
RATIO_KEYS = {
    "title": "vllm_log.ratio_title",
    "subtitle": "vllm_log.ratio_subtitle",
    "x_title": "vllm_log.ratio_x",
    "y_title": "vllm_log.ratio_y",
    "logged": "vllm_log.logged",
    "expected": "vllm_log.expected",
    "agree": "vllm_log.status_agree",
    "differ": "vllm_log.status_differ",
    "cannot_check": "vllm_log.status_cannot_check",
}


def labels(keys: dict[str, str], lang: str = "en") -> dict[str, str]:
    return {name: translate(lang, key, model="M", blocks="1") for name, key in keys.items()}


def reconciled(name: str, model):
    text = (LOGS / f"{name}.txt").read_text(encoding="utf-8").partition("\n")[2]
    return reconcile(parse_vllm_log(text), model)


def test_the_label_tables_name_every_label():
    assert set(USERS_KEYS) == set(USERS_LABELS)
    assert set(RATIO_KEYS) == set(RATIO_LABELS)


def users_figure(model, *, blocks=1952, context=8192, requested=20000, lang="en"):
    return users_by_context_figure(
        model=model,
        num_blocks=blocks,
        block_size=16,
        tp=1,
        context_tokens=context,
        requested_tokens=requested,
        longest_tokens=model.max_position_embeddings,
        separators=".,",
        labels=labels(USERS_KEYS, lang),
    )


def test_the_users_curve_is_kvcores_max_concurrency(models):
    model = models["llama-3.1-8b"]
    figure = users_figure(model)
    curve = figure.data[0]
    expected = capacity.max_concurrency(model, num_blocks=1952, max_model_len=np.asarray(curve.x), block_size=16)
    np.testing.assert_allclose(curve.y, expected)
    assert list(curve.x) == list(context_grid(block_size=16, longest_tokens=model.max_position_embeddings))


def test_the_chosen_and_requested_contexts_are_marked_at_kvcores_values(models):
    model = models["llama-3.1-8b"]
    figure = users_figure(model, context=4096, requested=20000)
    chosen, requested = figure.data[2], figure.data[3]
    assert chosen.x[0] == 4096
    assert chosen.y[0] == pytest.approx(float(capacity.max_concurrency(model, num_blocks=1952, max_model_len=4096)))
    assert requested.y[0] == pytest.approx(1952 / 1250)  # vLLM #10517: 1.56×


def test_the_users_axis_is_logarithmic_unless_nothing_fits(models):
    model = models["llama-3.1-8b"]
    assert users_figure(model).layout.yaxis.type == "log"
    assert users_figure(model, blocks=0).layout.yaxis.type != "log"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_users_axes_carry_their_units(models, lang):
    figure = users_figure(models["llama-3.1-8b"], lang=lang)
    assert "tokens" in figure.layout.xaxis.title.text
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "vllm_log.users_y")
    assert "tokens" in figure.data[0].hovertemplate


def test_the_ratio_bars_are_logged_over_expected_per_check(models):
    result = reconciled("vllm_10517_llama31_8b_20k", models["llama-3.1-8b"])
    drawn = ratio_checks(result.checks)
    names = {check.kind: check.kind for check in drawn}
    figure = checks_ratio_figure(checks=result.checks, names=names, separators=".,", labels=labels(RATIO_KEYS))
    bars = figure.data[0]
    assert list(bars.x) == [check.kind for check in drawn]
    np.testing.assert_allclose(bars.y, [check.ratio for check in drawn])
    assert {"gpu_blocks", "bytes_per_token", "max_concurrency"} <= set(bars.x)


def test_a_differing_check_is_drawn_in_the_alarm_colour(models):
    result = reconcile(
        parse_vllm_log((LOGS / "vllm_10517_llama31_8b_20k.txt").read_text(encoding="utf-8").partition("\n")[2]),
        models["llama-3.1-8b"],
        kv_bytes_per_value=1.0,
    )
    drawn = ratio_checks(result.checks)
    figure = checks_ratio_figure(checks=drawn, names={}, separators=".,", labels=labels(RATIO_KEYS))
    colours = dict(zip(figure.data[0].x, figure.data[0].marker.color, strict=True))
    assert colours["bytes_per_token"] != colours.get("weights_bytes")
    assert result.check("bytes_per_token").ratio == pytest.approx(2.0, rel=0.01)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_ratio_axis_says_it_has_no_unit(lang):
    figure = checks_ratio_figure(checks=[], names={}, separators=".,", labels=labels(RATIO_KEYS, lang))
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "vllm_log.ratio_y")
    assert figure.layout.separators == ".,"
