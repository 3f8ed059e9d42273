"""Issue 15: one unit per view. GB mode speaks decimal units on every page; numbers read in the page's language.

The sidebar's GiB/GB switch (``?units=GB``) must reach every label, metric, caption, markdown text and
formula of every lesson, the predict boxes included; the few texts that contrast the two units on
purpose (a course text's "GB" that are really GiB, the glossary's "GiB vs GB") are listed by catalogue
key in ``CONTRASTS``. Logs quoted as code, placeholders and help tooltips are not checked: a vLLM log
prints GiB whatever the sidebar says.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import kvcore
from charts import formatting
from course import exercises
from i18n import LANGUAGES, catalogue, translate
from kvcore.units import GB, GiB
from tests.app.helpers import metric, open_page

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "lessons").glob("*.py"))
BINARY = re.compile(r"\b(KiB|MiB|GiB|TiB)\b")

#: Texts that name both unit families on purpose, by catalogue key: a seed's units read back, the term itself,
#: and the two overhead sliders that keep GiB so that a link holds the same bytes in either mode (their caption
#: says so and gives the GB figure: ``ui.lesson.gib_slider_note``).
CONTRASTS = (
    "glossary.gib_gb",
    "glossary.gib_gb_text",
    "agent_1m.errata",
    "attention_variants.seed_notes",
    "flash_attention.seed_text",
    "kv_quantization.seed004_text",
    "memory.seed_units",
    "memory.seed_story",
    "memory.table000_same",
    "memory.table000_units_gb",
    "sizing.story_text",
    "memory.overhead",
    "sizing.overhead",
    "lesson.slider_in_gib",
)
#: Elements whose text is not the page's own: quoted logs and what a student types.
NOT_CHECKED = {"Code", "TextArea", "TextInput_value"}


def literal_chunks(key: str, lang: str) -> list[str]:
    """The pieces of a catalogue text between its placeholders, longest first (what a shown text must contain)."""
    text = catalogue(lang)[key].replace("{{", "{").replace("}}", "}")
    return sorted((chunk for chunk in re.split(r"\{[^}]*\}", text) if chunk.strip()), key=len, reverse=True)


def is_contrast(text: str, lang: str) -> bool:
    """True when `text` is one of the ``CONTRASTS`` as shown: its longest literal piece is in it."""
    return any(chunks and chunks[0] in text for chunks in (literal_chunks(key, lang) for key in CONTRASTS))


def shown_texts(node: Any) -> list[tuple[str, str]]:
    """(element type, text) of every label, metric, caption, markdown, alert and formula under `node`."""
    found: list[tuple[str, str]] = []
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            found += shown_texts(child)
    kind = type(node).__name__
    if kind in NOT_CHECKED:
        return found
    label = getattr(node, "label", None)
    if isinstance(label, str):
        found.append((kind, label))
    if kind in {"Markdown", "Caption", "Latex", "Info", "Warning", "Success", "Error", "Title", "Header", "Subheader"}:
        found.append((kind, str(node.value)))
    if kind == "Metric":
        found += [(kind, str(node.value)), (kind, str(node.proto.delta))]
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_a_binary_unit_in_gb_mode_but_where_it_contrasts_the_two(app, page, lang):
    open_page(app, page, lang=lang, units="GB")
    assert not app.exception, [exception.value for exception in app.exception]
    binary = [
        (kind, text[:160])
        for kind, text in shown_texts(app._tree)
        if BINARY.search(text) and not is_contrast(text, lang)
    ]
    assert binary == []


def test_every_contrast_key_exists_and_names_a_binary_unit_or_stands_beside_one():
    for key in CONTRASTS:
        for lang in LANGUAGES:
            assert literal_chunks(key, lang), key


# ---------------------------------------------------------------- predict questions in the page's unit


def test_a_gb_page_asks_its_predict_question_in_gb_and_works_it_out_in_gb(app):
    open_page(app, lang="en", units="GB")
    [box] = [box for box in app.text_input if box.key and box.key.startswith("pv_memory_")]
    assert box.label == translate("en", "practice.your_answer", unit="GB")
    box.input("1.07 GB")  # one sequence of 8,192 tokens · 131,072 B = 1.07 GB (1 GiB)
    [check] = [button for button in app.button if button.label == translate("en", "practice.check")]
    check.click().run()
    right = translate("en", "practice.verdict_right", expected="1.07 GB")
    assert right in [success.value for success in app.success]


@pytest.mark.parametrize("topic", ["bytes_per_token", "sequence_cache", "weights_memory"])
def test_an_exercise_in_gb_is_the_same_question_with_its_answer_in_decimal_units(models, topic):
    model = models["llama-3.1-8b"]
    binary = exercises.exercise_for(topic, model=model)
    decimal = exercises.exercise_for(topic, model=model, memory_unit="GB")
    ratio = {"KiB": 1024 / 1000, "GiB": GiB / GB}[binary.answer_unit]
    assert decimal.answer_unit == {"KiB": "KB", "GiB": "GB"}[binary.answer_unit]
    assert decimal.answer_value == pytest.approx(binary.answer_value * ratio)
    assert decimal.steps[-1].symbolic.endswith(("/ 10^9", "/ 1000"))
    assert "2^30" not in " ".join(step.substituted for step in decimal.steps)


def test_a_gb_budget_counts_the_same_users_and_tokens(models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-4090"]
    for topic in ("users_fit", "max_context"):
        binary = exercises.exercise_for(topic, model=model, gpu=gpu, overhead_gib=1.0)
        decimal = exercises.exercise_for(topic, model=model, gpu=gpu, overhead_gib=1.0, memory_unit="GB")
        assert decimal.answer_value == binary.answer_value
        assert {step.unit for step in decimal.steps} & {"GiB", "KiB", "MiB"} == set()


def test_an_unknown_memory_unit_is_refused_by_name(models):
    with pytest.raises(ValueError, match="memory_unit"):
        exercises.exercise_for("sequence_cache", model=models["llama-3.1-8b"], memory_unit="TB")


def test_a_gb_predict_question_states_the_pages_overhead_in_gb(app):
    open_page(app, "lessons/vllm_pool.py", lang="en", units="GB")
    questions = [m.value for m in app.markdown if "how many **tokens**" in m.value]
    assert questions and " GB " in questions[0] and "GiB" not in questions[0]


# ---------------------------------------------------------------- the overhead sliders keep GiB, on purpose


@pytest.mark.parametrize(("page", "key"), [(None, "mem_overhead"), ("lessons/sizing.py", "sz_overhead")])
def test_an_overhead_link_holds_the_same_bytes_in_either_unit(app, page, key):
    """?mem_overhead=2 is 2 GiB with either unit; the GB page says so beside the slider, with 2.15 GB."""
    open_page(app, page, lang="en", units="GB", **{key: "2"})
    assert app.slider(key=key).value == 2.0
    note = translate("en", "lesson.slider_in_gib", gib="2 GiB", shown=formatting.memory(2 * GiB, unit="GB"))
    assert note in [caption.value for caption in app.caption]


def test_the_overhead_note_is_not_shown_in_gib_mode(app):
    open_page(app, lang="en", mem_overhead="2")
    start = literal_chunks("lesson.slider_in_gib", "en")[0]
    assert not [caption.value for caption in app.caption if start in caption.value]


def test_the_memory_calculator_shows_the_same_bytes_in_either_unit(app, models):
    open_page(app, lang="en", units="GB", mem_overhead="2")
    cache = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=8192, bytes_per_value=2.0)
    assert metric(app, "memory.metric_cache") == formatting.memory(float(cache), unit="GB")


# ---------------------------------------------------------------- numbers in the page's language


def test_the_instructors_exact_values_are_numbers_of_the_language_and_a_dash_for_a_choice(app, models, gpus):
    open_page(app, "lessons/instructor.py", lang="pt")
    [table] = app.dataframe
    column = translate("pt", "instructor.col_exact")
    shown = list(table.value[column])
    drawn = exercises.generate_exercise_set(1, models=models, gpus=gpus, count=12)[: len(shown)]
    expected = ["—" if asked.dimension == "choice" else formatting.plain(asked.answer_value, ",.") for asked in drawn]
    assert shown == expected
    assert "None" not in shown


@pytest.mark.parametrize(
    ("value", "separators", "text"),
    [
        (1030.4, ",.", "1.030"),
        (1030.4, ".,", "1,030"),
        (8.0301, ",.", "8,03"),
        (0.5, ".,", "0.5"),
        (72.71, ".,", "72.7"),
    ],
)
def test_a_count_of_billions_reads_without_an_exponent(value, separators, text):
    assert formatting.significant(value, separators) == text


def test_a_trillion_parameter_model_reads_as_1030_billion_in_portuguese(app, models):
    """Kimi K2's 1.03 · 10¹² parameters: the data line said "1,03e+03 bilhões"."""
    open_page(app, lang="pt", model="kimi-k2")
    total = float(models["kimi-k2"].total_params or 0.0)
    expected = translate("pt", "practice.data_params", n=formatting.significant(total / 1e9, ",."))
    assert any(expected in caption.value for caption in app.caption)
    assert not [caption.value for caption in app.caption if "e+" in caption.value]


# ---------------------------------------------------------------- one meaning of "a million tokens"


def test_the_million_token_preset_holds_the_same_million_as_the_agent_page(app):
    from course import seeds
    from course.scenarios import SCENARIOS

    [preset] = [s for s in SCENARIOS["kv_quantization"] if s.label_key == "kv_quantization.preset_seed004"]
    assert preset.values["kq_context"] == seeds.SEED_CONTEXT_TOKENS == 1_000_000
    open_page(app, "lessons/kv_quantization.py", lang="en")
    index = SCENARIOS["kv_quantization"].index(preset)
    app.button(key=f"kq_presets_{index}").click().run()
    assert app.slider(key="kq_context").value == 1_000_000


def test_no_text_calls_2_to_the_20_a_million_without_naming_it():
    """Where 1,048,576 tokens appear in a text, the text says 2²⁰ beside them."""
    for lang in LANGUAGES:
        for key, text in catalogue(lang).items():
            if "1,048,576" in text or "1.048.576" in text:
                assert "2²⁰" in text or "{binary_power}" in text, (lang, key)
