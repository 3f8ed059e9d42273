"""Seeded exercise sets on the real catalogues: answers from kvcore, worked steps that add up, checks end to end."""

from __future__ import annotations

import math
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore
from course import exercises
from course.exercises import GPU_TOPICS, PHASE_CHOICES, TOPICS, exercise_for, generate_exercise_set, topic_applies
from course.worked import evaluate
from kvcore.units import GiB, KiB

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
LLAMA_8B = MODELS["llama-3.1-8b"]
LLAMA_70B = MODELS["llama-3.1-70b"]
H100 = GPUS["h100-sxm"]
#: One model per family: GQA, sliding + full, MLA (FP8, 671 B), linear + full, MHA (FP32, 1k context), MXFP4.
FAMILIES = ("llama-3.1-8b", "gemma-3-12b", "deepseek-v3", "qwen3-next-80b-a3b", "gpt2", "gpt-oss-120b")


def a_set(number, count=9, **kwargs):
    return generate_exercise_set(number, models=MODELS, gpus=GPUS, count=count, **kwargs)


# ---------------------------------------------------------------- the substituted formulas add up


def assert_steps_add_up(exercise):
    """Every substituted formula gives its step's value (six-digit rounding of the numbers shown; floors within 1)."""
    for step in exercise.steps:
        computed = evaluate(step.substituted)
        if step.substituted.startswith("floor("):
            assert abs(computed - step.value) <= 1, (exercise.topic, step)
        else:
            assert computed == pytest.approx(step.value, rel=1e-4, abs=1e-9), (exercise.topic, step)


# ---------------------------------------------------------------- determinism


def test_the_same_set_number_gives_the_same_exercises():
    assert a_set(7) == a_set(7)


def test_the_same_set_number_gives_the_same_exercises_from_freshly_loaded_catalogues():
    fresh = generate_exercise_set(7, models=kvcore.load_models(), gpus=kvcore.load_gpus(), count=9)
    assert fresh == a_set(7)


def test_the_catalogues_order_does_not_matter():
    reversed_models = dict(reversed(list(MODELS.items())))
    reversed_gpus = dict(reversed(list(GPUS.items())))
    assert generate_exercise_set(7, models=reversed_models, gpus=reversed_gpus, count=9) == a_set(7)


def test_different_set_numbers_give_different_exercises():
    assert a_set(7) != a_set(8)


def test_a_set_of_nine_asks_every_topic_once():
    assert sorted(exercise.topic for exercise in a_set(3)) == sorted(TOPICS)


def test_a_set_of_eighteen_asks_every_topic_twice():
    topics = [exercise.topic for exercise in a_set(3, count=18)]
    assert all(topics.count(topic) == 2 for topic in TOPICS)


def test_a_set_can_be_restricted_to_some_topics():
    assert {exercise.topic for exercise in a_set(5, count=6, topics=("users_fit", "gqa_saving"))} == {
        "users_fit",
        "gqa_saving",
    }


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_any_set_number_draws_without_error(number):
    chosen = a_set(number)
    assert len(chosen) == 9
    for exercise in chosen:
        assert exercise.steps[-1].value == exercise.answer_value
        assert math.isfinite(exercise.answer_value)


# ---------------------------------------------------------------- answers come from kvcore (golden values: the seeds)


def test_bytes_per_token_is_kvcores_figure():
    exercise = exercise_for("bytes_per_token", model=LLAMA_8B, kv_dtype="fp8")
    assert exercise.answer_value == kvcore.kv_bytes_per_token(LLAMA_8B, bytes_per_value=1.0) / KiB
    assert exercise.answer_unit == "KiB"


def test_llama_8b_keeps_128_kib_per_token_in_bf16():
    # Seed 000: 2 · 32 · 8 · 128 · 2 = 131,072 bytes = 128 KiB per token.
    assert exercise_for("bytes_per_token", model=LLAMA_8B).answer_value == 128.0


def test_sequence_cache_is_kvcores_figure():
    exercise = exercise_for("sequence_cache", model=MODELS["gemma-3-12b"], context_tokens=32768)
    expected = float(kvcore.sequence_kv_bytes(MODELS["gemma-3-12b"], context_tokens=32768)) / GiB
    assert exercise.answer_value == expected


