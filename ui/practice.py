"""Predict, then reveal: a question on the learner's own settings, checked in words, then worked out.

On a lesson (one call, where the page's values exist, before its takeaway)::

    practice.predict("sequence_cache", stem="memory", model=model, context_tokens=context_tokens, kv_dtype=kv_dtype)

builds the exercise with kvcore (``course.exercises.exercise_for``, or the lesson topics'
own builders such as ``score_matrix_exercise``) and draws a compact box: the question,
the data it needs, the tolerance, a form (typing does not rerun the page). Two tries: a
wrong first try gets how far off it is and a hint (the slip that explains it best, from
``course.mistakes`` and the usual factors, else where to look), never the answer; a right
try, a second wrong one, or the "Show me" button gives the verdict, the answer and the
worked steps. An empty or unreadable "Check" says why and keeps the last real try.
A configuration that is not a question (a topic that does not apply, a model the GPU
cannot hold in that way) draws nothing. The exercise practice page draws the same box
with ``answer_box``.

Widget keys: ``pv_<stem>_<digest>_…`` on lessons and ``ex_…`` on the practice page;
the digest hashes the topic, inputs and answer, so a changed configuration gets a fresh
question and the old one's answer stays where it was. In presentation mode
(``lesson.presenting()``) answers are noted but nothing is revealed until the presenter
presses "Reveal".

Progress (this browser session only: ``st.session_state``, nothing stored on the server)
-----------------------------------------------------------------------------------------
``record(stem, correct, kind="exercise")`` counts one answered question of the lesson
`stem`; ``kind`` keeps exercises ("exercise") and quizzes ("quiz") apart.
``progress(kind="exercise")`` returns ``{stem: Tally(answered, correct)}`` for that kind.
The predict box counts each question once, at its first real try (not an answer typed
after the solution was shown, not an unreadable one), and as right when the first or the
second try is (``mark_right``); a quiz calls ``practice.record(stem, correct, kind="quiz")``
once per question it scores.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import streamlit as st

import kvcore
import ui
from charts.formatting import percent, significant
from course import answers, exercises, mistakes
from course.exercises import Exercise, Step
from kvcore.timing import matmul_peak_flop_per_s
from kvcore.units import (
    format_bandwidth,
    format_bytes,
    format_flop,
    format_flop_per_byte,
    format_flops,
    format_quantity,
    format_tokens,
)
from ui import lesson, t
from ui.formula import latex_number

#: Exercise sets (/practice and the instructor's answer key read them alike): the set number's range, the
#: questions a set shows, and the address keys (``?ex_set=7&ex_count=8&ex_topics=…``).
MAX_SET = 10_000
MIN_COUNT, MAX_COUNT, DEFAULT_COUNT = 4, 12, 8
SET_KEY, COUNT_KEY, TOPICS_KEY = "ex_set", "ex_count", "ex_topics"


def exercise_set(set_number: int, *, count: int, topics: Sequence[str] = ()) -> list[Exercise]:
    """Set n as everyone sees it: ``generate_exercise_set(n, count=MAX_COUNT, topics=…)`` cut to `count`.

    The topics in the catalogue's order, whatever order they were picked in (the same topics always give
    the same set); a longer set only adds questions at its end, so the first ones keep their answers.
    Memory answers are asked in the sidebar's unit family (GiB or GB): the same questions either way.
    """
    chosen = tuple(topic for topic in exercises.TOPICS if topic in topics) or None
    drawn = exercises.generate_exercise_set(
        set_number,
        models=ui.models(),
        gpus=ui.gpus(),
        count=MAX_COUNT,
        topics=chosen,
        memory_unit=lesson.memory_unit(),
    )
    return list(drawn[:count])


KINDS = ("exercise", "quiz")
PROGRESS_KEY = "_practice_progress"
#: Verdicts that count as an attempt: they use up a try and enter the progress.
ATTEMPTS = frozenset(
    {"right", "right_in_other_unit", "right_value_wrong_unit_name", "off_by_factor", "known_mistake", "wrong"}
)
#: Tries before the answer is shown (a right one shows it at once).
TRIES = 2
#: Topics whose answer is about K and V, where a factor of 2 means "K and V".
KV_TOPICS = frozenset({"bytes_per_token", "sequence_cache", "users_fit", "max_context", "decode_ms_per_token"})

TOPIC_KEYS = {
    "bytes_per_token": "practice.topic_bytes_per_token",
    "sequence_cache": "practice.topic_sequence_cache",
    "users_fit": "practice.topic_users_fit",
    "weights_memory": "practice.topic_weights_memory",
    "decode_ms_per_token": "practice.topic_decode_ms_per_token",
    "prefill_ttft": "practice.topic_prefill_ttft",
    "compute_bound_phase": "practice.topic_compute_bound_phase",
    "gqa_saving": "practice.topic_gqa_saving",
    "max_context": "practice.topic_max_context",
    "score_matrix_bytes": "practice.topic_score_matrix_bytes",
}
QUESTION_KEYS = {
    "bytes_per_token": "practice.q_bytes_per_token",
    "sequence_cache": "practice.q_sequence_cache",
    "users_fit": "practice.q_users_fit",
    "weights_memory": "practice.q_weights_memory",
    "decode_ms_per_token": "practice.q_decode_ms_per_token",
    "prefill_ttft": "practice.q_prefill_ttft",
    "compute_bound_phase": "practice.q_compute_bound_phase",
    "gqa_saving": "practice.q_gqa_saving",
    "max_context": "practice.q_max_context",
    "score_matrix_bytes": "practice.q_score_matrix_bytes",
}
#: The placeholders a question template may use (``question_values`` fills every one).
QUESTION_FIELDS = (
    "model",
    "gpu",
    "gpus",
    "context",
    "prompt",
    "tokens",
    "heads",
    "batch",
    "batch_text",
    "sequences",
    "kv_dtype",
    "dtype",
    "weights_dtype",
    "utilization",
    "utilization_fraction",
    "memory_note",
    "pool_note",
    "params",
    "bandwidth",
    "unit",
)
VERDICT_KEYS = {
    "right": "practice.verdict_right",
    "right_in_other_unit": "practice.verdict_right_in_other_unit",
    "right_value_wrong_unit_name": "practice.verdict_right_value_wrong_unit_name",
    "off_by_factor": "practice.verdict_off_by_factor",
    "known_mistake": "practice.verdict_off_by_factor",  # the mistake's own words follow (MISTAKE_KEYS)
    "wrong": "practice.verdict_wrong",
    "unparseable": "practice.parse_not_a_number",  # the parse status says why (PARSE_KEYS)
    "empty": "practice.verdict_empty",
    "wrong_dimension": "practice.verdict_wrong_dimension",
    "ambiguous": "practice.verdict_ambiguous",
}
#: Every parse status: the readable ones echo the reading, the others say why nothing was read.
PARSE_KEYS = {
    "ok": "practice.parse_ok",
    "ambiguous": "practice.verdict_ambiguous",
    "empty": "practice.verdict_empty",
    "not_a_number": "practice.parse_not_a_number",
    "not_finite": "practice.parse_not_finite",
    "negative": "practice.parse_negative",
    "unknown_unit": "practice.parse_unknown_unit",
    "wrong_dimension": "practice.verdict_wrong_dimension",
    "not_a_choice": "practice.parse_not_a_choice",
}
FLAG_KEYS = {
    "b_read_as_byte": "practice.flag_b_read_as_byte",
    "decimal_comma": "practice.flag_decimal_comma",
    "decimal_point": "practice.flag_decimal_point",
    "assumed_unit": "practice.flag_assumed_unit",
}
FACTOR_KEYS = {
    "gqa_group": "practice.factor_gqa_group",
    "batch": "practice.factor_batch",
    "gpus": "practice.factor_gpus",
    "heads": "practice.factor_heads",
    "score_and_softmax": "practice.factor_score_and_softmax",
    "kv_pair": "practice.factor_kv_pair",
    "bits_per_byte": "practice.factor_bits_per_byte",
    "thousand": "practice.factor_thousand",
    "kilo_vs_kibi": "practice.factor_binary",
    "mega_vs_mebi": "practice.factor_binary",
    "giga_vs_gibi": "practice.factor_binary",
    "tera_vs_tebi": "practice.factor_binary",
}
#: The careless calculator's slips (course.mistakes) in words: what the answer suggests was left out.
MISTAKE_KEYS = {
    "ignoring_kv_heads": "practice.mistake_ignoring_kv_heads",
    "head_dim_from_hidden": "practice.mistake_head_dim_from_hidden",
    "mla_with_factor_two": "practice.mistake_mla_with_factor_two",
    "sliding_as_full": "practice.mistake_sliding_as_full",
    "no_kv_read": "practice.mistake_no_kv_read",
    "one_sequence_kv": "practice.mistake_one_sequence_kv",
    "all_experts_read": "practice.mistake_all_experts_read",
    "attention_left_out": "practice.mistake_attention_left_out",
    "wrong_roof": "practice.mistake_wrong_roof",
    "whole_memory": "practice.mistake_whole_memory",
    "weights_not_subtracted": "practice.mistake_weights_not_subtracted",
    "active_weights_only": "practice.mistake_active_weights_only",
}
#: Where to look when no slip explains a wrong first try, by topic.
HINT_KEYS = {
    "bytes_per_token": "practice.hint_bytes_per_token",
    "sequence_cache": "practice.hint_sequence_cache",
    "users_fit": "practice.hint_users_fit",
    "weights_memory": "practice.hint_weights_memory",
    "decode_ms_per_token": "practice.hint_decode_ms_per_token",
    "prefill_ttft": "practice.hint_prefill_ttft",
    "compute_bound_phase": "practice.hint_compute_bound_phase",
    "gqa_saving": "practice.hint_gqa_saving",
    "max_context": "practice.hint_max_context",
    "score_matrix_bytes": "practice.hint_score_matrix_bytes",
}
#: A few units of each dimension, for "use GiB (or a related unit, such as GB, MiB or KiB)"; a decimal memory
#: answer names the decimal ones first (``DECIMAL_RELATED``).
DECIMAL_RELATED = ("GB", "MB", "KB", "GiB")
RELATED_UNITS = {
    answers.MEMORY: ("GiB", "GB", "MiB", "KiB"),
    answers.TIME: ("ms", "s", "us"),
    answers.BANDWIDTH: ("GB/s", "TB/s", "GiB/s"),
    answers.FLOPS: ("TFLOP", "GFLOP", "PFLOP"),
    answers.FLOP_RATE: ("TFLOP/s", "GFLOP/s", "PFLOP/s"),
}
CHOICE_KEYS = {
    "neither": "practice.choice_neither",
    "prefill": "practice.choice_prefill",
    "decode": "practice.choice_decode",
    "both": "practice.choice_both",
}
DIMENSION_KEYS = {
    "memory": "practice.dimension_memory",
    "time": "practice.dimension_time",
    "token_rate": "practice.dimension_token_rate",
    "bandwidth": "practice.dimension_bandwidth",
    "flops": "practice.dimension_flops",
    "flop_rate": "practice.dimension_flop_rate",
    "count": "practice.dimension_count",
    "ratio": "practice.dimension_ratio",
    "choice": "practice.dimension_choice",
}
KIND_KEYS = {
    "full": "practice.kind_full",
    "sliding": "practice.kind_sliding",
    "linear": "practice.kind_linear",
    "mla": "practice.kind_mla",
}
#: Words for the units that are nouns (the others are written as symbols in both languages).
UNIT_KEYS = {
    "users": "practice.unit_users",
    "tokens": "practice.unit_tokens",
    "gpus": "practice.unit_gpus",
    "sequences": "practice.unit_sequences",
    "heads": "practice.unit_heads",
    "pairs": "practice.unit_pairs",
}
STEP_KEYS = {
    "answer": "practice.step_answer",
    "attention_flops": "practice.step_attention_flops",
    "attention_pairs": "practice.step_attention_pairs",
    "bytes_per_token": "practice.step_bytes_per_token",
    "bytes_per_token_full": "practice.step_bytes_per_token_full",
    "bytes_per_token_sliding": "practice.step_bytes_per_token_sliding",
    "bytes_per_token_mla": "practice.step_bytes_per_token_mla",
    "bytes_per_token_kib": "practice.step_bytes_per_token_kib",
    "bytes_per_token_kb": "practice.step_bytes_per_token_kb",
    "compute_time": "practice.step_compute_time",
    "decode_intensity": "practice.step_decode_intensity",
    "decode_time": "practice.step_decode_time",
    "kv_budget": "practice.step_kv_budget",
    "kv_full": "practice.step_kv_full",
    "kv_sliding": "practice.step_kv_sliding",
    "kv_mla": "practice.step_kv_mla",
    "kv_linear": "practice.step_kv_linear",
    "kv_heads_per_gpu": "practice.step_kv_heads_per_gpu",
    "kv_read": "practice.step_kv_read",
    "kv_sequence": "practice.step_kv_sequence",
    "kv_sequence_all_gpus": "practice.step_kv_sequence_all_gpus",
    "kv_sequence_gib": "practice.step_kv_sequence_gib",
    "kv_sequence_gb": "practice.step_kv_sequence_gb",
    "matmul_flops": "practice.step_matmul_flops",
    "memory_time": "practice.step_memory_time",
    "mha_bytes_per_token": "practice.step_mha_bytes_per_token",
    "pairs_full": "practice.step_pairs_full",
    "pairs_sliding": "practice.step_pairs_sliding",
    "pairs_mla": "practice.step_pairs_mla",
    "pool_tokens": "practice.step_pool_tokens",
    "prefill_bytes": "practice.step_prefill_bytes",
    "prefill_flops": "practice.step_prefill_flops",
    "prefill_intensity": "practice.step_prefill_intensity",
    "ratio": "practice.step_ratio",
    "ridge_point": "practice.step_ridge_point",
    "step_bytes": "practice.step_step_bytes",
    "ttft": "practice.step_ttft",
    "usable_memory": "practice.step_usable_memory",
    "users": "practice.step_users",
    "weights": "practice.step_weights",
    "weights_read": "practice.step_weights_read",
    "score_matrix_head": "practice.step_score_matrix_head",
    "score_matrix": "practice.step_score_matrix",
    "score_matrix_gib": "practice.step_score_matrix_gib",
    "score_matrix_mib": "practice.step_score_matrix_mib",
    "score_matrix_gb": "practice.step_score_matrix_gb",
    "score_matrix_mb": "practice.step_score_matrix_mb",
    # Symbols of the phase question that stand for a step's value.
    "ridge": "practice.step_ridge_point",
    "bytes_prefill": "practice.step_prefill_bytes",
    "bytes_decode": "practice.step_step_bytes",
}
#: Plain-ASCII symbols of kvcore's formulas → LaTeX (names not listed here are step names or X_y symbols).
SYMBOLS = {
    "VRAM": r"\text{VRAM}",
    "BW": r"\text{BW}",
    "batch": "B",
    "H_kv_gpu": r"H_{kv}^{\,gpu}",
    "min": r"\min",
    "max": r"\max",
}
#: Binary and decimal memory units, for "GiB (binary, 2³⁰ bytes)".
BINARY_UNITS = {"KiB": "2¹⁰", "MiB": "2²⁰", "GiB": "2³⁰", "TiB": "2⁴⁰"}
DECIMAL_UNITS = {"KB": "10³", "MB": "10⁶", "GB": "10⁹", "TB": "10¹²"}
#: Lesson topics and their builders (they are not in ``exercises.TOPICS``).
LESSON_BUILDERS: dict[str, Callable[..., Exercise]] = {"score_matrix_bytes": exercises.score_matrix_exercise}


class Tally(NamedTuple):
    """Questions answered and answered right, in this session."""

    answered: int
    correct: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one answer box holds now: for the practice page's score line and chart.

    ``answered``: a real try was made; ``revealed``: its verdict is on show (a presentation
    keeps it hidden until "Reveal"); ``accepted`` and ``ratio`` describe the latest try.
    """

    answered: bool
    revealed: bool
    accepted: bool | None = None
    ratio: float | None = None


