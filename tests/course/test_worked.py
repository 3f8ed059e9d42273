"""Worked formulas: every substituted formula evaluates back to its step's value, and that value is kvcore's."""

from __future__ import annotations

import math

import pytest

import kvcore
from course import exercises, worked
from course.worked import Quantity, evaluate
from kvcore.errors import KvError

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
#: Dense GQA, MLA (FP8), sliding + full, sliding + full MoE (MXFP4), MoE, linear + full MoE.
FAMILIES = ("llama-3.1-8b", "deepseek-v3", "gemma-3-27b", "gpt-oss-120b", "qwen3-30b-a3b", "qwen3-next-80b-a3b")
GPU_IDS = ("rtx-4090", "h100-sxm", "b200", "mi300x")
CASES = [(model_id, gpu_id) for model_id in FAMILIES for gpu_id in GPU_IDS]


def assert_evaluates_back(line: worked.WorkedStep) -> None:
    """The substituted formula (six significant digits a number) gives the value; the exact numbers give it exactly."""
    assert evaluate(line.substituted) == pytest.approx(line.value, rel=1e-4, abs=1e-12), line
    assert evaluate(line.formula, line.values()) == pytest.approx(line.value, rel=1e-9, abs=1e-12), line
    assert line.symbolic.isascii() and line.substituted.isascii(), line


def settings(model_id: str, gpu_id: str, *, tp: int = 1):
    model, gpu = MODELS[model_id], GPUS[gpu_id]
    weights_dtype = kvcore.dtype_name(model.weights_dtype)
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mfu=0.5, mbu=0.8, gpus=tp)
    sizes = {"weight_bytes_per_param": kvcore.bytes_per_value(weights_dtype), "kv_bytes_per_value": 2.0}
    return model, gpu, rates, sizes


# ---------------------------------------------------------------- the evaluator


def test_the_evaluator_follows_the_usual_precedence():
    assert evaluate("2 + 3 * 4 ^ 2 / 8") == 8.0
    assert evaluate("(2 + 3) * 4") == 20.0
    assert evaluate("2 ^ 3 ^ 2") == 512.0  # right-associative, as written on a whiteboard
    assert evaluate("-3 + 5") == 2.0


def test_the_evaluator_knows_min_max_floor_and_a_comparison():
    assert evaluate("max(1.5e3, 2) + min(4, 8)") == 1504.0
    assert evaluate("floor(7 / 2)") == 3.0
    assert evaluate("(3 >= 2) + 2 * (1 >= 2)") == 1.0


def test_the_evaluator_takes_names_from_the_values_it_is_given():
    assert evaluate("2 * L * s", {"L": 32, "s": 8192}) == 524288.0
    with pytest.raises(KvError) as missing:
        evaluate("2 * L")
    assert missing.value.code == "worked_symbol"


@pytest.mark.parametrize(
    "text", ["__import__('os').system('true')", "2 ** 3", "exp(1)", "1 +", "(1 + 2", "a.b", "1; 2", "lambda: 1"]
)
def test_the_evaluator_refuses_anything_but_arithmetic(text):
    with pytest.raises(KvError) as refused:
        evaluate(text)
    assert refused.value.code in ("worked_formula", "worked_symbol")


def test_a_step_refuses_a_symbol_without_a_quantity():
    with pytest.raises(KvError) as refused:
        worked.step("t", "bytes / BW", [Quantity(symbol="bytes", value=1.0)], 1.0, "s")
    assert refused.value.fields["symbol"] == "BW"


# ---------------------------------------------------------------- the time model


@pytest.mark.parametrize(("model_id", "gpu_id"), CASES)
def test_the_prefill_roofline_evaluates_to_kvcores_time_to_first_token(model_id, gpu_id):
    model, _, rates, sizes = settings(model_id, gpu_id)
    prompt = 4096
    flops = float(kvcore.prefill_flops(model, prompt_tokens=prompt))
    moved = float(kvcore.prefill_bytes(model, prompt_tokens=prompt, **sizes))
    lines = worked.roofline(
        "TTFT",
        flops=Quantity(symbol="FLOPs", value=flops, unit="FLOP"),
        moved=Quantity(symbol="bytes", value=moved, unit="B"),
        rates=rates,
        efficiencies=True,
    )
    for line in lines:
        assert_evaluates_back(line)
    assert lines[-1].value == float(kvcore.ttft_s(model, prompt_tokens=prompt, rates=rates, **sizes))


