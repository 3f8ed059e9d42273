"""Every log axis labels its ticks with their full values, in the reader's language (charts.style.log_axis).

Plotly's own labels on a short log axis print the minor ticks as a bare '2, 5' beside
'1, 10' ("2, 5, 1, 2, 5, 10, 2, 5" on the quantization page). Each chart sets its log
axes through ``log_axis``, whose labels read back as the tick's value.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from charts.style import log_axis, log_tick_text, log_ticks
from i18n import LANGUAGES, NUMBER_SEPARATORS
from tests.app.figures import chart_figures, plain
from tests.app.helpers import open_page

ROOT = Path(__file__).resolve().parents[2]
#: Pages drawing a log axis, with the URL that shows it (a toggle, a MoE model for the experts chart).
LOG_PAGES = [
    ("lessons/agent_1m.py", {}),
    ("lessons/attention_variants.py", {}),
    ("lessons/attention_variants.py", {"av_log": "true"}),
    ("lessons/decode_speed.py", {}),
    ("lessons/decode_speed.py", {"model": "qwen3-30b-a3b"}),
    ("lessons/flash_attention.py", {}),
    ("lessons/kv_quantization.py", {}),
    ("lessons/local_llm.py", {}),
    ("lessons/memory.py", {}),
    ("lessons/practice.py", {}),
    ("lessons/prefill_decode.py", {}),
    ("lessons/vllm_log.py", {}),
    ("lessons/why_cache.py", {"wc_log": "true"}),
]
#: A log axis set any other way than through log_axis (charts/style.py).
OWN_LOG_AXIS = re.compile(r"""type\s*=\s*["']log["']|["']type["']\s*:\s*["']log["']|exponentformat|log_type""")
#: local_llm's context ticks are written in thousands of tokens (1k = 1,024 tokens), as the context slider is.
KILO_TOKENS = re.compile(r"(\d+)k")


def value_of(text: str, separators: str) -> float:
    """The number a tick label shows: '1.000' or '0,05' (pt), '2·10<sup>−6</sup>', '10×', '64k'."""
    text = text.removesuffix("×")
    if match := KILO_TOKENS.fullmatch(text):
        return float(match.group(1)) * 1024
    decimal, thousands = separators
    if "<sup>" in text:
        mantissa, _, power = text.partition("10<sup>")
        exponent = int(power.removesuffix("</sup>").replace("−", "-"))
        return (float(value_of(mantissa.removesuffix("·"), separators)) if mantissa else 1.0) * 10.0**exponent
    return float(text.replace(thousands, "").replace(decimal, "."))


def log_axes(figure: dict) -> dict[str, dict]:
    """A figure's log axes by name ('xaxis', 'yaxis2' …)."""
    layout = figure.get("layout", {})
    return {
        name: axis
        for name, axis in layout.items()
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and axis.get("type") == "log"
    }


def test_a_short_axis_gets_ticks_at_one_two_and_five():
    assert log_ticks(0.03, 8) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]


def test_a_wide_axis_gets_decades_and_every_other_decade_past_eight():
    assert log_ticks(128, 1e6) == [100.0, 1e3, 1e4, 1e5, 1e6]
    assert log_ticks(1e-5, 1e5) == [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]


def test_an_axis_within_one_decade_still_gets_several_ticks():
    ticks = log_ticks(3, 8)
    assert sum(3 <= tick <= 8 for tick in ticks) >= 4


def test_reach_adds_ticks_beyond_the_data_without_coarsening_them():
    assert log_ticks(1, 2, reach=1) == [*(m / 10 for m in range(1, 10)), *range(1, 10), *range(10, 100, 10), 100]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(
    "value", [1e-7, 2e-6, 0.001, 0.05, 0.3, 1.0, 2.0, 5.0, 20.0, 500.0, 2000.0, 1e5, 5e5, 1e6, 2e9]
)
def test_every_tick_label_reads_as_its_value_in_each_language(lang, value):
    text = log_tick_text(value, NUMBER_SEPARATORS[lang])
    assert math.isclose(value_of(text, NUMBER_SEPARATORS[lang]), value, rel_tol=1e-9), text


def test_portuguese_tick_labels_use_a_decimal_comma_and_a_thousands_point():
    assert log_axis([0.05, 5000], separators=NUMBER_SEPARATORS["pt"])["ticktext"][:2] == ["0,01", "0,1"]
    assert log_tick_text(5000, NUMBER_SEPARATORS["pt"]) == "5.000"
    assert log_tick_text(5000, NUMBER_SEPARATORS["en"]) == "5,000"


def test_no_chart_sets_a_log_axis_but_through_log_axis():
    offenders = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "charts").glob("*.py"))
        if path.name != "style.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OWN_LOG_AXIS.search(line)
    ]
    assert not offenders


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("page", "params"), LOG_PAGES)
def test_every_log_axis_on_the_page_labels_each_tick_with_its_full_value(app, page, lang, params):
    open_page(app, page, lang=lang, **params)
    assert not app.exception, [exception.value for exception in app.exception]
    axes = [axis for figure in chart_figures(app) for axis in map(plain, log_axes(figure).values())]
    assert axes, f"{page} {params} shows no log axis"
    for axis in axes:
        ticks, texts = axis.get("tickvals"), axis.get("ticktext")
        assert ticks and texts and len(ticks) == len(texts), axis
        for tick, text in zip(ticks, texts, strict=True):
            assert math.isclose(value_of(text, NUMBER_SEPARATORS[lang]), tick, rel_tol=1e-9), (tick, text)