def test_one_128k_sequence_of_llama_8b_is_16_gib():
    # Seed 000: "uma única sequência de 128 mil tokens consome 16 GiB".
    assert exercise_for("sequence_cache", model=LLAMA_8B, context_tokens=131072).answer_value == 16.0


def test_users_fit_is_kvcores_figure():
    exercise = exercise_for(
        "users_fit", model=LLAMA_70B, gpu=H100, gpus=2, context_tokens=32768, utilization=0.9, weights_dtype="fp8"
    )
    weights = kvcore.model_weights_bytes(LLAMA_70B, bytes_per_param=1.0, tp=2)
    budget = kvcore.kv_budget_bytes(memory_bytes=H100.memory_bytes, utilization=0.9, weights_bytes=weights)
    sequence = kvcore.sequence_kv_bytes(LLAMA_70B, context_tokens=32768, tp=2)
    assert exercise.answer_value == float(kvcore.max_users(kv_pool_bytes=budget, sequence_bytes=sequence))
    assert (exercise.answer_unit, exercise.tolerance_rel) == ("users", 0.0)


def test_weights_memory_is_kvcores_figure():
    exercise = exercise_for("weights_memory", model=LLAMA_70B, weights_dtype="bf16")
    assert exercise.answer_value == kvcore.weights_bytes(70.55e9, bytes_per_param=2.0) / GiB


def test_decode_time_is_kvcores_figure():
    exercise = exercise_for("decode_ms_per_token", model=LLAMA_8B, gpu=H100, context_tokens=8192, batch=16)
    expected = kvcore.decode_token_s(
        LLAMA_8B, context_tokens=8192, batch=16, bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
    )
    assert exercise.answer_value == pytest.approx(1e3 * float(expected), rel=1e-12)
    assert exercise.answer_unit == "ms"


def test_prefill_time_is_kvcores_ttft():
    exercise = exercise_for("prefill_ttft", model=LLAMA_8B, gpu=H100, prompt_tokens=8192)
    expected = kvcore.ttft_s(
        LLAMA_8B,
        prompt_tokens=8192,
        rates=kvcore.Rates(
            peak_flop_per_s=H100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
        ),
    )
    assert exercise.answer_value == pytest.approx(1e3 * float(expected), rel=1e-12)


def test_compute_bound_phase_follows_kvcores_intensities_and_ridge_point():
    exercise = exercise_for(
        "compute_bound_phase", model=LLAMA_8B, gpu=H100, prompt_tokens=2048, context_tokens=4096, batch=1
    )
    ridge = kvcore.ridge_point(
        peak_flop_per_s=H100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
    )
    prefill = float(kvcore.prefill_intensity_flop_per_byte(LLAMA_8B, prompt_tokens=2048))
    decode = float(kvcore.decode_intensity_flop_per_byte(LLAMA_8B, context_tokens=4096))
    assert kvcore.bound_by(prefill, ridge) == "compute"
    assert kvcore.bound_by(decode, ridge) == "memory"
    assert exercise.answer_unit == "prefill"  # seed 002: prefill is compute-bound, decode bandwidth-bound


def test_a_short_prompt_leaves_both_phases_memory_bound():
    # A 128-token prompt in BF16 does about 128 FLOPs per byte, under the H100's ridge of about 295.
    exercise = exercise_for("compute_bound_phase", model=LLAMA_8B, gpu=H100, prompt_tokens=128)
    assert exercise.answer_unit == "neither"


def test_llama_70b_keeps_8_times_less_cache_than_mha():
    # Seed 004: "O GQA já cortou essa conta em 8 vezes" (64 query heads, 8 KV heads).
    exercise = exercise_for("gqa_saving", model=LLAMA_70B)
    mha = kvcore.mha_equivalent_bytes_per_token(LLAMA_70B)
    assert exercise.answer_value == float(
        kvcore.cache_reduction_factor(kvcore.kv_bytes_per_token(LLAMA_70B), baseline_bytes_per_token=mha)
    )
    assert exercise.answer_value == 8.0


