"""Exercises: predict a figure, then see it worked out, on real models and GPUs.

An ``Exercise`` states its inputs (ids and numbers, enough for the app to ask the
question in Portuguese or English), the expected answer (computed by kvcore's own
functions, never re-derived here), the tolerance, and the worked computation as
``Step``s: each a plain-ASCII formula, the same formula with the numbers put in,
its value and unit. ``symbolic`` and ``substituted`` are language-neutral: ``*``,
``/``, ``^`` (power), ``min``, ``max``, ``floor``; numbers are plain (no thousands
separators; six significant digits, or every digit of a whole number when fewer
would lose some), so the substituted formula evaluates to the step's value up to
that rounding. The app turns them into LaTeX and localises the decimal mark.

Topics (one per lesson family; answer unit in brackets):

* ``bytes_per_token`` [KiB] — Σ per layer kind of 2 · L · H_kv · d_head · b (MLA: L · (r_kv + d_rope) · b); seed 000.
* ``sequence_cache`` [GiB] — one sequence's cache at s tokens (sliding layers hold min(s, W)); seed 000.
* ``users_fit`` [users, exact] — floor((VRAM · u − weights) / cache of one user), per GPU of n; seed 000.
* ``weights_memory`` [GiB] — N · b_w (MoE: every expert is resident); seed 004.
* ``decode_ms_per_token`` [ms] — max((active weights + B · KV(s)) / (n_gpu · BW), FLOPs / (n_gpu · P)): the
  roofline of ``kvcore.timing``, memory-bound but for a big batch of a small model; seed 004.
* ``prefill_ttft`` [ms] — max(FLOPs / peak, bytes / bandwidth) over n GPUs (roofline); seed 002.
* ``compute_bound_phase`` [choice: neither, prefill, decode, both] — each phase's FLOP/byte vs the ridge point.
* ``gqa_saving`` [x] — MHA bytes per token / the model's bytes per token (H / H_kv for GQA); seed 002.
* ``max_context`` [tokens] — floor((VRAM · u − weights − overhead) / bytes per token), the pool vLLM reports; seed 000.

The steps of the KV, time and ridge topics come from ``course.worked``: the same
substituted steps (and numbers) the lessons' formula blocks show.

Memory answers come in binary units (KiB, MiB, GiB: ÷ 1024, 2²⁰, 2³⁰) by default, or in
decimal ones (KB, MB, GB: ÷ 1000, 10⁶, 10⁹) with ``memory_unit="GB"``, the unit family of the
app's GiB/GB switch: the same question, drawn the same way, asked and worked out in the unit
the page shows (``MemoryScale``). The inputs a page passes in GiB (``overhead_gib``,
``weights_gib``) stay in GiB, whatever the unit asked.

``generate_exercise_set(7, ...)`` draws from ``numpy.random.default_rng(7)`` over the
catalogues sorted by id, so set 7 is the same on every machine and every run (for
a given numpy version: numpy keeps the Generator's streams stable across
platforms, not across every release; NEP 19).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from course import answers, worked
from course.answers import CHOICE, COUNT, MEMORY, RATIO, TIME, Verdict
from course.worked import Quantity, WorkedStep
from course.worked import plain as _n
from kvcore import (
    GB,
    KB,
    MB,
    GiB,
    GpuSpec,
    KiB,
    MiB,
    ModelSpec,
    SizingSteps,
    attention_pairs,
    bound_by,
    bytes_per_value,
    cache_reduction_factor,
    decode_bytes_per_step,
    decode_flops_per_step,
    decode_intensity_flop_per_byte,
    decode_step_times,
    dtype_name,
    kv_budget_bytes,
    kv_bytes_per_token,
    kv_cache_bytes,
    max_users,
    mha_equivalent_bytes_per_token,
    model_weights_bytes,
    prefill_bytes,
    prefill_flops,
    prefill_intensity_flop_per_byte,
    prefill_times,
    rates_for,
    ridge_point,
    sequence_kv_bytes,
    sizing_steps,
    tensor_parallel_sizes,
    weights_bytes,
)

TOPICS: tuple[str, ...] = (
    "bytes_per_token",
    "sequence_cache",
    "users_fit",
    "weights_memory",
    "decode_ms_per_token",
    "prefill_ttft",
    "compute_bound_phase",
    "gqa_saving",
    "max_context",
)
#: Topics whose question needs a GPU.
GPU_TOPICS = frozenset({"users_fit", "decode_ms_per_token", "prefill_ttft", "compute_bound_phase", "max_context"})
#: The choices of ``compute_bound_phase``, ordered so that index = [prefill compute-bound] + 2 · [decode compute-bound].
PHASE_CHOICES: tuple[str, ...] = ("neither", "prefill", "decode", "both")

CONTEXT_TOKENS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
PROMPT_TOKENS = (128, 512, 2048, 8192, 32768)
BATCHES = (1, 4, 16, 64)
PHASE_BATCHES = (1, 16, 64, 256)
UTILIZATIONS = (0.85, 0.9, 0.95)
#: Most GPUs a drawn exercise may use (one node); Apple machines are single-GPU.
MAX_GPUS = 8
#: Fewest tokens a drawn ``max_context`` pool must hold (below it the question is degenerate).
MIN_POOL_TOKENS = 1024
#: Memory share assumed when checking that a drawn decode or prefill fits.
FIT_UTILIZATION = 0.9
_MAX_DRAWS = 200
#: The unit families a memory answer can be asked in: binary (the default) or decimal.
MEMORY_UNITS: tuple[str, ...] = ("GiB", "GB")


@dataclass(frozen=True, slots=True)
class MemoryScale:
    """The units one exercise's memory figures are in: large (GiB or GB) and small (KiB or KB), with divisors.

    ``power`` and ``small_divisor`` are the divisors as a formula writes them ('2^30' or '10^9',
    '1024' or '1000'); ``suffix`` ends the name of a step that converts bytes ('gib' or 'gb').
    """

    unit: str
    bytes: float
    power: str
    small_unit: str
    small_bytes: float
    small_divisor: str
    suffix: str
    small_suffix: str
    medium_unit: str
    medium_bytes: float
    medium_power: str


_SCALES = {
    "GiB": MemoryScale("GiB", GiB, "2^30", "KiB", KiB, "1024", "gib", "kib", "MiB", MiB, "2^20"),
    "GB": MemoryScale("GB", GB, "10^9", "KB", KB, "1000", "gb", "kb", "MB", MB, "10^6"),
}


def memory_scale(memory_unit: str) -> MemoryScale:
    """The ``MemoryScale`` of 'GiB' (binary units) or 'GB' (decimal units); ValueError for another unit."""
    if memory_unit not in _SCALES:
        raise ValueError(f"memory_unit must be one of {', '.join(MEMORY_UNITS)}, got {memory_unit!r}")
    return _SCALES[memory_unit]


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One line of the worked answer: name = symbolic = substituted = value unit."""

    name: str
    symbolic: str
    substituted: str
    value: float
    unit: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Exercise:
    """A question with its answer and worked steps (see the module docstring).

    ``factors`` names slips this question makes likely (the GQA group, the batch,
    the GPU count): ``check`` recognises an answer off by one of them. ``inputs`` and
    ``factors`` are plain dicts so that an exercise pickles (``st.cache_data``); treat
    them as read-only.
    """

    topic: str
    inputs: Mapping[str, Any]
    dimension: str
    answer_value: float
    answer_unit: str
    tolerance_rel: float
    steps: tuple[Step, ...]
    choices: tuple[str, ...] = ()
    factors: Mapping[str, float] = field(default_factory=dict)

    def check(self, text: str, lang: str) -> Verdict:
        """Parse `text` typed on the `lang` page and check it against the answer."""
        parsed = answers.parse_answer(text, dimension=self.dimension, lang=lang)
        return answers.check_answer(
            parsed,
            expected_value=self.answer_value,
            expected_unit=self.answer_unit,
            tolerance_rel=self.tolerance_rel,
            factors=self.factors,
        )


