"""The "predict, then reveal" box on the lessons: kvcore's answer is right, slips are named, nothing breaks.

Every expected answer comes from kvcore (``exercise_for`` with the page's default values);
the texts the box must show are the catalogue's, read with ``translate``.
"""

from __future__ import annotations

import string

import pytest

import kvcore
from course import answers, exercises
from i18n import LANGUAGES, catalogue, translate
from kvcore.timing import mean_decode_context_tokens
from kvcore.units import GiB
from ui import practice

LLAMA, RTX_4090 = "llama-3.1-8b", "rtx-4090"


def open_lesson(app, stem: str, *, lang: str = "en", **params: str):
    app.query_params.update({"lang": lang, **params})
    app.run()
    return app.switch_page(f"lessons/{stem}.py").run()


def box_key(app, stem: str) -> str:
    """The key of the page's one predict box (``pv_<stem>_<digest>``)."""
    widgets = [*app.text_input, *app.radio]
    [key] = {w.key.removesuffix("_answer") for w in widgets if w.key and w.key.startswith(f"pv_{stem}_")}
    return key


def answer(app, stem: str, text: str) -> None:
    key = box_key(app, stem)
    app.text_input(key=f"{key}_answer").input(text)
    app.button(key=f"{key}_check").click().run()


def start(key: str, lang: str = "en") -> str:
    """A catalogue text up to its first placeholder: what a message begins with."""
    return catalogue(lang)[key].split("{", 1)[0]


def messages(app) -> list[str]:
    return [element.value for element in (*app.success, *app.warning, *app.info)]


def said(app, key: str, lang: str = "en") -> bool:
    return any(message.startswith(start(key, lang)) for message in messages(app))


def captions(app) -> list[str]:
    return [caption.value for caption in app.caption]


@pytest.fixture(scope="module")
def memory_exercise(models):
    """The memory calculator's default: one sequence of 8,192 tokens of Llama 3.1 8B in BF16."""
    return exercises.exercise_for("sequence_cache", model=models[LLAMA], context_tokens=8192, kv_dtype="bf16")


# ---------------------------------------------------------------- right answers


def test_kvcores_answer_on_the_memory_page_is_right_and_the_steps_appear(app, memory_exercise):
    open_lesson(app, "memory")
    formulas_before = len(app.latex)
    answer(app, "memory", f"{memory_exercise.answer_value} GiB")
    assert not app.exception
    assert said(app, "practice.verdict_right")
    assert len(app.latex) == formulas_before + len(memory_exercise.steps)


def test_the_question_follows_the_pages_slider(app, models):
    open_lesson(app, "memory")
    before = box_key(app, "memory")
    app.slider(key="context").set_value(32768).run()
    assert box_key(app, "memory") != before
    expected = exercises.exercise_for("sequence_cache", model=models[LLAMA], context_tokens=32768, kv_dtype="bf16")
    answer(app, "memory", f"{expected.answer_value} GiB")
    assert said(app, "practice.verdict_right")


def test_answering_does_not_reset_the_lesson(app, models):
    open_lesson(app, "memory")
    app.slider(key="concurrency").set_value(7).run()
    expected = exercises.exercise_for("sequence_cache", model=models[LLAMA], context_tokens=8192, kv_dtype="bf16")
    answer(app, "memory", f"{expected.answer_value} GiB")
    assert app.slider(key="concurrency").value == 7


def test_the_right_phase_is_right_on_the_prefill_decode_page(app, models, gpus):
    open_lesson(app, "prefill_decode")
    step_context = round(float(mean_decode_context_tokens(prompt_tokens=1024, output_tokens=300)))
    expected = exercises.exercise_for(
        "compute_bound_phase",
        model=models[LLAMA],
        gpu=gpus[RTX_4090],
        prompt_tokens=1024,
        context_tokens=step_context,
        batch=1,
        weights_dtype="bf16",
        kv_dtype="bf16",
    )
    key = box_key(app, "prefill_decode")
    app.radio(key=f"{key}_answer").set_value(expected.answer_unit)
    app.button(key=f"{key}_check").click().run()
    assert said(app, "practice.verdict_right")