@pytest.mark.parametrize(("model_id", "gpu_id"), CASES)
@pytest.mark.parametrize("tp", [1, 8])
def test_the_decode_roofline_evaluates_to_kvcores_time_per_token(model_id, gpu_id, tp):
    model, _, rates, sizes = settings(model_id, gpu_id, tp=tp)
    context, batch = 16384, 16
    read = kvcore.decode_bytes_per_step(model, context_tokens=context, batch=batch, gpus=tp, **sizes)
    flops = float(kvcore.decode_flops_per_step(model, context_tokens=context, batch=batch))
    lines = worked.roofline(
        "TPOT",
        flops=Quantity(symbol="FLOPs", value=flops, unit="FLOP"),
        moved=Quantity(symbol="bytes", value=float(read.total), unit="B"),
        rates=rates,
        efficiencies=True,
    )
    for line in lines:
        assert_evaluates_back(line)
    expected = float(kvcore.tpot_s(model, context_tokens=context, batch=batch, rates=rates, **sizes))
    assert lines[-1].value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("model_id", "gpu_id"), CASES)
@pytest.mark.parametrize("tp", [1, 2, 8])
def test_the_decode_step_written_out_evaluates_to_kvcores_memory_time(model_id, gpu_id, tp):
    model, _, rates, sizes = settings(model_id, gpu_id, tp=tp)
    read = kvcore.decode_bytes_per_step(model, context_tokens=32768, batch=4, gpus=tp, **sizes)
    step_bytes = worked.decode_step_bytes(read, batch=4)
    assert_evaluates_back(step_bytes)
    assert step_bytes.value == float(read.total)
    memory = worked.memory_term(
        Quantity(symbol="step_bytes", value=step_bytes.value, unit="B"), rates=rates, efficiencies=True, gpus=True
    )
    line = worked.inline(memory, step_bytes)
    assert line.formula == "(weights_read + batch * kv_sequence) / (n_gpu * BW * MBU)"
    assert_evaluates_back(line)
    expected = kvcore.memory_time_s(
        read.total, bandwidth_bytes_per_s=GPUS[gpu_id].bandwidth_bytes_per_s, mbu=0.8, gpus=tp
    )
    assert line.value == pytest.approx(float(expected), rel=1e-12)
    assert worked.decode_memory_time(read, batch=4, rates=rates) == line


def test_the_sequence_a_decode_step_reads_counts_mlas_latent_on_every_gpu():
    """DeepSeek-V3 on 8 GPUs: each GPU keeps the whole latent, so a sequence is read 8 times (not once)."""
    model, _, _, sizes = settings("deepseek-v3", "b200", tp=8)
    read = kvcore.decode_bytes_per_step(model, context_tokens=32768, batch=2, gpus=8, **sizes)
    one_gpu = float(kvcore.sequence_kv_bytes(model, context_tokens=32768, bytes_per_value=2.0, tp=8))
    step_bytes = worked.decode_step_bytes(read, batch=2)
    assert step_bytes.quantity("kv_sequence").value == pytest.approx(8 * one_gpu)


@pytest.mark.parametrize("gpu_id", GPU_IDS)
def test_the_ridge_point_evaluates_to_kvcores(gpu_id):
    gpu = GPUS[gpu_id]
    line = worked.ridge(peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)
    assert_evaluates_back(line)
    assert line.value == kvcore.ridge_point(
        peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s
    )


def test_milliseconds_are_written_as_times_a_thousand():
    rates = kvcore.Rates(peak_flop_per_s=1e15, bandwidth_bytes_per_s=1e12, gpus=2)
    compute, memory, slower = worked.roofline(
        "ttft", flops=Quantity(symbol="F", value=4e12), moved=Quantity(symbol="M", value=1e9), rates=rates, unit="ms"
    )
    assert compute.formula == "F / (n_gpu * P) * 1000" and compute.value == 2.0
    assert memory.formula == "M / (n_gpu * BW) * 1000" and memory.value == 0.5
    assert slower.substituted == "max(2, 0.5)" and slower.value == 2.0


# ---------------------------------------------------------------- the KV cache and what one GPU holds


