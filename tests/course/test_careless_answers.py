"""The careless calculator answering an exercise (course.mistakes.careless_answers), the slip that explains an
answer best (course.answers.check_answer's `mistakes`), and simple fractions such as "1/2 GiB" (issue 15)."""

from __future__ import annotations

import pytest

import kvcore
from course import answers, exercises, mistakes

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
LLAMA, RTX_4090 = MODELS["llama-3.1-8b"], GPUS["rtx-4090"]


@pytest.fixture(scope="module")
def decode():
    """The decode lesson's default: Llama 3.1 8B on an RTX 4090, 8,192 tokens, batch 1 (about 17 ms)."""
    return exercises.exercise_for("decode_ms_per_token", model=LLAMA, gpu=RTX_4090, context_tokens=8192, batch=1)


def check(asked: exercises.Exercise, text: str, *, model=LLAMA, gpu=RTX_4090) -> answers.Verdict:
    return answers.check_answer(
        answers.parse_answer(text, dimension=asked.dimension, lang="en"),
        expected_value=asked.answer_value,
        expected_unit=asked.answer_unit,
        tolerance_rel=asked.tolerance_rel,
        factors=asked.factors,
        mistakes=mistakes.careless_answers(asked, model=model, gpu=gpu),
    )


# ---------------------------------------------------------------- what the careless calculator answers


def test_a_decode_step_without_the_kv_read_is_the_weights_over_the_bandwidth(decode):
    # 8.03e9 · 2 bytes = 16.06 GB ÷ 1,008 GB/s = 15.93 ms (the weights alone), against 17.0 ms with the 1 GiB cache.
    wrong = mistakes.careless_answers(decode, model=LLAMA, gpu=RTX_4090)
    assert wrong["no_kv_read"] == pytest.approx(16.06e9 / 1.008e12 * 1e3)
    assert wrong["no_kv_read"] < decode.answer_value


def test_ignoring_the_kv_heads_asks_the_same_question_about_an_mha_model(decode):
    wrong = mistakes.careless_answers(decode, model=LLAMA, gpu=RTX_4090)
    mha = mistakes.ignoring_kv_heads(LLAMA)
    again = exercises.exercise_for("decode_ms_per_token", model=mha, gpu=RTX_4090, context_tokens=8192, batch=1)
    assert wrong["ignoring_kv_heads"] == again.answer_value


def test_the_whole_card_as_the_budget_is_the_same_question_at_a_utilization_of_one():
    asked = exercises.exercise_for("users_fit", model=LLAMA, gpu=RTX_4090, context_tokens=8192, utilization=0.9)
    whole = exercises.exercise_for("users_fit", model=LLAMA, gpu=RTX_4090, context_tokens=8192, utilization=1.0)
    assert mistakes.careless_answers(asked, model=LLAMA, gpu=RTX_4090)["whole_memory"] == whole.answer_value


def test_a_moe_weights_question_knows_the_active_parameters_slip():
    model = MODELS["deepseek-v3"]
    asked = exercises.exercise_for("weights_memory", model=model)
    wrong = mistakes.careless_answers(asked, model=model)
    assert wrong["active_weights_only"] == pytest.approx(
        kvcore.weights_bytes(model.active_params, bytes_per_param=kvcore.bytes_per_value(model.weights_dtype))
        / kvcore.GiB
    )


def test_every_careless_answer_is_positive_finite_and_not_the_right_one():
    for topic in exercises.TOPICS:
        for model_id in ("llama-3.1-8b", "deepseek-v3", "gemma-3-27b", "gpt-oss-120b"):
            model = MODELS[model_id]
            if not exercises.topic_applies(topic, model):
                continue
            asked = exercises.exercise_for(topic, model=model, gpu=GPUS["h100-sxm"])
            for name, value in mistakes.careless_answers(asked, model=model, gpu=GPUS["h100-sxm"]).items():
                assert name in (*mistakes.MISTAKES, *mistakes.ANSWER_MISTAKES)
                assert 0 < value < float("inf") and value != asked.answer_value, (topic, model_id, name)


def test_a_lesson_topic_outside_the_catalogue_gets_no_careless_answers():
    asked = exercises.score_matrix_exercise(LLAMA, tokens=8192)
    assert mistakes.careless_answers(asked, model=LLAMA) == {}


# ---------------------------------------------------------------- the slip that explains the answer best