def topic_applies(topic: str, model: ModelSpec) -> bool:
    """True if `topic` can be asked about `model`.

    Only ``gqa_saving`` is restricted: it compares K/V heads with query heads, so every
    layer must keep K and V per head (full or sliding; not MLA, not linear attention).
    """
    _check_topic(topic)
    if topic == "gqa_saving":
        return set(_kinds(model)) <= {"full", "sliding"}
    return True


def exercise_for(
    topic: str, *, model: ModelSpec, gpu: GpuSpec | None = None, memory_unit: str = "GiB", **params: Any
) -> Exercise:
    """One exercise on a given configuration ("predict, then reveal" on the student's current choices).

    Parameters by topic (defaults in brackets; dtypes are names such as 'bf16', 'fp8', 'int4'):
    kv_dtype ['bf16'], weights_dtype [the model's own], context_tokens [min(32768, max context)],
    prompt_tokens [min(2048, max context)], batch [1], utilization [0.9], gpus [1], overhead_gib [0: the
    question says only the weights and the cache take memory; a page passes its own overhead, so the answer is
    its metric]. `memory_unit` ('GiB' or 'GB') is the unit family memory answers and steps are in; a 'GB'
    exercise notes it among its inputs. ValueError for an unknown topic, parameter or unit, a missing GPU, or a
    model the topic does not apply to.
    """
    _check_topic(topic)
    allowed = _PARAMETERS[topic]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"{topic} takes {', '.join(allowed) or 'no parameters'}; remove {', '.join(unknown)}")
    if topic in GPU_TOPICS and gpu is None:
        raise ValueError(f"{topic} needs a GPU: pass gpu=")
    if not topic_applies(topic, model):
        raise ValueError(f"{topic} needs a model whose layers all keep K and V per head; {model.name} does not")
    settings = _settings(model, params, memory_unit)
    build = _BUILDERS[topic]
    return build(model, gpu, settings)


def generate_exercise_set(
    set_number: int,
    *,
    models: Mapping[str, ModelSpec],
    gpus: Mapping[str, GpuSpec],
    count: int = 8,
    topics: Sequence[str] | None = None,
    memory_unit: str = "GiB",
) -> tuple[Exercise, ...]:
    """Exercise set number `set_number`: `count` exercises drawn from the catalogues, the same everywhere.

    Topics come in a shuffled cycle (every topic once before any repeats); models,
    GPUs and knobs are drawn uniformly from the catalogues sorted by id, and draws
    that make a degenerate question (the model does not fit, no pool left) are
    drawn again. Source of the randomness: ``numpy.random.default_rng(set_number)``. `memory_unit`
    changes the unit memory answers are asked in, never the draws: set 7 in GB asks set 7's questions.
    """
    memory_scale(memory_unit)
    if isinstance(set_number, bool) or not isinstance(set_number, (int, np.integer)) or set_number < 0:
        raise ValueError(f"set_number must be a whole number ≥ 0, got {set_number!r}")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count must be a whole number ≥ 1, got {count!r}")
    chosen = tuple(TOPICS if topics is None else topics)
    if not chosen:
        raise ValueError("topics is empty: pass None for all topics, or some of " + ", ".join(TOPICS))
    for topic in chosen:
        _check_topic(topic)
    rng = np.random.default_rng(int(set_number))
    model_ids, gpu_ids = sorted(models), sorted(gpus)
    order: list[str] = []
    while len(order) < count:
        order.extend(chosen[int(i)] for i in rng.permutation(len(chosen)))
    return tuple(_draw(topic, rng, models, model_ids, gpus, gpu_ids, memory_unit) for topic in order[:count])


# ---------------------------------------------------------------- drawing


