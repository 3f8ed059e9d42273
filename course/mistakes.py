"""The usual wrong readings of a model's cache, as models: what a careless calculator computes.

Each function returns the model a calculator *thinks* it has when it makes one
mistake, or ``None`` when the mistake changes nothing for this model, so the app
can show the wrong figure beside the right one with the same kvcore formulas:

* ``ignoring_kv_heads`` — every query head keeps its own K and V (MHA), although
  the config says ``num_key_value_heads`` (GQA/MQA). Llama-3.1-8B: 4× too much.
* ``head_dim_from_hidden`` — head size taken as hidden_size / num_attention_heads
  although the config states ``head_dim`` (Gemma 7B: 3072 / 16 = 192, really 256;
  Qwen3-32B: 5120 / 64 = 80, really 128).
* ``mla_with_factor_two`` — an MLA latent counted twice, once for K and once for V
  (DeepSeek-V3: 2 × 576 values per layer instead of 576).
* ``sliding_as_full`` — sliding-window layers charged the whole context (Gemma 3:
  50 of its 62 layers keep only 1,024 tokens).

The same careless calculator answering an exercise (``careless_answers``): each of the
readings above, asked the same question, and the slips of one computation, each the
answer kvcore gives once that slip is made (``ANSWER_MISTAKES``):

* ``no_kv_read`` — a decode step that reads only the weights: max(F / P, W_active / BW).
* ``one_sequence_kv`` — a batch's step that reads one sequence's cache instead of B of them.
* ``all_experts_read`` — a MoE decode step that reads every expert (N_total · b_w, not N_active · b_w).
* ``attention_left_out`` — a prefill whose FLOPs are only the matmuls' 2 · N_active · n.
* ``wrong_roof`` — the smaller roofline term (FLOPs / P or bytes / BW) taken as the time.
* ``whole_memory`` — the whole card as the budget, without the ``gpu_memory_utilization`` share.
* ``weights_not_subtracted`` — the pool counted without taking the weights off the budget.
* ``active_weights_only`` — a MoE's weights counted as its active parameters only.

Sources: the model configs and their transformers modeling files; the MLA latent:
DeepSeek-V2, arXiv:2405.04434 §2.1; sliding windows: Mistral 7B, arXiv:2310.06825; the
roofline: Williams et al. 2009 (``kvcore.timing``); the budget: vLLM's gpu_memory_utilization.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from course import exercises
from course.exercises import Exercise
from kvcore import (
    GpuSpec,
    ModelSpec,
    bytes_per_value,
    decode_bytes_per_step,
    decode_flops_per_step,
    phase_times,
    prefill_bytes,
    rates_for,
    weights_bytes,
    with_changes,
)

MISTAKES: tuple[str, ...] = ("ignoring_kv_heads", "head_dim_from_hidden", "mla_with_factor_two", "sliding_as_full")
#: Slips of one computation (not of reading the config), in the order ``careless_answers`` tries them.
ANSWER_MISTAKES: tuple[str, ...] = (
    "no_kv_read",
    "one_sequence_kv",
    "all_experts_read",
    "attention_left_out",
    "wrong_roof",
    "whole_memory",
    "weights_not_subtracted",
    "active_weights_only",
)
#: Topics whose answer depends on the cache's size: a wrong reading of the config changes it.
CACHE_TOPICS = frozenset({"bytes_per_token", "sequence_cache", "users_fit", "max_context", "decode_ms_per_token"})
#: Exercise inputs that are not ``exercise_for`` parameters.
_NOT_PARAMETERS = frozenset({"model", "gpu", "params"})


def ignoring_kv_heads(model: ModelSpec) -> ModelSpec | None:
    """The model with as many KV heads as query heads (MHA): 2 · n_heads · d_head values per token and layer.

    None for MHA models (nothing changes) and for MLA-only models (no KV heads to ignore).

    >>> from kvcore.model import uniform_model
    >>> gqa = uniform_model(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, head_dim=128)
    >>> ignoring_kv_heads(gqa).num_key_value_heads
    32
    """
    if model.num_key_value_heads == model.num_attention_heads or not _has_kv_heads(model):
        return None
    return with_changes(model, num_key_value_heads=model.num_attention_heads)


def head_dim_from_hidden(model: ModelSpec) -> ModelSpec | None:
    """The model with head_dim = hidden_size // num_attention_heads, where that differs from the config's head_dim.

    None when the two agree, when hidden_size is unknown, or for MLA-only models.

    >>> from kvcore.model import ModelSpec
    >>> gemma = ModelSpec(id="g", name="g", num_hidden_layers=28, num_attention_heads=16,
    ...                   num_key_value_heads=16, head_dim=256, hidden_size=3072)
    >>> head_dim_from_hidden(gemma).head_dim
    192
    """
    if not model.hidden_size or not _has_kv_heads(model):
        return None
    derived = model.hidden_size // model.num_attention_heads
    if derived in (0, model.head_dim):
        return None
    return with_changes(model, head_dim=derived)


def mla_with_factor_two(model: ModelSpec) -> ModelSpec | None:
    """An MLA model read as if K and V each kept a latent: 2 · (kv_lora_rank + qk_rope_head_dim) per token and layer.

    Built as full-attention layers with one KV head of kv_lora_rank + qk_rope_head_dim
    values (kvcore's full layers cache 2 · heads · head_dim). None for models without MLA layers.
    """
    if model.count("mla") == 0:
        return None
    kinds = model.layer_pattern.replace("mla", "full")
    return with_changes(
        model,
        layer_pattern=kinds,
        num_key_value_heads=1,
        head_dim=model.kv_lora_rank + model.qk_rope_head_dim,
        kv_lora_rank=0,
        qk_rope_head_dim=0,
    )


def sliding_as_full(model: ModelSpec) -> ModelSpec | None:
    """The model with every sliding-window layer attending to (and caching) the whole context.

    None for models without sliding layers.
    """
    if model.count("sliding") == 0:
        return None
    return with_changes(model, layer_pattern=model.layer_pattern.replace("sliding", "full"), sliding_window=None)


def wrong_readings(model: ModelSpec) -> dict[str, ModelSpec]:
    """Every mistake that changes this model's cache, by name (in the order of ``MISTAKES``)."""
    readings = {
        "ignoring_kv_heads": ignoring_kv_heads(model),
        "head_dim_from_hidden": head_dim_from_hidden(model),
        "mla_with_factor_two": mla_with_factor_two(model),
        "sliding_as_full": sliding_as_full(model),
    }
    return {name: wrong for name, wrong in readings.items() if wrong is not None}


def _has_kv_heads(model: ModelSpec) -> bool:
    return model.count("full") + model.count("sliding") > 0


# ---------------------------------------------------------------- a careless calculator answering an exercise


def careless_answers(asked: Exercise, *, model: ModelSpec, gpu: GpuSpec | None = None) -> dict[str, float]:
    """What a careless calculator answers to `asked`, by mistake name, in the asked unit (kvcore computes each).

    The readings of ``wrong_readings`` for the topics that depend on the cache
    (``CACHE_TOPICS``: the same question asked about the wrong model), then the slips of
    ``ANSWER_MISTAKES`` that apply to the topic. A mistake that changes nothing, or whose
    question cannot be asked, is left out. `model` and `gpu` are the ones the exercise was
    built on (the page's own, which may be a variant of a catalogue model).
    """
    if asked.topic not in exercises.TOPICS:
        return {}
    params = {name: value for name, value in asked.inputs.items() if name not in _NOT_PARAMETERS}
    found: dict[str, float | None] = {}
    if asked.topic in CACHE_TOPICS:
        for name, wrong in wrong_readings(model).items():
            found[name] = _answer_or_none(_rebuilt, asked.topic, wrong, gpu, params)
    for name in ANSWER_MISTAKES:
        found[name] = _answer_or_none(_SLIPS[name], asked, model, gpu, params)
    # Finite, positive, and not the right answer (NaN ≠ NaN drops a NaN).
    return {
        name: float(value)
        for name, value in found.items()
        if value is not None and value == value and 0 < value < float("inf") and value != asked.answer_value
    }


def _answer_or_none(answer: Callable[..., float | None], *args: Any) -> float | None:
    """The mistake's answer, or None when the settings make no question with it (a ValueError or KvError)."""
    try:
        return answer(*args)
    except ValueError:
        return None


def _rebuilt(topic: str, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]) -> float:
    """The answer of the same question on other settings (``exercises.exercise_for``)."""
    return exercises.exercise_for(topic, model=model, gpu=gpu, **params).answer_value


