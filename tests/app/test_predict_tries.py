"""Predict, then reveal, as issue 15 found it: the answer's own gap, the slip that explains it best, two tries,
a counter that sees a later right try, a worked answer in words, and the exercise page's keeps and counts.

Expected figures come from kvcore (``exercise_for``, ``generate_exercise_set``, ``course.mistakes``); texts from
the catalogue (``translate``).
"""

from __future__ import annotations

import pytest

from course import exercises, mistakes
from i18n import catalogue, translate
from kvcore.timing import mean_decode_context_tokens
from tests.app.helpers import page_opener
from tests.app.test_practice_widgets import LLAMA, RTX_4090, answer, box_key, captions, messages, open_lesson, start
from ui import practice

open_practice = page_opener("lessons/practice.py")
SET = 1


@pytest.fixture(scope="module")
def decode(models, gpus):
    """/decode_speed's default question: Llama 3.1 8B on an RTX 4090, 8,192 tokens, batch 1 (17.0 ms)."""
    return exercises.exercise_for("decode_ms_per_token", model=models[LLAMA], gpu=gpus[RTX_4090], context_tokens=8192)


def session_line(answered: int, correct: int, lang: str = "en") -> str:
    return translate(lang, "practice.session_line", answered=answered, correct=correct)


def warnings(app) -> list[str]:
    return [element.value for element in app.warning]


def answer_shown(app, asked, lang: str = "en") -> bool:
    """The right answer appears in a verdict or the worked answer's first line."""
    shown = practice.answer_text(asked) if lang == "en" else None
    texts = [*messages(app), *(m.value for m in app.markdown)]
    return shown is not None and any(f"**{shown}**" in text for text in texts)


# ---------------------------------------------------------------- the gap is the answer's own, the slip the closest


@pytest.mark.parametrize(("typed", "gap"), [("16", "5.9 %"), ("15.8", "7 %")])
def test_a_wrong_first_try_shows_its_own_gap(app, decode, typed, gap):
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", typed)
    assert round(float(typed) / decode.answer_value - 1, 3) in (-0.059, -0.07)
    [warning] = warnings(app)
    assert translate("en", "practice.percent_too_small", percent=gap) in warning


def test_16_ms_is_diagnosed_as_leaving_out_the_kv_read(app, decode, models, gpus):
    wrong = mistakes.careless_answers(decode, model=models[LLAMA], gpu=gpus[RTX_4090])
    assert abs(16 / wrong["no_kv_read"] - 1) < abs(16 / (decode.answer_value / 1.024**3) - 1)
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", "16")
    [warning] = warnings(app)
    assert translate("en", "practice.mistake_no_kv_read") in warning
    assert translate("en", "practice.factor_binary", factor="1.07") not in warning


def test_an_answer_no_slip_explains_gets_where_to_look(app):
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", "14.5")
    [warning] = warnings(app)
    assert translate("en", "practice.hint_decode_ms_per_token") in warning
    assert not any(translate("en", key) in warning for key in practice.MISTAKE_KEYS.values())


# ---------------------------------------------------------------- two tries


def test_a_wrong_first_try_gets_a_hint_and_not_the_answer(app, decode):
    open_lesson(app, "decode_speed")
    formulas_before = len(app.latex)
    answer(app, "decode_speed", "16")
    [warning] = warnings(app)
    assert translate("en", "practice.try_again") in warning
    assert not answer_shown(app, decode)
    assert len(app.latex) == formulas_before  # no worked steps yet


def test_a_second_wrong_try_shows_the_answer_and_the_steps(app, decode):
    open_lesson(app, "decode_speed")
    formulas_before = len(app.latex)
    answer(app, "decode_speed", "16")
    answer(app, "decode_speed", "30")
    assert answer_shown(app, decode)
    assert len(app.latex) == formulas_before + len(decode.steps)
    assert session_line(1, 0) in captions(app)


def test_show_me_after_a_wrong_first_try_gives_the_answer(app, decode):
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", "16")
    app.button(key=f"{box_key(app, 'decode_speed')}_show").click().run()
    assert answer_shown(app, decode)
    assert session_line(1, 0) in captions(app)


def test_a_right_second_try_counts_as_right(app, decode):
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", "16")
    assert session_line(1, 0) in captions(app)
    answer(app, "decode_speed", f"{decode.answer_value} ms")
    assert any(message.startswith(start("practice.verdict_right")) for message in messages(app))
    assert session_line(1, 1) in captions(app)


def test_a_right_answer_after_two_wrong_tries_does_not_count(app, decode):
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", "16")
    answer(app, "decode_speed", "30")
    answer(app, "decode_speed", f"{decode.answer_value} ms")
    assert session_line(1, 0) in captions(app)