def _draw(
    topic: str,
    rng: np.random.Generator,
    models: Mapping[str, ModelSpec],
    model_ids: list[str],
    gpus: Mapping[str, GpuSpec],
    gpu_ids: list[str],
    memory_unit: str = "GiB",
) -> Exercise:
    """Draw a model, a GPU and knobs until they make a sensible question for `topic`."""
    for _ in range(_MAX_DRAWS):
        model = models[_pick(rng, model_ids)]
        gpu = gpus[_pick(rng, gpu_ids)]
        if not topic_applies(topic, model):
            continue
        params = _DRAWERS[topic](rng, model, gpu)
        if params is not None:
            return exercise_for(
                topic, model=model, gpu=gpu if topic in GPU_TOPICS else None, memory_unit=memory_unit, **params
            )
    raise ValueError(f"no model and GPU of the catalogues make a {topic} exercise: add some that fit")


def _pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    """One option, uniformly (``integers`` is the most stable of the Generator's methods)."""
    return options[int(rng.integers(len(options)))]


def _contexts(model: ModelSpec, *, at_most: int = CONTEXT_TOKENS[-1]) -> list[int]:
    limit = min(model.max_position_embeddings or at_most, at_most)
    return [s for s in CONTEXT_TOKENS if s <= limit] or [limit]


def _prompts(model: ModelSpec) -> list[int]:
    limit = model.max_position_embeddings or PROMPT_TOKENS[-1]
    return [n for n in PROMPT_TOKENS if n <= limit] or [limit]


def _weights_dtypes(model: ModelSpec, gpu: GpuSpec | None) -> list[str]:
    """The checkpoint's own format, then smaller ones a server would quantise it to (FP8 where the GPU has it)."""
    native = dtype_name(model.weights_dtype)
    if native == "mxfp4":
        return [native]
    smaller = [
        name
        for name in ("bf16", "fp8", "int4")
        if bytes_per_value(name) < bytes_per_value(native) and (name != "fp8" or gpu is None or gpu.has_fp8)
    ]
    return [native, *smaller]


def _kv_dtypes(gpu: GpuSpec | None) -> list[str]:
    return ["bf16", "fp8"] if gpu is None or gpu.has_fp8 else ["bf16"]


def _smallest_gpus(model: ModelSpec, gpu: GpuSpec, fits: Callable[[int], bool]) -> int | None:
    """The fewest GPUs (a tensor-parallel size the model accepts, ≤ MAX_GPUS) for which `fits` holds."""
    most = 1 if gpu.category == "apple" else MAX_GPUS
    return next((n for n in tensor_parallel_sizes(model, max_gpus=most) if fits(n)), None)


def _gpus_for_cache(model: ModelSpec, gpu: GpuSpec, params: dict[str, Any], *, context: int, batch: int) -> int | None:
    """The fewest GPUs on which weights + `batch` sequences of `context` tokens fit (``_cache_fits``)."""
    return _smallest_gpus(
        model,
        gpu,
        lambda n: _cache_fits(
            model, gpu, context=context, batch=batch, weights=params["weights_dtype"], kv=params["kv_dtype"], n=n
        ),
    )


def _cache_fits(model: ModelSpec, gpu: GpuSpec, *, context: int, batch: int, weights: str, kv: str, n: int) -> bool:
    """True if weights + batch sequences of `context` tokens fit in FIT_UTILIZATION of each of n GPUs."""
    budget = kv_budget_bytes(
        memory_bytes=gpu.memory_bytes,
        utilization=FIT_UTILIZATION,
        weights_bytes=model_weights_bytes(model, bytes_per_param=bytes_per_value(weights), tp=n),
    )
    need = float(
        kv_cache_bytes(model, context_tokens=context, concurrency=batch, bytes_per_value=bytes_per_value(kv), tp=n)
    )
    return budget > 0 and need <= budget


def _draw_bytes_per_token(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any]:
    return {"kv_dtype": _pick(rng, _kv_dtypes(None))}


def _draw_sequence_cache(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any]:
    return {"context_tokens": _pick(rng, _contexts(model)), "kv_dtype": _pick(rng, _kv_dtypes(None))}


def _draw_weights_memory(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any]:
    return {"weights_dtype": _pick(rng, _weights_dtypes(model, None))}