def _step_value(asked: Exercise, name: str) -> float | None:
    return next((step.value for step in asked.steps if step.name == name), None)


def _decode_ms(model: ModelSpec, gpu: GpuSpec, params: Mapping[str, Any], *, kv: bool, batch: int) -> float:
    """One decode step on the roofline, ms: max(F / P, (W_active + [B · KV]) / BW) (``kvcore.phase_times``)."""
    weights_dtype = params.get("weights_dtype", model.weights_dtype)
    read = decode_bytes_per_step(
        model,
        context_tokens=params["context_tokens"],
        batch=batch,
        weight_bytes_per_param=bytes_per_value(weights_dtype),
        kv_bytes_per_value=bytes_per_value(params.get("kv_dtype", "bf16")),
        gpus=int(params.get("gpus", 1)),
    )
    flops = decode_flops_per_step(model, context_tokens=params["context_tokens"], batch=batch)
    moved = float(read.total) if kv else float(read.weights_bytes)
    rates = rates_for(gpu, weights_dtype=weights_dtype, gpus=int(params.get("gpus", 1)))
    return 1e3 * float(phase_times(flops, moved, rates=rates).time_s)


def _no_kv_read(asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]) -> float | None:
    """A decode step without the KV read: max(F / P, W_active / BW) [ms]."""
    if asked.topic != "decode_ms_per_token" or gpu is None:
        return None
    return _decode_ms(model, gpu, params, kv=False, batch=int(params.get("batch", 1)))


