"""A text names only colours its chart draws (issue 15: "in red" beside orange × marks, a "red line" drawn orange).

Every colour word in the catalogues belongs to a text listed in MENTIONS with the colours of the
chart it speaks of, and each word's colour family is one of theirs (by hue: the palette's vermilion,
#D55E00, is orange, not red). Where a colour was wrong the text now names the legend entry or the
marker instead, and those checks say so.
"""

from __future__ import annotations

import colorsys
import re

import pytest

from charts import memory_heatmap, paged_attention
from charts.preemption import LATENCY_LABELS, latency_figure
from charts.style import COLORS
from charts.why_cache import GRID_COLORS, WITH_COLOR, WITHOUT_COLOR
from i18n import LANGUAGES, catalogue, translate
from kvcore.attention import GRID_CACHED, GRID_RECOMPUTED
from kvcore.scheduler import ServerConfig, Workload, generate_requests, simulate

#: A colour word (a pattern, case-insensitive, whole words) → its family, per language.
COLOUR_WORDS: dict[str, dict[str, str]] = {
    "en": {
        r"red|reddish": "red", r"orange|vermilion": "orange", r"blue": "blue", r"green": "green",
        r"yellow": "yellow", r"purple|violet": "purple", r"pink": "pink", r"gr[ae]y": "gray", r"black": "black",
        r"white": "white",
    },
    "pt": {
        r"vermelh\w*|avermelh\w*": "red", r"laranjas?|alaranj\w*": "orange", r"azu(?:l|is)": "blue",
        r"verdes?": "green", r"amarel\w*": "yellow", r"rox[oa]s?|violeta": "purple", r"rosas?": "pink",
        r"cinzas?|cinzent\w*": "gray", r"pret[oa]s?": "black", r"branc[oa]s?": "white",
    },
}  # fmt: skip
#: A text with a colour word → the colours of the chart it describes.
MENTIONS: dict[str, tuple[str, ...]] = {
    "memory.heatmap_text": tuple(color for _, color in memory_heatmap.COLORSCALE),
    "paged_attention.map_text": (
        paged_attention.WASTED_COLOR,
        paged_attention.FREE_COLOR,
        *paged_attention.REQUEST_COLORS,
    ),
}
#: (language, key) → words that are not colours there ("em branco": left blank).
NOT_COLOURS: dict[tuple[str, str], set[str]] = {("pt", "vllm_log.metric_fp8_help"): {"branco"}}


def family(hex_color: str) -> str:
    """A colour's family as a reader names it: by hue, or white / gray / black when it has little colour."""
    red, green, blue = (int(hex_color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4))
    hue, saturation, value = colorsys.rgb_to_hsv(red, green, blue)
    if value < 0.2:
        return "black"
    if saturation < 0.15:
        return "white" if value > 0.9 else "gray"
    degrees = hue * 360
    bounds = ((15, "red"), (45, "orange"), (70, "yellow"), (170, "green"), (260, "blue"), (290, "purple"))
    return next((name for bound, name in bounds if degrees < bound), "pink" if degrees < 345 else "red")


def colour_words(lang: str, key: str, text: str) -> list[tuple[str, str]]:
    """(word, family) for every colour word in `text`."""
    skipped = NOT_COLOURS.get((lang, key), set())
    found = []
    for pattern, name in COLOUR_WORDS[lang].items():
        for match in re.finditer(rf"\b(?:{pattern})\b", text, re.IGNORECASE):
            if match.group(0).lower() not in skipped:
                found.append((match.group(0), name))
    return found


def test_the_palettes_vermilion_is_orange_and_its_blue_is_blue():
    assert family(COLORS["limit"]) == family(COLORS["kv_cache"]) == "orange"
    assert family(COLORS["weights"]) == "blue" and family(COLORS["current"]) == "green"
    assert (family("#FFFFFF"), family("#8C8C8C"), family("#000000"), family("#CC0000")) == (
        "white", "gray", "black", "red",
    )  # fmt: skip


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_colour_word_is_in_a_text_whose_chart_is_known(lang):
    unmapped = {
        key: words
        for key, text in catalogue(lang).items()
        if (words := colour_words(lang, key, text)) and key not in MENTIONS
    }
    assert unmapped == {}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", sorted(MENTIONS))
def test_every_colour_a_text_names_is_drawn_by_its_chart(lang, key):
    drawn = {family(color) for color in MENTIONS[key]}
    named = colour_words(lang, key, catalogue(lang)[key])
    assert named, f"{key} names no colour any more: drop it from MENTIONS"
    assert [(word, name) for word, name in named if name not in drawn] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_preemption_text_names_the_charts_marker_and_legend_entry(lang):
    text = catalogue(lang)["preemption.latency_text"]
    legend = translate(lang, "preemption.preempted")
    assert "×" in text and f"*{legend}*" in text
    trace = generate_requests(
        Workload(num_requests=150, arrival_rate_per_s=40.0, prompt_mean_tokens=300, output_mean_tokens=120, seed=7)
    )
    labels = {key: key for key in LATENCY_LABELS} | {"preempted": legend}
    figure = latency_figure(simulate(trace, ServerConfig(num_blocks=400, max_num_seqs=64)), labels=labels)
    marks = [shown for shown in figure.data if shown.name == legend]
    assert marks and all(shown.marker.symbol == "x" for shown in marks)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_why_cache_texts_name_the_legend_entries_of_their_charts(lang):
    work = catalogue(lang)["why_cache.work_text"]
    assert all(f"*{translate(lang, key)}*" in work for key in ("why_cache.without", "why_cache.with"))
    grid = catalogue(lang)["why_cache.grid_text"]
    assert all(f"*{translate(lang, key)}*" in grid for key in ("why_cache.cell_recomputed", "why_cache.cell_cached"))
    # The curves and cells those names stand for keep their own colours (the legend shows them).
    assert (GRID_COLORS[GRID_RECOMPUTED], GRID_COLORS[GRID_CACHED]) == (WITHOUT_COLOR, WITH_COLOR)