def test_a_wrong_phase_names_the_right_one(app, models, gpus):
    open_lesson(app, "prefill_decode")
    step_context = round(float(mean_decode_context_tokens(prompt_tokens=1024, output_tokens=300)))
    expected = exercises.exercise_for(
        "compute_bound_phase", model=models[LLAMA], gpu=gpus[RTX_4090], prompt_tokens=1024, context_tokens=step_context
    )
    wrong = next(choice for choice in expected.choices if choice != expected.answer_unit)
    key = box_key(app, "prefill_decode")
    app.radio(key=f"{key}_answer").set_value(wrong)
    app.button(key=f"{key}_check").click().run()
    assert said(app, "practice.verdict_wrong_choice")


def test_kvcores_decode_time_is_right_and_seconds_are_right_in_another_unit(app, models, gpus):
    expected = exercises.exercise_for(
        "decode_ms_per_token", model=models[LLAMA], gpu=gpus[RTX_4090], context_tokens=8192, batch=1
    )
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", f"{expected.answer_value} ms")
    assert said(app, "practice.verdict_right")
    open_lesson(app, "decode_speed")
    answer(app, "decode_speed", f"{expected.answer_value / 1000} s")
    assert said(app, "practice.verdict_right_in_other_unit")


def test_kvcores_user_count_is_right_on_the_sizing_page_and_one_more_is_not(app, models, gpus):
    expected = exercises.exercise_for(
        "users_fit", model=models[LLAMA], gpu=gpus[RTX_4090], context_tokens=8192, utilization=0.9
    )
    open_lesson(app, "sizing")
    answer(app, "sizing", f"{expected.answer_value:.0f}")
    assert said(app, "practice.verdict_right")
    open_lesson(app, "sizing")
    answer(app, "sizing", f"{expected.answer_value + 1:.0f} users")
    assert said(app, "practice.verdict_wrong")


# ---------------------------------------------------------------- slips, named


def test_a_gb_answer_to_a_gib_question_says_which_unit_was_asked(app, memory_exercise):
    open_lesson(app, "memory")
    answer(app, "memory", f"{memory_exercise.answer_value * GiB / 1e9:.4f} GB")
    [success] = [
        message for message in messages(app) if message.startswith(start("practice.verdict_right_in_other_unit"))
    ]
    assert translate("en", "practice.unit_decimal", unit="GB", size="10⁹") in success
    assert translate("en", "practice.unit_binary", unit="GiB", size="2³⁰") in success


def test_the_gib_number_labelled_gb_is_a_unit_slip(app, memory_exercise):
    open_lesson(app, "memory")
    answer(app, "memory", f"{memory_exercise.answer_value} GB")
    assert said(app, "practice.verdict_right_value_wrong_unit_name")


def test_forgetting_k_and_v_is_named(app, memory_exercise):
    open_lesson(app, "memory")
    answer(app, "memory", f"{memory_exercise.answer_value / 2} GiB")
    [warning] = [message for message in messages(app) if message.startswith(start("practice.verdict_off_by_factor"))]
    assert translate("en", "practice.factor_kv_pair") in warning


def test_a_decimal_comma_on_the_portuguese_page_is_read_as_a_decimal_mark(app, models, gpus):
    expected = exercises.exercise_for(
        "decode_ms_per_token", model=models[LLAMA], gpu=gpus[RTX_4090], context_tokens=8192, batch=1
    )
    open_lesson(app, "decode_speed", lang="pt")
    answer(app, "decode_speed", f"{expected.answer_value:.4f} ms".replace(".", ","))
    assert said(app, "practice.verdict_right", "pt")


def test_twelve_and_a_half_with_a_comma_is_read_as_12_5_on_the_portuguese_page(app, memory_exercise):
    open_lesson(app, "memory", lang="pt")
    answer(app, "memory", "12,5")
    parsed = answers.parse_answer("12,5", dimension="memory", lang="pt")
    assert parsed.value == 12.5
    assert translate("pt", "practice.parse_ok", reading="12,5 GiB") in " ".join(captions(app))