def _one_sequence_kv(asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]) -> float | None:
    """A batch's decode step reading one sequence's cache: the step at batch 1 [ms]."""
    if asked.topic != "decode_ms_per_token" or gpu is None or int(params.get("batch", 1)) == 1:
        return None
    return _decode_ms(model, gpu, params, kv=True, batch=1)


def _all_experts_read(
    asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]
) -> float | None:
    """A MoE decode step that reads every expert: the same question with N_active = N_total [ms]."""
    total, active = float(model.total_params or 0.0), float(model.active_params or 0.0)
    if asked.topic != "decode_ms_per_token" or not 0 < active < total:
        return None
    return _rebuilt(asked.topic, with_changes(model, active_params=total), gpu, params)


def _attention_left_out(
    asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]
) -> float | None:
    """A prefill without attention's FLOPs: max(2 · N_active · n / P, bytes / BW) [ms]."""
    if asked.topic != "prefill_ttft" or gpu is None:
        return None
    weights_dtype = params.get("weights_dtype", model.weights_dtype)
    prompt = int(params["prompt_tokens"])
    moved = prefill_bytes(
        model,
        prompt_tokens=prompt,
        weight_bytes_per_param=bytes_per_value(weights_dtype),
        kv_bytes_per_value=bytes_per_value(params.get("kv_dtype", "bf16")),
    )
    rates = rates_for(gpu, weights_dtype=weights_dtype, gpus=int(params.get("gpus", 1)))
    matmuls = 2.0 * float(model.active_params or 0.0) * prompt
    return 1e3 * float(phase_times(matmuls, moved, rates=rates).time_s)


def _wrong_roof(asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]) -> float | None:
    """The smaller roofline term as the time: min(F / P, bytes / BW) [ms]."""
    if asked.topic == "prefill_ttft":
        compute, memory = _step_value(asked, "compute_time"), _step_value(asked, "memory_time")
        return None if compute is None or memory is None else min(compute, memory)
    if asked.topic != "decode_ms_per_token" or gpu is None:
        return None
    weights_dtype = params.get("weights_dtype", model.weights_dtype)
    batch, gpus = int(params.get("batch", 1)), int(params.get("gpus", 1))
    read = decode_bytes_per_step(
        model,
        context_tokens=params["context_tokens"],
        batch=batch,
        weight_bytes_per_param=bytes_per_value(weights_dtype),
        kv_bytes_per_value=bytes_per_value(params.get("kv_dtype", "bf16")),
        gpus=gpus,
    )
    flops = decode_flops_per_step(model, context_tokens=params["context_tokens"], batch=batch)
    times = phase_times(flops, read.total, rates=rates_for(gpu, weights_dtype=weights_dtype, gpus=gpus))
    return 1e3 * min(float(times.compute_s), float(times.memory_s))


def _whole_memory(asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]) -> float | None:
    """The budget without the utilization share: the same question with u = 1."""
    if asked.topic not in ("users_fit", "max_context") or float(params.get("utilization", 0.9)) == 1.0:
        return None
    return _rebuilt(asked.topic, model, gpu, {**params, "utilization": 1.0})


def _weights_not_subtracted(
    asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]
) -> float | None:
    """The pool with the weights left on the budget: the same question with no weights [tokens]."""
    if asked.topic != "max_context":
        return None
    return _rebuilt(asked.topic, model, gpu, {**params, "weights_gib": 0.0})


def _active_weights_only(
    asked: Exercise, model: ModelSpec, gpu: GpuSpec | None, params: Mapping[str, Any]
) -> float | None:
    """A MoE's weights as its active parameters only: N_active · b_w / 2³⁰ [GiB] (/ 10⁹ [GB], the asked unit)."""
    total, active = float(model.total_params or 0.0), float(model.active_params or 0.0)
    if asked.topic != "weights_memory" or not 0 < active < total:
        return None
    wrong = weights_bytes(active, bytes_per_param=bytes_per_value(params.get("weights_dtype", "bf16")))
    return wrong / exercises.memory_scale(str(params.get("memory_unit", "GiB"))).bytes


_SLIPS: dict[str, Callable[[Exercise, ModelSpec, GpuSpec | None, Mapping[str, Any]], float | None]] = {
    "no_kv_read": _no_kv_read,
    "one_sequence_kv": _one_sequence_kv,
    "all_experts_read": _all_experts_read,
    "attention_left_out": _attention_left_out,
    "wrong_roof": _wrong_roof,
    "whole_memory": _whole_memory,
    "weights_not_subtracted": _weights_not_subtracted,
    "active_weights_only": _active_weights_only,
}