def test_a_wrong_first_phase_is_not_told_the_right_one(app, models, gpus):
    step_context = round(float(mean_decode_context_tokens(prompt_tokens=1024, output_tokens=300)))
    expected = exercises.exercise_for(
        "compute_bound_phase", model=models[LLAMA], gpu=gpus[RTX_4090], prompt_tokens=1024, context_tokens=step_context
    )
    open_lesson(app, "prefill_decode")
    key = box_key(app, "prefill_decode")
    app.radio(key=f"{key}_answer").set_value(next(c for c in expected.choices if c != expected.answer_unit))
    app.button(key=f"{key}_check").click().run()
    [warning] = warnings(app)
    assert warning.startswith(start("practice.hint_wrong_choice"))
    assert translate("en", practice.CHOICE_KEYS[expected.answer_unit]) not in warning
    assert not any(m.value.startswith(start("practice.answer_is")) for m in app.markdown)


# ---------------------------------------------------------------- the worked answer reads as words


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_phase_worked_answer_is_words_with_readable_numbers(app, lang):
    open_lesson(app, "prefill_decode", lang=lang)
    app.button(key=f"{box_key(app, 'prefill_decode')}_show").click().run()
    assert not app.exception
    shown = [m.value for m in app.markdown] + [latex.value for latex in app.latex]
    assert not [text for text in shown if "I_prefill" in text or ">=" in text or r"I_{\text{prefill}}" in text]
    assert not [text for text in shown if "67206" in text]  # 1.67206e13 FLOPs: four digits are enough
    bound = catalogue(lang)["practice.bound_compute"]
    assert any(bound in text and catalogue(lang)["practice.phase_prefill"] in text for text in shown)


@pytest.mark.parametrize(
    ("token", "shown"),
    [("1.67206e13", "1.672e13"), ("163.889", "163.9"), ("14.957", "14.957"), ("1073741824", "1073741824")],
)
def test_a_worked_number_keeps_the_digits_a_reader_needs(token, shown):
    assert practice.shown_number(token) == shown


def test_a_count_under_a_floor_keeps_its_digits():
    # Under a floor the count depends on every digit: not cut to four (7.123), as latex_number writes it.
    assert r"\lfloor 7{,}12346 " in practice.formula_latex("floor(7.12345678901 / 2)", labels={}, lang="pt")


# ---------------------------------------------------------------- the exercise page


def set_box(models, gpus, topic: str) -> tuple[int, exercises.Exercise]:
    drawn = exercises.generate_exercise_set(SET, models=models, gpus=gpus, count=12)[:8]
    return next((number, asked) for number, asked in enumerate(drawn, start=1) if asked.topic == topic)


def practice_key(number: int, asked: exercises.Exercise) -> str:
    return f"ex_{SET}_{number}_{practice.digest(asked)}"


def check(app, key: str, text: str) -> None:
    app.text_input(key=f"{key}_answer").input(text)
    app.button(key=f"{key}_check").click().run()


def test_an_empty_check_after_a_right_answer_keeps_it(app, models, gpus):
    number, asked = set_box(models, gpus, "sequence_cache")
    open_practice(app, ex_set=str(SET))
    key = practice_key(number, asked)
    check(app, key, f"{asked.answer_value} {asked.answer_unit}")
    right = translate("en", "practice.verdict_right", expected=practice.answer_text(asked))
    assert right in [s.value for s in app.success]
    check(app, key, "")
    assert right in [s.value for s in app.success]
    assert not any(m.startswith(start("practice.verdict_empty")) for m in messages(app))
    score = translate("en", "practice.score", set=SET, answered=1, count=8, right=1)
    assert any(m.value == score for m in app.markdown)


def test_half_a_gib_is_read_as_a_number(app, models, gpus):
    number, asked = set_box(models, gpus, "sequence_cache")
    open_practice(app, ex_set=str(SET))
    check(app, practice_key(number, asked), "1/2 GiB")
    assert not any(m.startswith(start("practice.parse_unknown_unit")) for m in messages(app))
    assert translate("en", "practice.parse_ok", reading="0.5 GiB") in " ".join(captions(app))


def test_an_unknown_unit_offers_only_units_of_the_asked_kind(app, models, gpus):
    number, asked = set_box(models, gpus, "sequence_cache")
    open_practice(app, ex_set=str(SET))
    check(app, practice_key(number, asked), "3 parsecs")
    [message] = [m for m in messages(app) if m.startswith(start("practice.parse_unknown_unit"))]
    assert translate("en", "practice.related_units", units="GB, MiB or KiB") in message
    assert " s)" not in message and "ms" not in message


def test_the_sets_answers_reach_the_progress_table_first(app, models, gpus):
    number, asked = set_box(models, gpus, "sequence_cache")
    open_practice(app, ex_set=str(SET))
    key = practice_key(number, asked)
    check(app, key, f"{asked.answer_value * 3} {asked.answer_unit}")
    check(app, key, f"{asked.answer_value} {asked.answer_unit}")  # right at the second try
    table = app.dataframe[0].value
    first = table.iloc[0]
    assert first[translate("en", "practice.progress_lesson")] == translate("en", "practice.progress_sets")
    assert (
        first[translate("en", "practice.progress_exercises")],
        first[translate("en", "practice.progress_exercises_right")],
    ) == (1, 1)
