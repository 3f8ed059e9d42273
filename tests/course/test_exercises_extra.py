"""Lesson topics: the score-matrix question of the FlashAttention lesson, from kvcore's own attention functions."""

from __future__ import annotations

import math

import pytest

import kvcore
from course.exercises import LESSON_TOPICS, TOPICS, exercise_for, score_matrix_exercise
from course.worked import evaluate
from kvcore.attention import prefill_attention_memory
from kvcore.units import GiB, MiB

MODELS = kvcore.load_models()
LLAMA_8B = MODELS["llama-3.1-8b"]


def test_llama_8b_at_8k_tokens_writes_4_gib_of_scores_per_layer():
    # 8192² scores · 2 bytes (BF16) · 32 query heads = 4,294,967,296 bytes = 4 GiB (seed 000's 8k prompt).
    exercise = score_matrix_exercise(LLAMA_8B, tokens=8192)
    assert (exercise.answer_value, exercise.answer_unit) == (4.0, "GiB")


def test_the_answer_is_what_the_flash_attention_lesson_computes():
    exercise = score_matrix_exercise(LLAMA_8B, tokens=16384, heads=8, batch=3, dtype="fp8")
    memory = prefill_attention_memory(LLAMA_8B, tokens=16384, flash=False, heads=8, batch=3, bytes_per_value=1.0)
    assert exercise.answer_value * GiB == pytest.approx(float(memory.temporary_bytes))


def test_a_small_matrix_is_asked_in_mib():
    # 1024² · 2 bytes · 32 heads = 64 MiB.
    exercise = score_matrix_exercise(LLAMA_8B, tokens=1024)
    assert (exercise.answer_value, exercise.answer_unit) == (64.0, "MiB")
    assert exercise.answer_value * MiB == float(
        prefill_attention_memory(LLAMA_8B, tokens=1024, flash=False).temporary_bytes
    )


def test_the_scores_grow_with_the_square_of_the_prompt():
    short = score_matrix_exercise(LLAMA_8B, tokens=4096)
    long = score_matrix_exercise(LLAMA_8B, tokens=8192)
    assert long.answer_value * GiB == pytest.approx(4 * short.answer_value * 2**30)


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("tokens", [1024, 8192, 131072])
def test_the_worked_steps_add_up_and_end_on_the_answer(tokens, batch):
    exercise = score_matrix_exercise(LLAMA_8B, tokens=tokens, batch=batch)
    for step in exercise.steps:
        assert evaluate(step.substituted) == pytest.approx(step.value, rel=1e-4), step
        assert step.symbolic.isascii() and step.substituted.isascii()
    assert exercise.steps[-1].value == exercise.answer_value


def test_forgetting_the_heads_is_recognised():
    exercise = score_matrix_exercise(LLAMA_8B, tokens=8192)
    verdict = exercise.check("128 MiB", "en")  # one head's matrix: 4 GiB / 32
    assert (verdict.code, verdict.factor_name) == ("off_by_factor", "heads")


def test_counting_the_softmax_copy_too_is_recognised():
    verdict = score_matrix_exercise(LLAMA_8B, tokens=8192).check("8 GiB", "en")
    assert (verdict.code, verdict.factor_name) == ("off_by_factor", "score_and_softmax")


def test_a_decimal_gb_answer_is_right_in_another_unit():
    verdict = score_matrix_exercise(LLAMA_8B, tokens=8192).check("4,29 GB", "pt")  # 2**32 bytes = 4.29 GB
    assert verdict.code == "right_in_other_unit"


def test_lesson_topics_stay_out_of_the_exercise_sets():
    assert set(LESSON_TOPICS).isdisjoint(TOPICS)
    with pytest.raises(ValueError, match="unknown topic"):
        exercise_for("score_matrix_bytes", model=LLAMA_8B)


@pytest.mark.parametrize(("field", "value"), [("tokens", 0), ("heads", 0), ("batch", 1.5)])
def test_nonsense_knobs_are_refused_by_name(field, value):
    knobs = {"tokens": 1024, field: value}
    with pytest.raises(ValueError, match=field):
        score_matrix_exercise(LLAMA_8B, **knobs)


def test_every_model_gets_a_finite_answer():
    for model in MODELS.values():
        exercise = score_matrix_exercise(model, tokens=min(8192, model.max_position_embeddings))
        assert math.isfinite(exercise.answer_value) and exercise.answer_value > 0