@pytest.mark.parametrize(
    ("typed", "key"),
    [("", "practice.verdict_empty"), ("doze", "practice.parse_not_a_number"), ("1.2e3", "practice.parse_ok")],
)
def test_empty_spelled_out_and_exponent_answers_get_their_message_without_an_exception(app, typed, key):
    open_lesson(app, "memory")
    answer(app, "memory", typed)
    assert not app.exception
    assert not app.error
    shown = messages(app) + captions(app)
    assert any(text.startswith(start(key)) for text in shown)


def test_an_unreadable_answer_reveals_nothing_and_counts_nothing(app):
    open_lesson(app, "memory")
    formulas_before = len(app.latex)
    answer(app, "memory", "doze")
    assert len(app.latex) == formulas_before
    assert translate("en", "practice.session_line", answered=0, correct=0) in captions(app)


# ---------------------------------------------------------------- presentation mode


def test_in_presentation_mode_an_answer_stays_hidden_until_reveal(app, memory_exercise):
    open_lesson(app, "memory", present="true")
    formulas_before = len(app.latex)
    answer(app, "memory", f"{memory_exercise.answer_value} GiB")
    assert said(app, "practice.noted")
    assert not said(app, "practice.verdict_right")
    assert len(app.latex) == formulas_before
    key = box_key(app, "memory")
    assert app.button(key=f"{key}_show").label == translate("en", "practice.reveal")
    app.button(key=f"{key}_show").click().run()
    assert said(app, "practice.verdict_right")
    assert len(app.latex) == formulas_before + len(memory_exercise.steps)


def test_in_presentation_mode_the_session_line_counts_an_answer_only_once_revealed(app, memory_exercise):
    open_lesson(app, "memory", present="true")
    answer(app, "memory", f"{memory_exercise.answer_value} GiB")
    assert translate("en", "practice.session_line", answered=0, correct=0) in captions(app)
    app.button(key=f"{box_key(app, 'memory')}_show").click().run()
    assert translate("en", "practice.session_line", answered=1, correct=1) in captions(app)


def test_show_me_reveals_the_answer_without_an_attempt(app, memory_exercise):
    open_lesson(app, "memory")
    app.button(key=f"{box_key(app, 'memory')}_show").click().run()
    assert any(m.value.startswith(start("practice.answer_is")) for m in app.markdown)


# ---------------------------------------------------------------- progress


def test_the_box_counts_this_sessions_answers_on_the_lesson(app, models):
    open_lesson(app, "memory")
    right = exercises.exercise_for("sequence_cache", model=models[LLAMA], context_tokens=8192, kv_dtype="bf16")
    answer(app, "memory", f"{right.answer_value} GiB")
    answer(app, "memory", "999 GiB")  # the same question again: counted once
    assert translate("en", "practice.session_line", answered=1, correct=1) in captions(app)
    app.slider(key="context").set_value(16384).run()
    answer(app, "memory", "999 GiB")
    assert translate("en", "practice.session_line", answered=2, correct=1) in captions(app)


def test_an_answer_after_show_me_does_not_count(app, memory_exercise):
    open_lesson(app, "memory")
    app.button(key=f"{box_key(app, 'memory')}_show").click().run()
    answer(app, "memory", f"{memory_exercise.answer_value} GiB")
    assert translate("en", "practice.session_line", answered=0, correct=0) in captions(app)


def test_the_practice_page_lists_the_lessons_answers_apart_from_quizzes(app, memory_exercise):
    open_lesson(app, "memory")
    answer(app, "memory", f"{memory_exercise.answer_value} GiB")
    app.switch_page("lessons/practice.py").run()
    table = app.dataframe[0].value.set_index(translate("en", "practice.progress_lesson"))
    row = table.loc[translate("en", "nav.memory")]
    assert (
        row[translate("en", "practice.progress_exercises")],
        row[translate("en", "practice.progress_exercises_right")],
    ) == (1, 1)
    assert (
        row[translate("en", "practice.progress_quizzes")],
        row[translate("en", "practice.progress_quizzes_right")],
    ) == (0, 0)


# ---------------------------------------------------------------- every code, status, factor and step has words