def test_max_context_is_the_pool_of_the_sizing_rule():
    exercise = exercise_for("max_context", model=LLAMA_8B, gpu=H100, utilization=0.9)
    weights = kvcore.model_weights_bytes(LLAMA_8B)
    steps = kvcore.sizing_steps(LLAMA_8B, memory_bytes=H100.memory_bytes, utilization=0.9, weights_bytes=weights)
    assert exercise.answer_value == steps.pool_tokens
    assert exercise.answer_unit == "tokens"


# ---------------------------------------------------------------- worked steps


@pytest.mark.parametrize("number", range(12))
def test_drawn_steps_add_up_to_their_values(number):
    for exercise in a_set(number):
        assert_steps_add_up(exercise)


@pytest.mark.parametrize("topic", TOPICS)
@pytest.mark.parametrize("model_id", FAMILIES)
def test_steps_add_up_for_every_architecture_family(topic, model_id):
    model = MODELS[model_id]
    if topic_applies(topic, model):
        gpus = 8 if model_id in ("deepseek-v3", "gpt-oss-120b") else 1
        params = {"gpus": gpus} if "gpus" in exercises._PARAMETERS[topic] else {}
        assert_steps_add_up(exercise_for(topic, model=model, gpu=GPUS["b200"], **params))


def test_the_last_step_is_the_answer():
    for exercise in a_set(11, count=18):
        assert exercise.steps[-1].value == exercise.answer_value


def test_formulas_are_plain_ascii_without_thousands_separators():
    for exercise in a_set(13, count=18):
        for step in exercise.steps:
            for text in (step.symbolic, step.substituted):
                assert text.isascii(), step
                assert not re.search(r"\d,\d|\d \d{3}\b", text), step


def test_tensor_parallelism_shows_the_kv_heads_each_gpu_keeps():
    exercise = exercise_for("users_fit", model=LLAMA_70B, gpu=H100, gpus=8)
    heads = next(step for step in exercise.steps if step.name == "kv_heads_per_gpu")
    assert heads.value == kvcore.kv_heads_per_gpu(8, 8)


# ---------------------------------------------------------------- every model and every GPU


@pytest.mark.parametrize("topic", TOPICS)
def test_every_model_can_be_asked_on_one_gpu(topic):
    for model in MODELS.values():
        if topic_applies(topic, model):
            exercise = exercise_for(topic, model=model, gpu=H100)
            assert math.isfinite(exercise.answer_value)
            assert exercise.answer_value >= 0
            assert exercise.steps[-1].value == exercise.answer_value


@pytest.mark.parametrize("topic", sorted(GPU_TOPICS))
def test_every_gpu_can_be_asked_about_every_architecture_family(topic):
    for gpu in GPUS.values():
        for model_id in FAMILIES:
            exercise = exercise_for(topic, model=MODELS[model_id], gpu=gpu)
            assert math.isfinite(exercise.answer_value)
            assert exercise.answer_value >= 0


def test_only_gqa_saving_is_restricted_to_models_with_kv_heads():
    assert not topic_applies("gqa_saving", MODELS["deepseek-v3"])
    assert not topic_applies("gqa_saving", MODELS["qwen3-next-80b-a3b"])
    assert all(topic_applies(topic, MODELS["deepseek-v3"]) for topic in TOPICS if topic != "gqa_saving")


# ---------------------------------------------------------------- drawn questions are sensible


def test_drawn_exercises_name_catalogue_entries_within_their_limits():
    for exercise in a_set(21, count=36):
        model = MODELS[exercise.inputs["model"]]
        assert exercise.inputs.get("context_tokens", 0) <= model.max_position_embeddings
        assert exercise.inputs.get("prompt_tokens", 0) <= model.max_position_embeddings
        if "gpu" in exercise.inputs:
            gpu = GPUS[exercise.inputs["gpu"]]
            assert exercise.inputs.get("kv_dtype") != "fp8" or gpu.has_fp8
            if exercise.inputs.get("weights_dtype") == "fp8" and model.weights_dtype != "fp8":
                assert gpu.has_fp8