# ---------------------------------------------------------------- progress


def record(stem: str, correct: bool, *, kind: str = "exercise") -> None:
    """Count one answered question of lesson `stem` (``kind``: 'exercise' or 'quiz') in this session."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    tallies: dict[str, dict[str, Tally]] = st.session_state.setdefault(PROGRESS_KEY, {})
    answered, right = tallies.setdefault(kind, {}).get(stem, Tally(0, 0))
    tallies[kind][stem] = Tally(answered + 1, right + int(bool(correct)))


def mark_right(stem: str, *, kind: str = "exercise") -> None:
    """Turn one answered-wrong question of lesson `stem` into a right one (a second try that got it)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    tallies: dict[str, dict[str, Tally]] = st.session_state.setdefault(PROGRESS_KEY, {})
    answered, right = tallies.setdefault(kind, {}).get(stem, Tally(0, 0))
    tallies[kind][stem] = Tally(answered, min(answered, right + 1))


def progress(kind: str = "exercise") -> dict[str, Tally]:
    """{lesson stem: Tally(answered, correct)} of this session, for one kind ('exercise' or 'quiz')."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return dict(st.session_state.get(PROGRESS_KEY, {}).get(kind, {}))


# ---------------------------------------------------------------- the box on a lesson


def exercise(
    topic: str, *, model: kvcore.ModelSpec, gpu: kvcore.GpuSpec | None = None, **params: Any
) -> Exercise | None:
    """kvcore's exercise on these settings, or None when they make no question (a ValueError, no finite answer).

    Memory answers are asked in the sidebar's unit family: KiB and GiB, or KB and GB (``lesson.memory_unit``).
    Kept per process by its settings (``_built``): `params` are numbers and texts, as every topic's knobs are.
    """
    return _built(topic, model, gpu, lesson.memory_unit(), tuple(sorted(params.items())))


#: Exercises kept per process (a class moving a lesson's sliders asks the same questions again).
KEPT_EXERCISES = 512


@functools.lru_cache(maxsize=KEPT_EXERCISES)
def _built(
    topic: str,
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec | None,
    memory_unit: str,
    params: tuple[tuple[str, Any], ...],
) -> Exercise | None:
    """``exercise``'s question: the builder's exercise (frozen, shared read-only), None when it makes none."""
    try:
        if topic in LESSON_BUILDERS:
            built = LESSON_BUILDERS[topic](model, memory_unit=memory_unit, **dict(params))
        else:
            built = exercises.exercise_for(topic, model=model, gpu=gpu, memory_unit=memory_unit, **dict(params))
    except ValueError:
        return None
    return built if math.isfinite(built.answer_value) else None


def predict(
    topic: str,
    *,
    stem: str,
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec | None = None,
    otherwise: tuple[str, Mapping[str, Any]] | None = None,
    **params: Any,
) -> Outcome | None:
    """The "predict, then reveal" box of lesson `stem`, on the page's own model, GPU and values.

    `params` are the topic's knobs (``course.exercises.exercise_for``). When these settings
    make no question, ``otherwise = (topic, params)`` is asked instead, and when that makes
    none either nothing is drawn. `model` may be a variant of a catalogue model (the memory
    calculator's changed heads): the question and its data describe it.
    """
    asked = exercise(topic, model=model, gpu=gpu, **params)
    if asked is None and otherwise is not None:
        asked = exercise(otherwise[0], model=model, gpu=gpu, **otherwise[1])
    if asked is None:
        return None
    presenting = lesson.presenting()
    with _predict_frame(stem, presenting):
        outcome = answer_box(
            asked,
            key=f"pv_{stem}_{digest(asked)}",
            stem=stem,
            model=model,
            gpu=gpu,
            # the box's title heads its question (one element); presenting, the expander's label is the title
            heading=None if presenting else f":material/online_prediction: **{t('practice.predict_title')}**",
        )
        tally = progress().get(stem, Tally(0, 0))
        st.caption(t("practice.session_line", answered=tally.answered, correct=tally.correct))
    return outcome


def _predict_frame(stem: str, presenting: bool) -> Any:
    """The predict box's frame: a bordered box (its title heads the question), or, in presentation mode, a
    folded expander titled so, which the presenter opens when the class is ready to guess (the chart keeps
    the first screen)."""
    if presenting:
        return st.expander(t("practice.predict_title"), expanded=False, icon=":material/online_prediction:")
    return st.container(border=True, key=f"pv_{stem}")


def digest(asked: Exercise) -> str:
    """A short hash of the question (topic, inputs, answer): the same settings give the same key."""
    text = repr((asked.topic, sorted(asked.inputs.items()), round(asked.answer_value, 9), asked.answer_unit))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


# ---------------------------------------------------------------- the box itself (lessons and the practice page)


def answer_box(
    asked: Exercise,
    *,
    key: str,
    stem: str,
    model: kvcore.ModelSpec | None = None,
    gpu: kvcore.GpuSpec | None = None,
    heading: str | None = None,
) -> Outcome:
    """Question, data, tolerance, the answer form, then (once revealed) the verdict and the worked steps.

    `model` and `gpu` default to the catalogue entries the exercise names; `heading`, a line above the
    question, in the same element. The data and the tolerance are one caption, a paragraph each: every
    element is a message to the browser at each rerun of the lesson.
    """
    model = model or ui.models().get(asked.inputs["model"])
    gpu_id = asked.inputs.get("gpu")
    gpu = gpu or (ui.gpus().get(gpu_id) if gpu_id else None)
    asking = question(asked, model=model, gpu=gpu)
    st.markdown(asking if heading is None else f"{heading}\n\n{asking}")
    data = data_line(asked, model=model, gpu=gpu)
    st.caption("\n\n".join(part for part in (data, tolerance_text(asked)) if part))

    presenting = lesson.presenting()
    state = _state(key)
    with st.form(f"{key}_form", border=False, enter_to_submit=True):
        if asked.dimension == answers.CHOICE:
            st.radio(
                t("practice.your_choice"),
                asked.choices,
                index=None,
                format_func=choice_name,
                key=f"{key}_answer",
                horizontal=True,
            )
        else:
            st.text_input(
                t("practice.your_answer", unit=unit_name(asked.answer_unit)),
                key=f"{key}_answer",
                placeholder=t("practice.placeholder", example=_example(asked)),
            )
        with st.container(horizontal=True):
            st.form_submit_button(
                t("practice.check"), key=f"{key}_check", type="primary", on_click=_on_check, args=(asked, key, stem)
            )
            st.form_submit_button(
                t("practice.reveal") if presenting else t("practice.show"),
                key=f"{key}_show",
                on_click=_on_show,
                args=(asked, key, stem),
            )

    lang = ui.language()
    typed = asked.check(state["last"], lang) if state["last"] is not None else None
    verdict = None
    if state["answer"] is not None:
        if state["slips"] is None:  # the box's question never changes (its key hashes it): worked out once
            state["slips"] = mistakes.careless_answers(asked, model=model, gpu=gpu) if model is not None else {}
        verdict = checked(asked, state["answer"], lang, slips=state["slips"])
    # An empty or unreadable Check says why; an empty one after a real try changes nothing.
    if typed is not None and typed.code not in ATTEMPTS and not (typed.code == "empty" and verdict is not None):
        st.info(verdict_message(typed, asked, typed=state["last"]), icon=":material/edit:")
    hidden = presenting and not state["revealed"]
    if verdict is not None and hidden:
        st.info(t("practice.noted", answer=_typed(asked, state["answer"])), icon=":material/lock:")
    elif verdict is not None:
        show = st.success if verdict.accepted else st.warning
        words = (
            verdict_message(verdict, asked, typed=state["answer"])
            if verdict.accepted or state["revealed"]
            else hint_message(verdict, asked)
        )
        show(words, icon=":material/check_circle:" if verdict.accepted else ":material/error:")
        notes = flag_notes(verdict, asked)
        if notes:
            st.caption(notes)
    if state["revealed"]:
        worked_steps(asked, with_answer=verdict is None)
    return Outcome(
        answered=verdict is not None,
        revealed=verdict is not None and not hidden,
        accepted=verdict.accepted if verdict is not None else None,
        ratio=_ratio(verdict) if verdict is not None else None,
    )


def checked(asked: Exercise, text: str, lang: str, *, slips: Mapping[str, float] | None = None) -> answers.Verdict:
    """`text` checked against `asked`, with the careless calculator's answers among the slips it may name.

    `slips`: ``course.mistakes.careless_answers`` of the exercise ({"no_kv_read": 15.93}, in its unit).
    """
    return answers.check_answer(
        answers.parse_answer(text, dimension=asked.dimension, lang=lang),
        expected_value=asked.answer_value,
        expected_unit=asked.answer_unit,
        tolerance_rel=asked.tolerance_rel,
        factors=asked.factors,
        mistakes=slips or {},
    )


def _state(key: str) -> dict[str, Any]:
    """The box's own memory (not a widget: it outlives a rerun without the box).

    ``last``: what the latest Check held; ``answer``: the latest real try; ``tries``: real tries
    before the answer was shown; ``revealed``: the answer and its steps are shown; ``recorded``:
    the question is counted; ``right``: counted as right; ``peeked``: shown before any try;
    ``slips``: the careless calculator's answers to this question (``course.mistakes``), once needed.
    """
    state: dict[str, Any] = st.session_state.setdefault(f"{key}__state", {})
    for name, start in (
        ("last", None),
        ("answer", None),
        ("tries", 0),
        ("revealed", False),
        ("recorded", False),
        ("right", False),
        ("peeked", False),
        ("slips", None),
    ):
        state.setdefault(name, start)
    return state


def _on_check(asked: Exercise, key: str, stem: str) -> None:
    """Form callback: keep a real try; the first counts, a right one or the second reveals the answer.

    An empty or unreadable answer is only kept to say why (the last real try stays). In a
    presentation the answer is only noted: it counts when the presenter reveals it, so that
    not even the session line above the room gives away whether it was right.
    """
    typed = st.session_state.get(f"{key}_answer")
    state = _state(key)
    state["last"] = "" if typed is None else str(typed)
    verdict = asked.check(state["last"], ui.language())
    if verdict.code not in ATTEMPTS:
        return
    state["answer"] = state["last"]
    if state["revealed"] or lesson.presenting():
        return  # after the answer was shown: checked, not counted; in a presentation: noted
    state["tries"] += 1
    _count_attempt(asked, state, stem)
    if verdict.accepted or state["tries"] >= TRIES:
        state["revealed"] = True


def _on_show(asked: Exercise, key: str, stem: str) -> None:
    """Form callback of "Show me" / "Reveal": a noted answer counts now; answers typed after it do not."""
    state = _state(key)
    if not state["revealed"]:
        _count_attempt(asked, state, stem)
    if not state["recorded"]:
        state["peeked"] = True
    state["revealed"] = True


def _count_attempt(asked: Exercise, state: dict[str, Any], stem: str) -> None:
    """Count the question once, at its first real try made before the answer was shown; a later right try
    (before the answer was shown) makes it a right one."""
    if state["peeked"] or state["answer"] is None:
        return
    verdict = asked.check(state["answer"], ui.language())
    if verdict.code not in ATTEMPTS:
        return
    if not state["recorded"]:
        record(stem, verdict.accepted)
        state["recorded"], state["right"] = True, verdict.accepted
    elif verdict.accepted and not state["right"]:
        mark_right(stem)
        state["right"] = True


def _ratio(verdict: answers.Verdict) -> float | None:
    """Given ÷ expected in the asked unit (choices: 1 when right, None when wrong)."""
    if verdict.ratio is not None:
        return verdict.ratio
    if verdict.given_choice is not None:
        return 1.0 if verdict.accepted else None
    return None


# ---------------------------------------------------------------- words


def question(asked: Exercise, *, model: kvcore.ModelSpec | None = None, gpu: kvcore.GpuSpec | None = None) -> str:
    """The question in the page's language, its {placeholders} filled from the exercise's inputs."""
    return t(QUESTION_KEYS[asked.topic], **question_values(asked, model=model, gpu=gpu))


def question_values(
    asked: Exercise, *, model: kvcore.ModelSpec | None = None, gpu: kvcore.GpuSpec | None = None
) -> dict[str, str]:
    """Every placeholder a question template may use, as shown text."""
    inputs = asked.inputs
    model = model or ui.models().get(inputs["model"])
    gpu_id = inputs.get("gpu")
    gpu = gpu or (ui.gpus().get(gpu_id) if gpu_id else None)
    gpu_name = gpu.name if gpu is not None else str(gpu_id or "")
    gpus = int(inputs.get("gpus", 1))
    batch = int(inputs.get("batch", 1))
    context = ui.num(format_tokens(inputs.get("context_tokens", 0)))
    overhead_gib = float(inputs.get("overhead_gib", 0.0))  # an input in GiB, shown in the page's unit
    overhead = lesson.mem(overhead_gib * kvcore.GiB) if overhead_gib > 0 else ""
    return {
        "model": model.name if model is not None else str(inputs["model"]),
        "gpu": gpu_name,
        "gpus": t("practice.gpus_one", gpu=gpu_name) if gpus == 1 else t("practice.gpus_many", n=gpus, gpu=gpu_name),
        "context": context,
        "prompt": ui.num(format_tokens(inputs.get("prompt_tokens", 0))),
        "tokens": ui.num(format_tokens(inputs.get("tokens", 0))),
        "heads": str(inputs.get("heads", "")),
        "batch": str(batch),
        "batch_text": t("practice.batch_text", batch=batch) if batch > 1 else "",
        "sequences": t("practice.sequences_one", context=context)
        if batch == 1
        else t("practice.sequences_many", batch=batch, context=context),
        "kv_dtype": str(inputs.get("kv_dtype", "")).upper(),
        "dtype": str(inputs.get("dtype", "")).upper(),
        "weights_dtype": str(inputs.get("weights_dtype", "")).upper(),
        "utilization": ui.num(percent(float(inputs.get("utilization", 0)), decimals=0, spaced=True)),
        # A config value the student would type: a point in every language (vLLM rejects "0,9").
        "utilization_fraction": f"{float(inputs.get('utilization', 0)):g}",
        # A page's own overhead comes off the budget too, so the question says so (course.exercises).
        "memory_note": t("practice.memory_note_overhead", overhead=overhead)
        if overhead
        else t("practice.memory_note_plain"),
        "pool_note": t("practice.pool_note_overhead", overhead=overhead) if overhead else t("practice.pool_note_plain"),
        "params": t("practice.billion", n=significant(float(inputs.get("params", 0)) / 1e9, ui.separators())),
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)) if gpu is not None else "",
        "unit": unit_name(asked.answer_unit),
    }


def data_line(asked: Exercise, *, model: kvcore.ModelSpec | None, gpu: kvcore.GpuSpec | None) -> str:
    """The figures the question needs: the model's shape and size, and the GPU's memory, bandwidth and peak."""
    parts = []
    if model is not None:
        if model.attention_type == "MLA":
            shape = t(
                "practice.data_mla",
                layers=model.num_hidden_layers,
                heads=model.num_attention_heads,
                rank=model.kv_lora_rank,
                rope=model.qk_rope_head_dim,
            )
        else:
            shape = t(
                "practice.data_shape",
                layers=model.num_hidden_layers,
                heads=model.num_attention_heads,
                kv_heads=ui.plural("kv_heads.count", model.num_key_value_heads),
                head_dim=model.head_dim,
            )
        if model.layer_pattern not in ("full", "mla"):
            shape += " · " + pattern_text(model)
        total = float(model.total_params or 0.0)
        active = float(model.active_params or total)
        if total > 0:  # an imported architecture may come without its parameter count
            shape += " · " + t("practice.data_params", n=significant(total / 1e9, ui.separators()))
        if 0 < active < total:
            shape += " " + t("practice.data_active", n=significant(active / 1e9, ui.separators()))
        parts.append(f"**{model.name}**: {shape}")
    if gpu is not None:
        weights = asked.inputs.get("weights_dtype", "bf16")
        gpus = int(asked.inputs.get("gpus", 1))
        peak = matmul_peak_flop_per_s(gpu, weights_dtype=weights)
        peak_text = ui.num(format_flops(peak)) if math.isfinite(peak) else "—"
        parts.append(
            t(
                "practice.data_gpu",
                gpu=gpu.name,
                memory=lesson.mem(gpu.memory_bytes),
                bandwidth=ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
                peak=peak_text,
                dtype=str(weights).upper(),
            )
            + (" · " + t("practice.data_tp", n=gpus) if gpus > 1 else "")
        )
    return " — ".join(parts)


def pattern_text(model: kvcore.ModelSpec) -> str:
    """The repeating cycle of layer kinds in words: '5 sliding-window + 1 full; window of 1,024 tokens'."""
    parts = []
    for part in model.layer_pattern.split(","):
        kind, _, repeat = part.partition("*")
        parts.append(f"{repeat or 1} {t(KIND_KEYS[kind]) if kind in KIND_KEYS else kind}")
    cycle = t("practice.data_cycle", cycle=" + ".join(parts))
    if "sliding" in model.layer_pattern and model.sliding_window:
        cycle += "; " + t("practice.data_window", window=ui.num(format_tokens(model.sliding_window)))
    return cycle


def tolerance_text(asked: Exercise) -> str:
    """How close an answer must be, in words."""
    if asked.dimension == answers.CHOICE:
        return t("practice.tolerance_choice")
    if asked.tolerance_rel == 0:
        return t("practice.tolerance_exact")
    return t(
        "practice.tolerance", percent=ui.num(percent(asked.tolerance_rel, decimals=1, trim_zeros=True, spaced=True))
    )


def unit_name(unit: str) -> str:
    """A unit id as shown: symbols stay ('GiB', 'ms', '×'), nouns are translated ('usuários')."""
    if unit in UNIT_KEYS:
        return t(UNIT_KEYS[unit])
    return "×" if unit == "x" else unit


def unit_described(unit: str) -> str:
    """'GB (decimal: 10⁹ bytes)' / 'GiB (binary: 2³⁰ bytes)'; other units as shown."""
    if unit in BINARY_UNITS:
        return t("practice.unit_binary", unit=unit, size=BINARY_UNITS[unit])
    if unit in DECIMAL_UNITS:
        return t("practice.unit_decimal", unit=unit, size=DECIMAL_UNITS[unit])
    return unit_name(unit)


def choice_name(choice: str) -> str:
    return t(CHOICE_KEYS[choice]) if choice in CHOICE_KEYS else choice


def figure(value: float) -> str:
    """A number as kvcore formats it, with enough digits to stay inside a 1 % tolerance, in the page's language."""
    number = float(value)
    if not math.isfinite(number):
        return "—"
    if number.is_integer() and abs(number) >= 1000:
        text = format_tokens(number)
    elif number != 0 and abs(number) < 1:
        text = f"{number:.3g}"
    else:
        text = format_quantity(number)
    return ui.num(text)


def quantity(value: float, unit: str | None) -> str:
    """'14,96 GiB', '213 usuários', '4×' (a choice id reads as its name)."""
    if unit is None:
        return figure(value)
    if unit == "x":
        return f"{figure(value)}×"
    return f"{figure(value)} {unit_name(unit)}"


def answer_text(asked: Exercise) -> str:
    """The right answer as shown."""
    if asked.dimension == answers.CHOICE:
        return choice_name(asked.answer_unit)
    return quantity(asked.answer_value, asked.answer_unit)


def _typed(asked: Exercise, text: str | None) -> str:
    """What the learner answered, as shown back: a choice by its name, a text without markup, at most 40 characters."""
    if asked.dimension == answers.CHOICE and text in CHOICE_KEYS:
        return choice_name(text)
    plain = "".join(c for c in (text or "")[:40] if c.isalnum() or c in " .,-+/%µ×~≈").strip()
    return plain or "—"


def _example(asked: Exercise) -> str:
    number = "12" if asked.dimension == answers.COUNT else ui.num("12.5")
    return f"{number} {unit_name(asked.answer_unit)}"


def verdict_message(verdict: answers.Verdict, asked: Exercise, *, typed: str | None = None) -> str:
    """The verdict in words: what was right or wrong and, where a slip is recognisable, which one."""
    expected = answer_text(asked)
    unit = unit_name(asked.answer_unit)
    code = verdict.code
    if code == "right":
        return t(VERDICT_KEYS[code], expected=expected)
    if code == "right_in_other_unit":
        return t(
            VERDICT_KEYS[code],
            given=quantity(verdict.given_value or 0.0, verdict.given_unit),
            given_unit=unit_described(verdict.other_unit or ""),
            expected_unit=unit_described(asked.answer_unit),
            converted=quantity(verdict.given_in_expected_unit or 0.0, asked.answer_unit),
            expected=expected,
        )
    if code == "right_value_wrong_unit_name":
        number = figure(verdict.given_value or 0.0)
        key = "practice.verdict_unit_missing" if "assumed_unit" in verdict.flags else VERDICT_KEYS[code]
        return t(
            key,
            number=number,
            typed_unit=unit_described(verdict.given_unit or asked.answer_unit),
            other_unit=unit_described(verdict.other_unit or ""),
            expected=expected,
            unit=unit,
        )
    if code in ("off_by_factor", "known_mistake"):
        return (
            t(VERDICT_KEYS[code], size=_size_of(verdict.ratio or 1.0), expected=expected) + " " + _why(verdict, asked)
        )
    if code == "wrong":
        if verdict.given_choice is not None:
            return t("practice.verdict_wrong_choice", given=choice_name(verdict.given_choice), expected=expected)
        if not verdict.ratio:
            return t("practice.verdict_wrong_plain", expected=expected)
        return t(VERDICT_KEYS[code], size=_size_of(verdict.ratio), expected=expected)
    if code == "unparseable":
        return t(
            PARSE_KEYS.get(verdict.parse_status, "practice.parse_not_a_number"),
            typed=_typed(asked, typed),
            unit=unit,
            example=_example(asked),
            related=related_units(asked),
        )
    if code == "wrong_dimension":
        given = verdict.given_unit or ""
        dimension = answers.UNIT_BY_ID[given].dimension if given in answers.UNIT_BY_ID else asked.dimension
        return t(
            VERDICT_KEYS[code],
            given=unit_name(given),
            given_kind=t(DIMENSION_KEYS[dimension]),
            kind=t(DIMENSION_KEYS[asked.dimension]),
            unit=unit,
        )
    if code == "ambiguous":
        readings = [figure(alternative.given_value or 0.0) for alternative in verdict.alternatives]
        return t(VERDICT_KEYS[code], typed=_typed(asked, typed), readings=t("practice.or").join(readings))
    if asked.dimension == answers.CHOICE:
        return t("practice.verdict_empty_choice")
    return t(VERDICT_KEYS["empty"], example=_example(asked))


def hint_message(verdict: answers.Verdict, asked: Exercise) -> str:
    """A wrong first try in words, without the answer: how far off it is, and the likeliest slip or where to look."""
    code = verdict.code
    again = t("practice.try_again")
    if code == "right_value_wrong_unit_name":
        key = "practice.hint_unit_missing" if "assumed_unit" in verdict.flags else "practice.hint_unit_slip"
        return t(
            key,
            number=figure(verdict.given_value or 0.0),
            typed_unit=unit_described(verdict.given_unit or asked.answer_unit),
            other_unit=unit_described(verdict.other_unit or ""),
            unit=unit_name(asked.answer_unit),
        )
    if verdict.given_choice is not None:
        return t("practice.hint_wrong_choice", given=choice_name(verdict.given_choice)) + " " + again
    where = t(HINT_KEYS[asked.topic], **_unit_words(asked)) if asked.topic in HINT_KEYS else ""
    if not verdict.ratio:
        return " ".join(part for part in (t("practice.hint_wrong_plain"), where, again) if part)
    if code in ("off_by_factor", "known_mistake"):
        why = _why(verdict, asked) or where
        return " ".join(part for part in (t("practice.hint_off", size=_size_of(verdict.ratio)), why, again) if part)
    return " ".join(part for part in (t("practice.hint_wrong", size=_size_of(verdict.ratio)), where, again) if part)


def related_units(asked: Exercise) -> str:
    """' (or a related unit, such as GB, MiB or KiB)': units of the asked dimension only, never of another."""
    related = DECIMAL_RELATED if asked.answer_unit in DECIMAL_UNITS else RELATED_UNITS.get(asked.dimension, ())
    others = [unit for unit in related if unit != asked.answer_unit][:3]
    if not others:
        return ""
    shown = [unit_name(unit) if unit != "us" else "µs" for unit in others]
    return t("practice.related_units", units=", ".join(shown[:-1]) + t("practice.or") + shown[-1])


def _unit_words(asked: Exercise) -> dict[str, str]:
    """The asked memory unit and its size, for a hint's 'then bytes to GiB (÷ 2³⁰)': {unit}, {divisor}."""
    unit = asked.answer_unit
    return {"unit": unit_name(unit), "divisor": BINARY_UNITS.get(unit) or DECIMAL_UNITS.get(unit) or ""}


def _size_of(ratio: float) -> str:
    """The answer's own gap: '2× too large', '5.9 % too small' (ratio = given ÷ expected, two significant digits)."""
    if 0.5 < ratio < 2:
        change = abs(ratio - 1)
        key = "practice.percent_too_large" if ratio > 1 else "practice.percent_too_small"
        decimals = 0 if change >= 0.095 else 1 if change >= 0.0095 else 2
        return t(key, percent=ui.num(percent(change, decimals=decimals, trim_zeros=True, spaced=True)))
    key = "practice.times_too_large" if ratio > 1 else "practice.times_too_small"
    factor = ratio if ratio > 1 else 1 / ratio
    return t(key, factor=figure(float(f"{factor:.2g}")))


def _why(verdict: answers.Verdict, asked: Exercise) -> str:
    """What the slip that best explains the answer usually means: a careless calculator's mistake, or a factor."""
    if verdict.code == "known_mistake":
        return t(MISTAKE_KEYS[verdict.mistake]) if verdict.mistake in MISTAKE_KEYS else ""
    return _hint(verdict, asked)


def _hint(verdict: answers.Verdict, asked: Exercise) -> str:
    """What a recognized factor usually means, in the question's terms."""
    name = verdict.factor_name or ""
    if name == "kv_pair" and asked.topic not in KV_TOPICS:
        return t("practice.factor_two")
    if name not in FACTOR_KEYS:
        return ""
    if FACTOR_KEYS[name] == "practice.factor_binary" and asked.dimension == answers.COUNT:
        return t("practice.factor_binary_count", factor=figure(verdict.factor or 1.0))
    factor = verdict.factor or 1.0
    return t(FACTOR_KEYS[name], factor=figure(factor if factor > 1 else 1 / factor))


def flag_notes(verdict: answers.Verdict, asked: Exercise) -> str:
    """How the answer was read: the reading, and the flags worth saying (decimal comma, 'Gb' as GB, no unit)."""
    reading = (
        [t(PARSE_KEYS["ok"], reading=quantity(verdict.given_value, verdict.given_unit))]
        if verdict.given_value is not None
        else []
    )
    notes = reading + [
        t(FLAG_KEYS[flag], unit=unit_name(asked.answer_unit))
        for flag in verdict.flags
        if flag in FLAG_KEYS and (flag != "assumed_unit" or _unit_matters(verdict, asked))
    ]
    return " ".join(notes)


def _unit_matters(verdict: answers.Verdict, asked: Exercise) -> bool:
    """A bare number is worth a note where units are easy to confuse (memory, time), unless the verdict says it."""
    return asked.dimension in (answers.MEMORY, answers.TIME) and verdict.code != "right_value_wrong_unit_name"


# ---------------------------------------------------------------- the worked answer


def worked_steps(asked: Exercise, *, with_answer: bool = True) -> None:
    """The answer (unless a verdict just gave it), then each step: formula, numbers put in, value with its unit."""
    if with_answer:
        st.markdown(t("practice.answer_is", answer=answer_text(asked)))
    st.markdown(f"**{t('practice.worked_title')}**")
    labels = step_labels(asked)
    lang = ui.language()
    for step in asked.steps:
        st.markdown(f"*{labels.get(step.name, step.name)}*")
        if step.unit == "choice" and asked.topic == "compute_bound_phase":
            st.markdown(phase_words(asked))  # a comparison read in words, not "(I ≥ ridge) + 2 · (…)"
        else:
            st.latex(step_latex(step, labels=labels, lang=lang, value=value_latex(step, asked)))


def phase_words(asked: Exercise) -> str:
    """The phase question's last step in words: each phase's FLOPs per byte against the ridge point, then the answer.

    'Prefill: **1,033 FLOP/byte** ≥ **164 FLOP/byte**, the ridge point: compute-bound.' (one line per phase).
    """
    values = {step.name: step for step in asked.steps}
    ridge = values["ridge_point"]
    lines = []
    for phase, name in (("practice.phase_prefill", "prefill_intensity"), ("practice.phase_decode", "decode_intensity")):
        intensity = values[name]
        compute = intensity.value >= ridge.value
        lines.append(
            t(
                "practice.phase_line",
                phase=t(phase),
                intensity=step_value(intensity, asked),
                relation="≥" if compute else "<",
                ridge=step_value(ridge, asked),
                bound=t("practice.bound_compute" if compute else "practice.bound_memory"),
            )
        )
    lines.append(t("practice.phase_answer", answer=answer_text(asked)))
    return "  \n".join(lines)


def step_labels(asked: Exercise) -> dict[str, str]:
    """Translated names of the steps (and of the symbols that stand for a step)."""
    names = {step.name for step in asked.steps} | {"ridge", "bytes_prefill", "bytes_decode"}
    return {name: t(STEP_KEYS[name]) if name in STEP_KEYS else name.replace("_", " ") for name in names}


def step_value(step: Step, asked: Exercise) -> str:
    """A step's value with its unit, formatted as the rest of the app does."""
    value, unit = step.value, step.unit
    if unit == "choice":
        return choice_name(asked.choices[int(value)]) if asked.choices else figure(value)
    if unit in ("B", "B/token"):
        return f"{figure(value)} {unit}" if value < 2**50 else ui.num(format_bytes(value))
    if unit == "FLOP":
        return ui.num(format_flop(value))
    if unit == "FLOP/byte":
        return ui.num(format_flop_per_byte(value))
    return quantity(value, unit)


def value_latex(step: Step, asked: Exercise) -> str:
    """``step_value`` as LaTeX: '14{,}96\\ \\text{GiB}', '4\\times', '\\text{only the prefill}'."""
    text = step_value(step, asked)
    if step.unit == "choice":
        return r"\text{" + _latex_text(text) + "}"
    if text.endswith("×"):
        return text[:-1].replace(",", "{,}") + r"\times"
    number, _, unit = text.partition(" ")
    return number.replace(",", "{,}") + (r"\ \text{" + _latex_text(unit) + "}" if unit else "")


_TOKEN = re.compile(
    r"(?P<number>\d+(?:\.\d+)?(?:e-?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>>=|[-+*/^(),])|(?P<space>\s+)"
)


def formula_latex(text: str, *, labels: Mapping[str, str], lang: str) -> str:
    """One of kvcore's plain-ASCII formulas as LaTeX.

    ``*`` → ·, ``^`` → a superscript, ``floor(…)`` → ⌊…⌋, ``>=`` → ≥; numbers get the
    language's marks ('8{,}192' / '8.192'; '8.03e9' → 8.03 · 10⁹) and readable digits
    (``shown_number``: '1.67206e13' → 1.672 · 10¹³, '163.889' → 163.9; whole numbers in full,
    and under a floor, where the count depends on them, as given); a step's name reads
    as its translated label; a symbol such as ``H_kv`` as H with a subscript.
    """
    out: list[str] = []
    parens: list[str] = []
    tokens = [match for match in _TOKEN.finditer(text) if match.lastgroup != "space"]
    superscript = False
    for index, match in enumerate(tokens):
        kind, token = match.lastgroup, match.group()
        if kind == "number":
            piece = _latex_number(token if "floor-open" in parens else shown_number(token), lang)
        elif kind == "name":
            following = tokens[index + 1].group() if index + 1 < len(tokens) else ""
            if token == "floor" and following == "(":
                parens.append("floor")
                piece = ""
            else:
                piece = _latex_name(token, labels)
        elif token == "(":
            if parens and parens[-1] == "floor":
                parens[-1] = "floor-open"
                piece = r"\left\lfloor "
            else:
                parens.append("(")
                piece = r"\left("
        elif token == ")":
            kind_open = parens.pop() if parens else "("
            piece = r"\right\rfloor " if kind_open == "floor-open" else r"\right)"
        else:
            piece = {"*": r" \cdot ", "/": r" \,/\, ", ">=": r" \geq ", "^": "^", ",": r",\ ", "+": " + ", "-": " - "}[
                token
            ]
        if superscript:
            piece = "{" + piece + "}"
            superscript = False
        if token == "^":
            superscript = True
        out.append(piece)
    return "".join(out)


#: Significant digits a worked number is shown with: a power of ten's mantissa, and a plain decimal.
MANTISSA_DIGITS, DECIMAL_DIGITS = 4, 4


def shown_number(token: str) -> str:
    """A formula's number with the digits a reader needs: '1.67206e13' → '1.672e13', '163.889' → '163.9'.

    Whole numbers stay whole ('1073741824'), decimals of five significant digits or fewer stay
    as they are ('14.957', '0.9'); longer ones (``course.worked.plain`` gives six) keep four.
    """
    mantissa, marker, exponent = token.partition("e")
    if marker:
        return f"{float(mantissa):.{MANTISSA_DIGITS}g}" + marker + exponent
    if "." not in mantissa or len(mantissa.replace(".", "").lstrip("0")) <= 5:
        return token
    return f"{float(mantissa):.{DECIMAL_DIGITS}g}"


def _latex_number(token: str, lang: str) -> str:
    mantissa, _, exponent = token.partition("e")
    shown = latex_number(float(mantissa), lang) if "." in mantissa else latex_number(int(mantissa), lang)
    return shown + (rf" \cdot 10^{{{int(exponent)}}}" if exponent else "")


def _latex_name(name: str, labels: Mapping[str, str]) -> str:
    if name in SYMBOLS:
        return SYMBOLS[name]
    if name in labels:
        return r"\text{" + _latex_text(labels[name]) + "}"
    if len(name) <= 2:
        return name
    head, _, tail = name.partition("_")
    if tail and len(head) <= 2:
        return f"{head}_{{\\text{{{_latex_text(tail)}}}}}"
    return r"\text{" + _latex_text(name) + "}"


def _latex_text(text: str) -> str:
    """Plain text made safe inside \\text{}."""
    return re.sub(r"([_%&#$])", r"\\\1", text)


def step_latex(step: Step, *, labels: Mapping[str, str], lang: str, value: str) -> str:
    """One worked step as aligned LaTeX lines, formula = numbers = value (LaTeX), so that it fits a phone.

    The step's name goes above it, as text: a label inside the formula would make its first line too wide.
    """
    symbolic = formula_latex(step.symbolic, labels=labels, lang=lang)
    substituted = formula_latex(step.substituted, labels=labels, lang=lang)
    lines = [f"& {symbolic}"]
    if substituted != symbolic:
        lines.append(f"&= {substituted}")
    lines.append(r"&= \mathbf{" + value + "}")
    return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"