def _draw_gqa_saving(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    return {} if model.num_key_value_heads < model.num_attention_heads else None


def _draw_users_fit(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    params = {
        "context_tokens": _pick(rng, _contexts(model)),
        "utilization": _pick(rng, UTILIZATIONS),
        "weights_dtype": _pick(rng, _weights_dtypes(model, gpu)),
        "kv_dtype": _pick(rng, _kv_dtypes(gpu)),
    }
    n = _smallest_gpus(model, gpu, lambda n: _users(model, gpu, _settings(model, {**params, "gpus": n})) >= 1)
    return None if n is None else {**params, "gpus": n}


def _draw_max_context(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    params = {
        "utilization": _pick(rng, UTILIZATIONS),
        "weights_dtype": _pick(rng, _weights_dtypes(model, gpu)),
        "kv_dtype": _pick(rng, _kv_dtypes(gpu)),
    }
    n = _smallest_gpus(
        model, gpu, lambda n: _pool(model, gpu, _settings(model, {**params, "gpus": n})).pool_tokens >= MIN_POOL_TOKENS
    )
    return None if n is None else {**params, "gpus": n}


def _draw_decode(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    params = {
        "context_tokens": _pick(rng, _contexts(model)),
        "batch": _pick(rng, BATCHES),
        "weights_dtype": _pick(rng, _weights_dtypes(model, gpu)),
        "kv_dtype": _pick(rng, _kv_dtypes(gpu)),
    }
    n = _gpus_for_cache(model, gpu, params, context=params["context_tokens"], batch=params["batch"])
    return None if n is None else {**params, "gpus": n}


def _draw_prefill(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    params = {
        "prompt_tokens": _pick(rng, _prompts(model)),
        "weights_dtype": _pick(rng, _weights_dtypes(model, gpu)),
        "kv_dtype": _pick(rng, _kv_dtypes(gpu)),
    }
    n = _gpus_for_cache(model, gpu, params, context=params["prompt_tokens"], batch=1)
    return None if n is None else {**params, "gpus": n}


def _draw_phase(rng: np.random.Generator, model: ModelSpec, gpu: GpuSpec) -> dict[str, Any] | None:
    params = {
        "prompt_tokens": _pick(rng, _prompts(model)),
        "context_tokens": _pick(rng, _contexts(model, at_most=32768)),
        "batch": _pick(rng, PHASE_BATCHES),
        "weights_dtype": _pick(rng, _weights_dtypes(model, gpu)),
        "kv_dtype": _pick(rng, _kv_dtypes(gpu)),
    }
    # The intensities do not depend on the GPU count, but the decode batch must fit somewhere.
    n = _gpus_for_cache(model, gpu, params, context=params["context_tokens"], batch=params["batch"])
    return None if n is None else params


# ---------------------------------------------------------------- settings


_PARAMETERS: dict[str, tuple[str, ...]] = {
    "bytes_per_token": ("kv_dtype",),
    "sequence_cache": ("context_tokens", "kv_dtype"),
    "users_fit": ("context_tokens", "utilization", "weights_dtype", "kv_dtype", "gpus", "overhead_gib"),
    "weights_memory": ("weights_dtype",),
    "decode_ms_per_token": ("context_tokens", "batch", "weights_dtype", "kv_dtype", "gpus"),
    "prefill_ttft": ("prompt_tokens", "weights_dtype", "kv_dtype", "gpus"),
    "compute_bound_phase": ("prompt_tokens", "context_tokens", "batch", "weights_dtype", "kv_dtype"),
    "gqa_saving": (),
    "max_context": ("utilization", "weights_dtype", "kv_dtype", "gpus", "overhead_gib", "weights_gib"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Settings:
    """The knobs of one exercise, with defaults filled in and dtypes resolved to bytes per value."""

    kv_dtype: str
    weights_dtype: str
    context_tokens: int
    prompt_tokens: int
    batch: int
    utilization: float
    gpus: int
    overhead_gib: float
    weights_gib: float | None = None
    memory_unit: str = "GiB"

    @property
    def scale(self) -> MemoryScale:
        """The units this exercise's memory figures are in."""
        return memory_scale(self.memory_unit)

    @property
    def b(self) -> float:
        """Bytes per KV value."""
        return bytes_per_value(self.kv_dtype)

    @property
    def b_w(self) -> float:
        """Bytes per weight."""
        return bytes_per_value(self.weights_dtype)


def _settings(model: ModelSpec, params: Mapping[str, Any], memory_unit: str = "GiB") -> _Settings:
    limit = model.max_position_embeddings or 32768
    memory_scale(memory_unit)
    return _Settings(
        kv_dtype=dtype_name(params.get("kv_dtype", "bf16")),
        weights_dtype=dtype_name(params.get("weights_dtype", model.weights_dtype)),
        context_tokens=_whole("context_tokens", params.get("context_tokens", min(32768, limit))),
        prompt_tokens=_whole("prompt_tokens", params.get("prompt_tokens", min(2048, limit))),
        batch=_whole("batch", params.get("batch", 1)),
        utilization=_fraction("utilization", params.get("utilization", 0.9)),
        gpus=_whole("gpus", params.get("gpus", 1)),
        overhead_gib=_at_least_zero("overhead_gib", params.get("overhead_gib", 0.0)),
        weights_gib=None if params.get("weights_gib") is None else _at_least_zero("weights_gib", params["weights_gib"]),
        memory_unit=memory_unit,
    )


def _whole(name: str, value: Any) -> int:
    number = float(value)
    if not math.isfinite(number) or number != int(number) or number < 1:
        raise ValueError(f"{name} must be a whole number ≥ 1, got {value!r}")
    return int(number)


def _at_least_zero(name: str, value: Any) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
    return number


def _fraction(name: str, value: Any) -> float:
    number = float(value)
    if not 0 < number <= 1:
        raise ValueError(f"{name} must be in (0, 1] (a fraction such as 0.9), got {value!r}")
    return number


# ---------------------------------------------------------------- kvcore figures shared by builders and drawers


def _weights_per_gpu_bytes(model: ModelSpec, s: _Settings) -> float:
    """N · b_w / n_gpu, or the page's own weights on one GPU when it states them (``weights_gib``)."""
    if s.weights_gib is not None:
        return s.weights_gib * GiB
    return model_weights_bytes(model, bytes_per_param=s.b_w, tp=s.gpus)


def _budget_bytes(model: ModelSpec, gpu: GpuSpec, s: _Settings) -> float:
    """The seed's budget on one GPU, as the pages compute it: VRAM · u − weights − overhead (bytes)."""
    return _pool(model, gpu, s).kv_pool_bytes


def _users(model: ModelSpec, gpu: GpuSpec, s: _Settings) -> float:
    sequence = sequence_kv_bytes(model, context_tokens=s.context_tokens, bytes_per_value=s.b, tp=s.gpus)
    return float(max_users(kv_pool_bytes=_budget_bytes(model, gpu, s), sequence_bytes=sequence))


def _pool(model: ModelSpec, gpu: GpuSpec, s: _Settings) -> SizingSteps:
    return sizing_steps(
        model,
        memory_bytes=gpu.memory_bytes,
        utilization=s.utilization,
        weights_bytes=_weights_per_gpu_bytes(model, s),
        overhead_bytes=s.overhead_gib * GiB,
        bytes_per_value=s.b,
        tp=s.gpus,
    )


# ---------------------------------------------------------------- builders


def _build_bytes_per_token(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    scale = s.scale
    answer = kv_bytes_per_token(model, bytes_per_value=s.b) / scale.small_bytes
    steps = [*_per_token_steps(model, s.b, tp=1)]
    steps.append(
        _step(
            f"bytes_per_token_{scale.small_suffix}",
            f"bytes_per_token / {scale.small_divisor}",
            f"{_n(steps[-1].value)} / {scale.small_divisor}",
            answer,
            scale.small_unit,
        )
    )
    return _exercise(
        "bytes_per_token",
        {"model": model.id, "kv_dtype": s.kv_dtype} | _unit_input(s),
        MEMORY,
        answer,
        scale.small_unit,
        0.01,
        steps,
        factors=_gqa_factor(model),
    )


def _build_sequence_cache(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    scale = s.scale
    answer = float(sequence_kv_bytes(model, context_tokens=s.context_tokens, bytes_per_value=s.b)) / scale.bytes
    steps = [*_sequence_steps(model, s.context_tokens, s.b, tp=1)]
    steps.append(_in_large_unit(steps[-1], s))
    inputs = {"model": model.id, "context_tokens": s.context_tokens, "kv_dtype": s.kv_dtype} | _unit_input(s)
    return _exercise("sequence_cache", inputs, MEMORY, answer, scale.unit, 0.03, steps, factors=_gqa_factor(model))


def _build_weights_memory(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    params = float(model.total_params or 0.0)
    scale = s.scale
    answer = weights_bytes(params, bytes_per_param=s.b_w) / scale.bytes
    steps = [
        _step("weights", f"N * b_w / {scale.power}", f"{_n(params)} * {_n(s.b_w)} / {scale.power}", answer, scale.unit)
    ]
    inputs = {"model": model.id, "params": params, "weights_dtype": s.weights_dtype} | _unit_input(s)
    return _exercise("weights_memory", inputs, MEMORY, answer, scale.unit, 0.03, steps)


def _build_users_fit(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    assert gpu is not None
    answer = _users(model, gpu, s)
    steps = _budget_steps(model, gpu, s)
    budget = steps[-1].value
    steps += _sequence_steps(model, s.context_tokens, s.b, tp=s.gpus)
    steps.append(_in_large_unit(steps[-1], s))
    sequence_in_unit = steps[-1]
    steps.append(
        _step(
            "users",
            f"floor(max(kv_budget, 0) / {sequence_in_unit.name})",
            f"floor(max({_n(budget, 12)}, 0) / {_n(sequence_in_unit.value, 12)})",
            answer,
            "users",
        )
    )
    inputs = (
        {
            "model": model.id,
            "gpu": gpu.id,
            "gpus": s.gpus,
            "context_tokens": s.context_tokens,
            "utilization": s.utilization,
            "weights_dtype": s.weights_dtype,
            "kv_dtype": s.kv_dtype,
        }
        | _overhead_input(s)
        | _unit_input(s)
    )
    return _exercise("users_fit", inputs, COUNT, answer, "users", 0.0, steps)


def _build_max_context(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    assert gpu is not None
    answer = float(_pool(model, gpu, s).pool_tokens)
    steps = _budget_steps(model, gpu, s)
    pool = steps[-1].value
    steps += _per_token_steps(model, s.b, tp=s.gpus)
    per_token = steps[-1].value
    steps.append(
        _step(
            "pool_tokens",
            f"floor(max(kv_budget, 0) * {s.scale.power} / bytes_per_token)",
            f"floor(max({_n(pool, 12)}, 0) * {s.scale.power} / {_n(per_token, 12)})",
            answer,
            "tokens",
        )
    )
    inputs = (
        {
            "model": model.id,
            "gpu": gpu.id,
            "gpus": s.gpus,
            "utilization": s.utilization,
            "weights_dtype": s.weights_dtype,
            "kv_dtype": s.kv_dtype,
        }
        | _overhead_input(s)
        | _unit_input(s)
    )
    return _exercise("max_context", inputs, COUNT, answer, "tokens", 0.01, steps)


def _overhead_input(s: _Settings) -> dict[str, float]:
    """The overhead and the given weights among an exercise's inputs, when there are (older questions keep theirs)."""
    given = {"overhead_gib": s.overhead_gib} if s.overhead_gib > 0 else {}
    return given | ({"weights_gib": s.weights_gib} if s.weights_gib is not None else {})


def _unit_input(s: _Settings) -> dict[str, str]:
    """The unit family among an exercise's inputs when it is not the default (a GiB exercise keeps its old inputs)."""
    return {"memory_unit": s.memory_unit} if s.memory_unit != "GiB" else {}


def _in_large_unit(total: Step, s: _Settings) -> Step:
    """One sequence's bytes (the step `total`) in GiB or GB: 'kv_sequence / 2^30' (or '/ 10^9')."""
    scale = s.scale
    return _step(
        f"kv_sequence_{scale.suffix}",
        f"kv_sequence / {scale.power}",
        f"{_n(total.value)} / {scale.power}",
        total.value / scale.bytes,
        scale.unit,
    )


def _build_decode(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    assert gpu is not None
    n, batch = s.gpus, s.batch
    # The same time model as the decode lesson and the CLI, at the datasheet bound the question states.
    rates = rates_for(gpu, weights_dtype=s.weights_dtype, gpus=n)
    # Both roofline terms once (kvcore.tpot_s is their maximum): the answer and the worked lines read them.
    times = decode_step_times(
        model,
        context_tokens=s.context_tokens,
        batch=batch,
        rates=rates,
        weight_bytes_per_param=s.b_w,
        kv_bytes_per_value=s.b,
    )
    answer = 1e3 * float(times.time_s)
    read = decode_bytes_per_step(
        model,
        context_tokens=s.context_tokens,
        batch=batch,
        weight_bytes_per_param=s.b_w,
        kv_bytes_per_value=s.b,
        gpus=n,
    )
    active = float(model.active_params or 0.0)
    steps = [_step("weights_read", "N_active * b_w", f"{_n(active)} * {_n(s.b_w)}", float(read.weights_bytes), "B")]
    steps += _sequence_steps(model, s.context_tokens, s.b, tp=n)
    if n > 1:
        all_gpus = n * steps[-1].value
        steps.append(
            _step("kv_sequence_all_gpus", "n_gpu * kv_sequence", f"{n} * {_n(steps[-1].value)}", all_gpus, "B")
        )
    steps.append(_step("kv_read", "batch * kv_sequence", f"{batch} * {_n(steps[-1].value)}", float(read.kv_bytes), "B"))
    total = float(read.total)
    steps.append(
        _step("step_bytes", "weights_read + kv_read", f"{_n(steps[0].value)} + {_n(steps[-1].value)}", total, "B")
    )
    flops = float(decode_flops_per_step(model, context_tokens=s.context_tokens, batch=batch))
    compute, memory, slower = worked.roofline(
        "decode_time",
        flops=Quantity(symbol="F_decode", value=flops, unit="FLOP"),
        moved=Quantity(symbol="step_bytes", value=total, unit="B"),
        rates=rates,
        times=times,
        unit="ms",
    )
    if memory.value >= compute.value:  # memory-bound (nearly always at these batches): the bytes term is the answer
        steps += _steps([replace(memory, name="decode_time")])
    else:  # a big batch of a small model: the FLOPs are the slower roof
        steps += _steps([memory, compute, slower])
    inputs = {
        "model": model.id,
        "gpu": gpu.id,
        "gpus": n,
        "context_tokens": s.context_tokens,
        "batch": batch,
        "weights_dtype": s.weights_dtype,
        "kv_dtype": s.kv_dtype,
    }
    factors = {**({"batch": float(batch)} if batch > 1 else {}), **({"gpus": float(n)} if n > 1 else {})}
    return _exercise("decode_ms_per_token", inputs, TIME, answer, "ms", 0.03, steps, factors=factors)


def _build_prefill(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    assert gpu is not None
    n, prompt = s.gpus, s.prompt_tokens
    # The same time model as the lessons and the CLI, at the datasheet bound the question states;
    # n GPUs share the work: their peaks and bandwidths add up.
    rates = rates_for(gpu, weights_dtype=s.weights_dtype, gpus=n)
    # Both roofline terms once (kvcore.ttft_s is their maximum): the answer and the worked lines read them.
    times = prefill_times(
        model, prompt_tokens=prompt, rates=rates, weight_bytes_per_param=s.b_w, kv_bytes_per_value=s.b
    )
    answer = 1e3 * float(times.time_s)
    flops = float(prefill_flops(model, prompt_tokens=prompt))
    moved = float(prefill_bytes(model, prompt_tokens=prompt, weight_bytes_per_param=s.b_w, kv_bytes_per_value=s.b))
    compute, memory, ttft = worked.roofline(
        "ttft",
        flops=Quantity(symbol="prefill_flops", value=flops, unit="FLOP"),
        moved=Quantity(symbol="prefill_bytes", value=moved, unit="B"),
        rates=rates,
        times=times,
        unit="ms",
    )
    steps = _prefill_flops_steps(model, prompt, flops)
    steps += _steps([compute])
    steps += _sequence_steps(model, prompt, s.b, tp=1)
    total = float(model.total_params or 0.0)
    steps.append(
        _step(
            "prefill_bytes",
            "N_total * b_w + kv_sequence",
            f"{_n(total)} * {_n(s.b_w)} + {_n(steps[-1].value)}",
            moved,
            "B",
        )
    )
    steps += _steps([memory, ttft])
    inputs = {
        "model": model.id,
        "gpu": gpu.id,
        "gpus": n,
        "prompt_tokens": prompt,
        "weights_dtype": s.weights_dtype,
        "kv_dtype": s.kv_dtype,
    }
    factors = {"gpus": float(n)} if n > 1 else {}
    return _exercise("prefill_ttft", inputs, TIME, answer, "ms", 0.03, steps, factors=factors)


def _build_phase(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    assert gpu is not None
    rates = {"weight_bytes_per_param": s.b_w, "kv_bytes_per_value": s.b}
    prefill = float(prefill_intensity_flop_per_byte(model, prompt_tokens=s.prompt_tokens, **rates))
    decode = float(decode_intensity_flop_per_byte(model, context_tokens=s.context_tokens, batch=s.batch, **rates))
    peak = rates_for(gpu, weights_dtype=s.weights_dtype).peak_flop_per_s
    ridge = ridge_point(peak_flop_per_s=peak, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)
    prefill_bound = bound_by(prefill, ridge) == "compute"
    decode_bound = bound_by(decode, ridge) == "compute"
    answer = float(int(prefill_bound) + 2 * int(decode_bound))
    p_flops = float(prefill_flops(model, prompt_tokens=s.prompt_tokens))
    p_bytes = float(prefill_bytes(model, prompt_tokens=s.prompt_tokens, **rates))
    d_flops = float(decode_flops_per_step(model, context_tokens=s.context_tokens, batch=s.batch))
    d_bytes = float(
        decode_bytes_per_step(
            model, context_tokens=s.context_tokens, batch=s.batch, weight_bytes_per_param=s.b_w, kv_bytes_per_value=s.b
        ).total
    )
    steps = [
        _step("prefill_intensity", "F_prefill / bytes_prefill", f"{_n(p_flops)} / {_n(p_bytes)}", prefill, "FLOP/byte"),
        _step("decode_intensity", "F_decode / bytes_decode", f"{_n(d_flops)} / {_n(d_bytes)}", decode, "FLOP/byte"),
        *_steps([worked.ridge(peak_flop_per_s=peak, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)]),
        _step(
            "answer",
            "(I_prefill >= ridge) + 2 * (I_decode >= ridge)",
            f"({_n(prefill)} >= {_n(ridge)}) + 2 * ({_n(decode)} >= {_n(ridge)})",
            answer,
            "choice",
        ),
    ]
    inputs = {
        "model": model.id,
        "gpu": gpu.id,
        "prompt_tokens": s.prompt_tokens,
        "context_tokens": s.context_tokens,
        "batch": s.batch,
        "weights_dtype": s.weights_dtype,
        "kv_dtype": s.kv_dtype,
    }
    choice = PHASE_CHOICES[int(answer)]
    return _exercise("compute_bound_phase", inputs, CHOICE, answer, choice, 0.0, steps, choices=PHASE_CHOICES)


def _build_gqa_saving(model: ModelSpec, gpu: GpuSpec | None, s: _Settings) -> Exercise:
    b = bytes_per_value("bf16")
    mha = mha_equivalent_bytes_per_token(model, bytes_per_value=b)
    real = kv_bytes_per_token(model, bytes_per_value=b)
    answer = float(cache_reduction_factor(real, baseline_bytes_per_token=mha))
    steps = [
        _step(
            "mha_bytes_per_token",
            "2 * L * H * d_head * b",
            f"2 * {model.num_hidden_layers} * {model.num_attention_heads} * {model.head_dim} * {_n(b)}",
            mha,
            "B/token",
        ),
        *_per_token_steps(model, b, tp=1),
    ]
    steps.append(_step("ratio", "mha_bytes_per_token / bytes_per_token", f"{_n(mha)} / {_n(real)}", answer, "x"))
    return _exercise("gqa_saving", {"model": model.id}, RATIO, answer, "x", 0.01, steps)


_BUILDERS: dict[str, Callable[[ModelSpec, GpuSpec | None, _Settings], Exercise]] = {
    "bytes_per_token": _build_bytes_per_token,
    "sequence_cache": _build_sequence_cache,
    "users_fit": _build_users_fit,
    "weights_memory": _build_weights_memory,
    "decode_ms_per_token": _build_decode,
    "prefill_ttft": _build_prefill,
    "compute_bound_phase": _build_phase,
    "gqa_saving": _build_gqa_saving,
    "max_context": _build_max_context,
}
_DRAWERS: dict[str, Callable[[np.random.Generator, ModelSpec, GpuSpec], dict[str, Any] | None]] = {
    "bytes_per_token": _draw_bytes_per_token,
    "sequence_cache": _draw_sequence_cache,
    "users_fit": _draw_users_fit,
    "weights_memory": _draw_weights_memory,
    "decode_ms_per_token": _draw_decode,
    "prefill_ttft": _draw_prefill,
    "compute_bound_phase": _draw_phase,
    "gqa_saving": _draw_gqa_saving,
    "max_context": _draw_max_context,
}


# ---------------------------------------------------------------- steps shared by several topics


def _budget_steps(model: ModelSpec, gpu: GpuSpec, s: _Settings) -> list[Step]:
    """VRAM · u, the weights on one GPU, and the KV budget left after them and the overhead (seed 000), in GiB or GB."""
    scale = s.scale
    usable = gpu.memory_bytes * s.utilization / scale.bytes
    weights = _weights_per_gpu_bytes(model, s) / scale.bytes
    budget = _budget_bytes(model, gpu, s) / scale.bytes
    overhead = s.overhead_gib * GiB / scale.bytes
    unit = scale.unit
    params = _n(float(model.total_params or 0.0))
    per_gpu_sym, per_gpu_sub = (" / n_gpu", f" / {s.gpus}") if s.gpus > 1 else ("", "")
    return [
        _step("usable_memory", "VRAM * u", f"{_n(gpu.memory_bytes / scale.bytes)} * {_n(s.utilization)}", usable, unit),
        _step("weights", "W", _n(weights), weights, scale.unit)
        if s.weights_gib is not None
        else _step(
            "weights",
            f"N * b_w{per_gpu_sym} / {scale.power}",
            f"{params} * {_n(s.b_w)}{per_gpu_sub} / {scale.power}",
            weights,
            scale.unit,
        ),
        _step(
            "kv_budget",
            "usable_memory - weights" + (" - overhead" if s.overhead_gib > 0 else ""),
            f"{_n(usable)} - {_n(weights)}" + (f" - {_n(overhead)}" if s.overhead_gib > 0 else ""),
            budget,
            scale.unit,
        ),
    ]


def _kinds(model: ModelSpec) -> dict[str, tuple[Any, int]]:
    """Layer kind → (its LayerSpec, how many layers), in order of first appearance."""
    return {layer.kind: (layer, n) for layer, n in model.layer_counts().items()}


def _layers_symbol(kind: str, kinds: Mapping[str, Any]) -> str:
    return "L" if len(kinds) == 1 else f"L_{kind}"


def _per_token_steps(model: ModelSpec, b: float, *, tp: int) -> list[Step]:
    """Bytes one token adds to one GPU's cache, kind by kind, then their sum (``course.worked``; the last step)."""
    return _steps(worked.kv_per_token_steps(model, bytes_per_value=b, tp=tp))


def _sequence_steps(model: ModelSpec, context: int, b: float, *, tp: int) -> list[Step]:
    """Bytes of one sequence of `context` tokens on one GPU, kind by kind, then their sum (``course.worked``)."""
    return _steps(worked.kv_sequence_steps(model, context_tokens=context, bytes_per_value=b, tp=tp))


def _steps(lines: Sequence[WorkedStep]) -> list[Step]:
    """The worked lines of ``course.worked`` as the exercise's Steps (the same symbols, numbers and values)."""
    return [_step(line.name, line.symbolic, line.substituted, line.value, line.unit) for line in lines]


def _prefill_flops_steps(model: ModelSpec, prompt: int, flops: float) -> list[Step]:
    """2 · N_active · n for the matmuls, 4 · H · d_head per causal (query, key) pair for attention, and their sum."""
    kinds = _kinds(model)
    active = float(model.active_params or 0.0)
    linear = 2.0 * active * prompt
    steps = [_step("matmul_flops", "2 * N_active * n", f"2 * {_n(active)} * {prompt}", linear, "FLOP")]
    terms = []
    for kind, (layer, n) in kinds.items():
        if kind == "linear":
            continue
        L = _layers_symbol(kind, kinds)
        pairs = n * float(attention_pairs(layer, prompt))
        if kind == "sliding":
            window = layer.sliding_window
            m = min(prompt, window or 0)
            symbolic = f"{L} * (m * (m + 1) / 2 + (n - m) * W)"
            substituted = f"{n} * ({m} * ({m} + 1) / 2 + ({prompt} - {m}) * {window})"
        else:
            symbolic = f"{L} * n * (n + 1) / 2"
            substituted = f"{n} * {prompt} * ({prompt} + 1) / 2"
        terms.append((f"pairs_{kind}", symbolic, substituted, pairs))
    total_pairs = sum(value for *_, value in terms)
    if len(terms) == 1:
        _, symbolic, substituted, _ = terms[0]
        steps.append(_step("attention_pairs", symbolic, substituted, total_pairs, "pairs"))
    elif terms:
        steps += [_step(name, symbolic, substituted, value, "pairs") for name, symbolic, substituted, value in terms]
        steps.append(
            _step(
                "attention_pairs",
                " + ".join(name for name, *_ in terms),
                " + ".join(_n(value) for *_, value in terms),
                total_pairs,
                "pairs",
            )
        )
    attention = flops - linear
    heads, head_dim = model.num_attention_heads, model.head_dim
    steps.append(
        _step(
            "attention_flops",
            "4 * H * d_head * attention_pairs",
            f"4 * {heads} * {head_dim} * {_n(total_pairs)}",
            attention,
            "FLOP",
        )
    )
    steps.append(
        _step("prefill_flops", "matmul_flops + attention_flops", f"{_n(linear)} + {_n(attention)}", flops, "FLOP")
    )
    return steps


# ---------------------------------------------------------------- small helpers


def _step(name: str, symbolic: str, substituted: str, value: float, unit: str) -> Step:
    return Step(name=name, symbolic=symbolic, substituted=substituted, value=float(value), unit=unit)


def _exercise(
    topic: str,
    inputs: Mapping[str, Any],
    dimension: str,
    answer: float,
    unit: str,
    tolerance: float,
    steps: Sequence[Step],
    *,
    choices: tuple[str, ...] = (),
    factors: Mapping[str, float] | None = None,
) -> Exercise:
    return Exercise(
        topic=topic,
        inputs=dict(inputs),
        dimension=dimension,
        answer_value=float(answer),
        answer_unit=unit,
        tolerance_rel=tolerance,
        steps=tuple(steps),
        choices=choices,
        factors=dict(factors or {}),
    )


def _gqa_factor(model: ModelSpec) -> dict[str, float]:
    """The GQA group size (query heads per KV head) when it is a slip worth recognising."""
    if model.attention_type in ("GQA", "MQA"):
        return {"gqa_group": model.num_attention_heads / model.num_key_value_heads}
    return {}


def _check_topic(topic: str) -> None:
    if topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r}: use one of {', '.join(TOPICS)}")


# ---------------------------------------------------------------- lesson topics: asked on one lesson's page only

#: Topics one lesson asks in its "predict, then reveal" box, each built by its own function below.
#: They stay out of ``TOPICS``: ``exercise_for`` and the exercise sets keep to the nine above, so
#: set 7 stays set 7.
LESSON_TOPICS: tuple[str, ...] = ("score_matrix_bytes",)


def score_matrix_exercise(
    model: ModelSpec,
    *,
    tokens: int,
    heads: int | None = None,
    batch: int = 1,
    dtype: str = "bf16",
    memory_unit: str = "GiB",
) -> Exercise:
    """Memory of standard attention's n × n score matrix in one layer, the matrix FlashAttention never writes.

    Formula: n² · b · H · B [bytes] (``attention.prefill_attention_memory``'s temporary
    bytes without FlashAttention: one layer at a time, H query heads, B sequences),
    answered in GiB from 1 GiB up, else in MiB (GB and MB with ``memory_unit="GB"``), within 3 %.
    H defaults to the model's query heads; b is the bytes per value of `dtype`. Source: Dao et al. 2022,
    FlashAttention (arXiv:2205.14135), §3; course seed 000.

    >>> llama = ModelSpec(id="llama", name="Llama", num_hidden_layers=32, num_attention_heads=32,
    ...                   num_key_value_heads=8, head_dim=128)
    >>> exercise = score_matrix_exercise(llama, tokens=8192)
    >>> exercise.answer_value, exercise.answer_unit  # 8192² · 2 · 32 bytes
    (4.0, 'GiB')
    """
    from kvcore import attention_scores_bytes, prefill_attention_memory  # only this topic needs them

    b = bytes_per_value(dtype)
    head_count = model.num_attention_heads if heads is None else _whole("heads", heads)
    n, sequences = _whole("tokens", tokens), _whole("batch", batch)
    memory = prefill_attention_memory(
        model, tokens=n, flash=False, heads=head_count, batch=sequences, bytes_per_value=b
    )
    total = float(memory.temporary_bytes)
    one_head = float(attention_scores_bytes(n, bytes_per_value=b))
    scale = memory_scale(memory_unit)
    unit, size, power = (
        (scale.unit, scale.bytes, scale.power)
        if total >= scale.bytes
        else (scale.medium_unit, scale.medium_bytes, scale.medium_power)
    )
    batch_sym, batch_sub = (" * B", f" * {sequences}") if sequences > 1 else ("", "")
    steps = [
        _step("score_matrix_head", "n^2 * b", f"{n}^2 * {_n(b)}", one_head, "B"),
        _step(
            "score_matrix",
            f"score_matrix_head * H{batch_sym}",
            f"{_n(one_head)} * {head_count}{batch_sub}",
            total,
            "B",
        ),
        _step(f"score_matrix_{unit.lower()}", f"score_matrix / {power}", f"{_n(total)} / {power}", total / size, unit),
    ]
    inputs = {"model": model.id, "tokens": n, "heads": head_count, "batch": sequences, "dtype": dtype_name(dtype)}
    inputs |= {"memory_unit": memory_unit} if memory_unit != "GiB" else {}
    factors = {
        **({"heads": float(head_count)} if head_count > 1 else {}),
        **({"batch": float(sequences)} if sequences > 1 else {}),
        "score_and_softmax": 2.0,  # S and P = softmax(S) are both n × n: counting both doubles the figure
    }
    return _exercise("score_matrix_bytes", inputs, MEMORY, total / size, unit, 0.03, steps, factors=factors)