def test_16_ms_is_named_as_leaving_out_the_kv_read_not_as_gib_against_gb(decode):
    # 16 is 0.4 % from the weights-only 15.93 ms and 1.1 % from 17.0 ÷ 1.074 = 15.83 ms: the closer slip wins.
    verdict = check(decode, "16")
    assert (verdict.code, verdict.mistake) == ("known_mistake", "no_kv_read")
    assert verdict.ratio == pytest.approx(16 / decode.answer_value)


def test_15_8_ms_is_closer_to_the_gib_against_gb_slip_than_to_the_weights_alone(decode):
    # 15.8 is 0.2 % from 15.83 ms (GiB ÷ GB/s) and 0.8 % from 15.93 ms (no KV read).
    verdict = check(decode, "15.8")
    assert (verdict.code, verdict.factor_name) == ("off_by_factor", "giga_vs_gibi")


def test_a_slip_is_named_only_when_it_explains_the_answer_within_the_tolerance(decode):
    # 14.5 ms is 9 % below the weights-only 15.93, 8 % below 15.83 (GiB ÷ GB/s) and 6 % below 15.46 (TiB ÷ TB/s).
    verdict = check(decode, "14.5")
    assert verdict.code == "wrong" and verdict.mistake is None and verdict.factor_name is None


def test_a_mistake_close_to_the_right_answer_explains_nothing():
    # A ratio question has no common factors: only the mistake could name 10.15×, and it sits 1.5 % from 10×.
    parsed = answers.parse_answer("10.15", dimension="ratio", lang="en")
    verdict = answers.check_answer(
        parsed, expected_value=10.0, expected_unit="x", tolerance_rel=0.01, mistakes={"no_kv_read": 10.15}
    )
    assert verdict.code == "wrong"


def test_the_exercises_own_factor_wins_a_tie_with_a_mistake():
    parsed = answers.parse_answer("40", dimension="memory", lang="en")
    verdict = answers.check_answer(
        parsed,
        expected_value=10.0,
        expected_unit="GiB",
        tolerance_rel=0.03,
        factors={"gqa_group": 4.0},
        mistakes={"ignoring_kv_heads": 40.0},
    )
    assert (verdict.code, verdict.factor_name) == ("off_by_factor", "gqa_group")


def test_a_mistake_is_matched_as_it_is_not_by_its_inverse():
    parsed = answers.parse_answer("20", dimension="time", lang="en")
    verdict = answers.check_answer(
        parsed, expected_value=10.0, expected_unit="ms", tolerance_rel=0.03, mistakes={"x": 5.0}
    )
    assert verdict.code == "off_by_factor" and verdict.factor_name == "kv_pair"  # 2×, not "the mistake upside down"


# ---------------------------------------------------------------- simple fractions


@pytest.mark.parametrize(
    ("typed", "value", "unit"),
    [("1/2 GiB", 0.5, "GiB"), ("1 / 4 GB", 0.25, "GB"), ("3/4", 0.75, None), ("1,5/3 GiB", 0.5, "GiB")],
)
def test_a_simple_fraction_is_read_as_its_value(typed, value, unit):
    parsed = answers.parse_answer(typed, dimension="memory", lang="pt")
    assert parsed.status == "ok"
    assert (parsed.value, parsed.unit) == (pytest.approx(value), unit)


@pytest.mark.parametrize("typed", ["1/0 GiB", "1/2/3 GiB", "1/ GiB"])
def test_a_fraction_that_is_no_number_is_not_a_number(typed):
    assert answers.parse_answer(typed, dimension="memory", lang="en").status in ("not_a_number", "unknown_unit")


def test_a_zero_denominator_is_not_a_number():
    assert answers.parse_answer("1/0 GiB", dimension="memory", lang="en").status == "not_a_number"


def test_a_rate_keeps_its_slash():
    parsed = answers.parse_answer("16 tokens/s", dimension="token_rate", lang="en")
    assert (parsed.status, parsed.value, parsed.unit) == ("ok", 16.0, "tokens/s")


def test_half_a_gib_for_a_half_gib_question_is_right():
    parsed = answers.parse_answer("1/2 GiB", dimension="memory", lang="en")
    verdict = answers.check_answer(parsed, expected_value=0.5, expected_unit="GiB", tolerance_rel=0.03)
    assert verdict.code == "right"