def test_every_verdict_code_and_parse_status_has_a_text_in_both_languages():
    assert set(practice.VERDICT_KEYS) == set(answers.VERDICT_CODES)
    assert set(practice.PARSE_KEYS) == set(answers.PARSE_STATUSES)
    for lang in LANGUAGES:
        keys = {*practice.VERDICT_KEYS.values(), *practice.PARSE_KEYS.values(), *practice.FLAG_KEYS.values()}
        assert keys <= set(catalogue(lang))


def test_every_recognisable_factor_has_a_hint():
    own = {"gqa_group", "batch", "gpus", "heads", "score_and_softmax"}
    assert {name for name, _ in answers.COMMON_FACTORS} | own <= set(practice.FACTOR_KEYS)


def test_every_step_of_every_topic_has_a_translated_label(models, gpus):
    names = set()
    for topic in exercises.TOPICS:
        for model in models.values():
            if exercises.topic_applies(topic, model):
                names |= {step.name for step in exercises.exercise_for(topic, model=model, gpu=gpus["h100-sxm"]).steps}
    for tokens in (1024, 131072):
        names |= {step.name for step in exercises.score_matrix_exercise(models[LLAMA], tokens=tokens).steps}
    assert names <= set(practice.STEP_KEYS)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_question_template_uses_only_the_values_the_box_fills(lang):
    for key in practice.QUESTION_KEYS.values():
        fields = {field for _, field, _, _ in string.Formatter().parse(catalogue(lang)[key]) if field}
        assert fields <= set(practice.QUESTION_FIELDS), key


# ---------------------------------------------------------------- kvcore's formulas as LaTeX


def test_a_floor_a_max_and_a_power_become_latex():
    latex = practice.formula_latex(
        "floor(max(kv_budget, 0) * 2^30 / H_kv)", labels={"kv_budget": "KV budget"}, lang="en"
    )
    assert latex.startswith(r"\left\lfloor \max\left(\text{KV budget},\ 0\right)")
    assert r"2^{30}" in latex and r"H_{\text{kv}}" in latex and latex.endswith(r"\right\rfloor ")


@pytest.mark.parametrize(("lang", "expected"), [("en", r"14.957 \cdot 8{,}192"), ("pt", r"14{,}957 \cdot 8.192")])
def test_numbers_in_formulas_take_the_languages_marks(lang, expected):
    assert practice.formula_latex("14.957 * 8192", labels={}, lang=lang) == expected


def test_a_number_in_scientific_notation_reads_as_a_power_of_ten():
    assert practice.formula_latex("8.03e9", labels={}, lang="pt") == r"8{,}03 \cdot 10^{9}"


def test_every_worked_step_of_a_drawn_set_converts_with_balanced_braces(models, gpus):
    for asked in exercises.generate_exercise_set(5, models=models, gpus=gpus, count=18):
        for step in asked.steps:
            latex = practice.step_latex(step, labels={}, lang="pt", value=r"1\ \text{B}")
            assert latex.count("{") == latex.count("}"), step
            assert latex.count(r"\left") == latex.count(r"\right"), step


def test_the_score_matrix_question_comes_from_kvcores_attention(models):
    asked = practice.exercise("score_matrix_bytes", model=models[LLAMA], tokens=8192)
    memory = kvcore.prefill_attention_memory(models[LLAMA], tokens=8192, flash=False)
    assert asked is not None and asked.answer_value * GiB == float(memory.temporary_bytes)


def test_settings_that_make_no_question_give_no_exercise(models, gpus):
    assert practice.exercise("gqa_saving", model=models["deepseek-v3"]) is None
    assert practice.exercise("users_fit", model=models["gpt2"], gpu=gpus[RTX_4090], gpus=8) is None


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_a_config_value_in_a_question_keeps_its_point_in_every_language(app, lang):
    """``gpu_memory_utilization = 0.9`` is code the student would type: never "0,9", even in pt (issue 15)."""
    app.query_params["lang"] = lang
    app.run()
    app.switch_page("lessons/vllm_pool.py").run()
    assert not app.exception
    [question] = [shown.value for shown in app.markdown if "gpu_memory_utilization =" in shown.value]
    assert "`gpu_memory_utilization = 0.9`" in question