@pytest.mark.parametrize("model_id", FAMILIES)
@pytest.mark.parametrize(("context", "concurrency", "b"), [(8192, 1, 2.0), (131072, 4, 0.5), (1000, 3, 1.0)])
def test_each_kv_term_evaluates_to_kvcores_part_of_the_cache(model_id, context, concurrency, b):
    model = MODELS[model_id]
    terms = worked.kv_terms(model, context_tokens=context, concurrency=concurrency, bytes_per_value=b)
    parts = kvcore.kv_cache_bytes_by_kind(model, context_tokens=context, concurrency=concurrency, bytes_per_value=b)
    assert [term.name for term in terms] == [f"kv_{kind}" for kind in parts]
    for term, part in zip(terms, parts.values(), strict=True):
        assert_evaluates_back(term)
        assert term.value == float(part)
    total = kvcore.kv_cache_bytes(model, context_tokens=context, concurrency=concurrency, bytes_per_value=b)
    assert sum(term.value for term in terms) == pytest.approx(float(total))


@pytest.mark.parametrize("model_id", FAMILIES)
@pytest.mark.parametrize("tp", [1, 8])
def test_the_sequence_and_per_token_steps_evaluate_to_kvcores_figures(model_id, tp):
    model = MODELS[model_id]
    sequence = worked.kv_sequence_steps(model, context_tokens=65536, bytes_per_value=2.0, tp=tp)
    per_token = worked.kv_per_token_steps(model, bytes_per_value=1.0, tp=tp)
    for line in (*sequence, *per_token):
        assert_evaluates_back(line)
    assert sequence[-1].value == float(
        kvcore.sequence_kv_bytes(model, context_tokens=65536, bytes_per_value=2.0, tp=tp)
    )
    assert per_token[-1].value == kvcore.kv_bytes_per_token(model, bytes_per_value=1.0, tp=tp)


def test_the_memory_total_evaluates_to_the_total_it_is_given():
    line = worked.memory_total(
        weights_bytes=15e9, kv_bytes=1.25e9, overhead_bytes=2**30, total_bytes=15e9 + 1.25e9 + 2**30
    )
    assert line.formula == "weights + KV + overhead"
    assert_evaluates_back(line)


# ---------------------------------------------------------------- the exercises show the same steps


@pytest.mark.parametrize("model_id", FAMILIES)
def test_the_prefill_exercise_times_are_the_worked_roofline(model_id):
    model, gpu = MODELS[model_id], GPUS["b200"]
    exercise = exercises.exercise_for("prefill_ttft", model=model, gpu=gpu, prompt_tokens=2048, gpus=8)
    weights_dtype = exercise.inputs["weights_dtype"]
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, gpus=8)
    sizes = {"weight_bytes_per_param": kvcore.bytes_per_value(weights_dtype), "kv_bytes_per_value": 2.0}
    lines = worked.roofline(
        "ttft",
        flops=Quantity(symbol="prefill_flops", value=float(kvcore.prefill_flops(model, prompt_tokens=2048))),
        moved=Quantity(symbol="prefill_bytes", value=float(kvcore.prefill_bytes(model, prompt_tokens=2048, **sizes))),
        rates=rates,
        unit="ms",
    )
    shown = {step.name: step for step in exercise.steps}
    for line in lines:
        assert (shown[line.name].symbolic, shown[line.name].substituted) == (line.symbolic, line.substituted)
        assert shown[line.name].value == line.value
    assert exercise.steps[-1].value == exercise.answer_value


def test_the_phase_exercise_ridge_point_is_the_worked_one():
    gpu = GPUS["h100-sxm"]
    exercise = exercises.exercise_for("compute_bound_phase", model=MODELS["llama-3.1-8b"], gpu=gpu)
    [ridge] = [step for step in exercise.steps if step.name == "ridge_point"]
    line = worked.ridge(peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)
    assert (ridge.symbolic, ridge.substituted, ridge.value) == (line.symbolic, line.substituted, line.value)


@pytest.mark.parametrize("model_id", FAMILIES)
def test_the_sequence_exercise_shows_the_memory_pages_kv_terms(model_id):
    model = MODELS[model_id]
    context = min(32768, model.max_position_embeddings)
    exercise = exercises.exercise_for("sequence_cache", model=model, context_tokens=context)
    terms = worked.kv_terms(model, context_tokens=context, bytes_per_value=2.0)
    shown = {step.name: step for step in exercise.steps}
    if len(terms) == 1:
        assert shown["kv_sequence"].symbolic == terms[0].symbolic
    else:
        for term in terms:
            assert (shown[term.name].symbolic, shown[term.name].substituted) == (term.symbolic, term.substituted)
    assert math.isclose(evaluate(shown["kv_sequence"].substituted), shown["kv_sequence"].value, rel_tol=1e-4)
