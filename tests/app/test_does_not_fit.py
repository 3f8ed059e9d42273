"""A KV pool below zero reads "does not fit", never "−60.41 GiB", with the reason above the numbers (issue 15).

Every page where kvcore's pool can go negative, with a model whose weights alone outgrow the
card (Llama 3.1 405B on an RTX 4090), in both languages: no text or metric shows a negative
memory, the pool's metric says "does not fit", a warning or error says why and what to
change before the page's controls, and no chart draws a bar below zero.
"""

from __future__ import annotations

import json
import re

import pytest

from i18n import LANGUAGES, catalogue, translate
from tests.app.helpers import lesson_top_level, open_page, plotly_array

TOO_BIG = {"model": "llama-3.1-405b", "gpu": "rtx-4090"}
#: A memory with a minus sign: "−735.35 GiB", "-60,41 GB" (a term taken off, "− 15 GiB", has a space).
NEGATIVE_MEMORY = re.compile(r"(?<![\w.,])[−-]\d[\d.,]*\s?(?:TiB|GiB|MiB|KiB|TB|GB|MB|kB)\b")
#: Page → the catalogue key of its pool metric (None: the page shows no pool metric).
POOL_METRIC = {
    "sizing": "sizing.metric_pool",
    "vllm_pool": "vllm_pool.metric_pool",
    "vllm_log": "vllm_log.metric_estimate_pool",
    "memory": None,
    "kv_quantization": None,
}
#: Page → the catalogue key of the message that says why, at the top.
REASON = {
    "sizing": "sizing.alarm_no_pool",
    "vllm_pool": "vllm_pool.no_pool",
    "vllm_log": "vllm_log.estimate_no_pool",
    "memory": "memory.weights_do_not_fit",
    "kv_quantization": "kv_quantization.no_room",
}


def shown_texts(app) -> list[str]:
    """Every text the page shows as prose, numbers or table cells (formulas apart)."""
    texts = [
        element.value
        for kind in ("markdown", "caption", "info", "warning", "error", "success")
        for element in getattr(app, kind)
    ]
    texts += [metric.value for metric in app.metric]
    texts += [table.value.to_string() for table in app.table]
    return texts


def opening(lang: str, key: str) -> str:
    """The catalogue text's opening words, before its first placeholder."""
    return catalogue(lang)[key].split("{")[0][:40]


def holds(node, predicate) -> bool:
    return predicate(node) or any(holds(child, predicate) for child in getattr(node, "children", {}).values())


def is_control(node) -> bool:
    return node.type in ("slider", "select_slider", "button_group")


def says(start: str):
    return lambda node: node.type in ("warning", "error") and str(getattr(node, "value", "")).startswith(start)


def bar_bottoms(figure: dict) -> list[float]:
    """The lowest value each bar trace reaches; a waterfall's last bar (its result) is where its total stands."""
    lows = []
    for trace in figure["data"]:
        if trace.get("type") == "bar":
            lows.append(float(plotly_array(trace["y"]).min()))
        elif trace.get("type") == "waterfall":
            running = 0.0
            for measure, value in zip(trace["measure"], plotly_array(trace["y"]), strict=True):
                running = running + value if measure == "relative" else value if measure == "absolute" else running
            lows.append(running)
    return lows


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", sorted(REASON))
def test_a_pool_below_zero_says_does_not_fit_and_why_at_the_top(app, stem, lang):
    open_page(app, f"lessons/{stem}.py", lang=lang, **TOO_BIG)
    assert not app.exception, [exception.value for exception in app.exception]
    assert not [text for text in shown_texts(app) if NEGATIVE_MEMORY.search(text)]
    if POOL_METRIC[stem] is not None:
        [pool] = [metric.value for metric in app.metric if metric.label == translate(lang, POOL_METRIC[stem])]
        assert pool == translate(lang, "lesson.does_not_fit")
    reason = says(opening(lang, REASON[stem]))
    assert [element for kind in ("warning", "error") for element in getattr(app, kind) if reason(element)]
    if stem != "vllm_log":  # there the reason heads the estimate's own section, under the log's analysis
        blocks = lesson_top_level(app)
        first_control = next(index for index, node in enumerate(blocks) if holds(node, is_control))
        assert any(holds(node, reason) for node in blocks[:first_control])
    for formula in app.latex:
        if NEGATIVE_MEMORY.search(formula.value.replace(r"\ ", " ").replace(r"\text{", "").replace("}", "")):
            assert translate(lang, "lesson.does_not_fit") in formula.value


@pytest.mark.parametrize("stem", sorted(REASON))
def test_no_chart_draws_a_bar_below_zero(app, stem):
    open_page(app, f"lessons/{stem}.py", **TOO_BIG)
    for chart in app.get("plotly_chart"):
        assert all(low >= 0 for low in bar_bottoms(json.loads(chart.proto.spec)))