def test_drawn_questions_are_not_degenerate():
    for exercise in a_set(4, count=45, topics=("users_fit", "max_context")):
        floor = 1 if exercise.topic == "users_fit" else exercises.MIN_POOL_TOKENS
        assert exercise.answer_value >= floor


def test_choice_questions_carry_their_choices():
    for exercise in a_set(9, count=18):
        if exercise.dimension == "choice":
            assert exercise.choices == PHASE_CHOICES
            assert exercise.answer_unit == exercise.choices[int(exercise.answer_value)]
        else:
            assert exercise.choices == ()


def test_an_exercise_set_survives_pickling_so_the_app_can_cache_it():
    chosen = a_set(2)
    assert pickle.loads(pickle.dumps(chosen)) == chosen


# ---------------------------------------------------------------- checking answers end to end


def test_a_gb_answer_to_a_gib_question_is_right_in_another_unit():
    exercise = exercise_for("weights_memory", model=LLAMA_8B, weights_dtype="bf16")  # 16.06 GB = 14.96 GiB
    assert exercise.check("16.06 GB", "en").code == "right_in_other_unit"
    assert exercise.check("14,96 GiB", "pt").code == "right"
    assert exercise.check("14.96 GB", "en").code == "right_value_wrong_unit_name"


def test_128_kb_per_token_is_the_kib_figure_with_the_wrong_unit_name():
    # KiB and KB are 2.4 % apart, so bytes_per_token is checked at 1 %.
    exercise = exercise_for("bytes_per_token", model=LLAMA_8B)
    assert exercise.check("128 KiB", "en").code == "right"
    result = exercise.check("128 KB", "en")
    assert (result.code, result.other_unit) == ("right_value_wrong_unit_name", "KiB")


def test_the_mha_figure_is_off_by_the_gqa_group():
    exercise = exercise_for("bytes_per_token", model=LLAMA_8B)
    result = exercise.check("512 KiB", "en")
    assert (result.code, result.factor_name, result.factor) == ("off_by_factor", "gqa_group", 4.0)


def test_users_fit_wants_the_exact_count():
    exercise = exercise_for("users_fit", model=LLAMA_8B, gpu=H100, context_tokens=131072)
    users = int(exercise.answer_value)
    assert exercise.check(str(users), "pt").code == "right"
    assert exercise.check(f"{users} usuários", "pt").code == "right"
    assert exercise.check(str(users + 1), "en").code == "wrong"


def test_a_decode_time_in_seconds_is_converted():
    exercise = exercise_for("decode_ms_per_token", model=LLAMA_8B, gpu=H100, context_tokens=8192)
    result = exercise.check(f"{exercise.answer_value / 1000} s", "en")
    assert result.code == "right_in_other_unit"


def test_the_phase_question_is_answered_in_either_language():
    exercise = exercise_for("compute_bound_phase", model=LLAMA_8B, gpu=H100, prompt_tokens=8192)
    assert exercise.check("Prefill", "en").code == "right"
    assert exercise.check("ambos", "pt").code == "wrong"


# ---------------------------------------------------------------- bad input


def test_an_unknown_topic_is_refused():
    with pytest.raises(ValueError, match="unknown topic"):
        exercise_for("vibes", model=LLAMA_8B)


def test_an_unknown_parameter_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="takes kv_dtype"):
        exercise_for("bytes_per_token", model=LLAMA_8B, batch=4)


def test_a_gpu_topic_without_a_gpu_is_refused():
    with pytest.raises(ValueError, match="needs a GPU"):
        exercise_for("users_fit", model=LLAMA_8B)


def test_gqa_saving_on_an_mla_model_is_refused():
    with pytest.raises(ValueError, match="K and V per head"):
        exercise_for("gqa_saving", model=MODELS["deepseek-v3"])


@pytest.mark.parametrize("number", [-1, 1.5, "7"])
def test_a_set_number_must_be_a_whole_number(number):
    with pytest.raises(ValueError, match="set_number"):
        generate_exercise_set(number, models=MODELS, gpus=GPUS)


def test_an_empty_topic_list_is_refused():
    with pytest.raises(ValueError, match="topics is empty"):
        a_set(1, topics=())
