"""llama.cpp's requirement over an array of contexts equals one start-up per context, to the byte (kvcore.llamacpp)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import kvcore
from kvcore.errors import KvError
from kvcore.llamacpp import (
    MODELLED_LLAMACPP_BUILDS,
    gguf_weights_bytes,
    llamacpp_max_context,
    llamacpp_memory_bytes,
    llamacpp_required_bytes,
    llamacpp_startup,
)

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
#: One model per kind of cache: full attention, sliding only, full + sliding (iSWA), MLA, full + recurrent layers.
KINDS = ("llama-3.1-8b", "mistral-7b-v0.1", "gemma-2-9b", "deepseek-v2-lite", "qwen3-next-80b-a3b")
#: Contexts on both sides of every padding llama.cpp has used (32 without flash attention, 256 with, none),
#: of the default batch (2048) and micro-batch (512), and not divisible by 3 or 4 slots.
CONTEXTS = np.array(
    [1, 2, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 8193, 40000, 131073]
)
#: Builds on each side of the rule changes, the oldest and the newest modelled.
BUILDS = (3600, 5449, 5450, 5509, 5510, 5899, 5900, 6849, 6850, 6969, 6970, 7870, 11312)


def one_start_up_each(model, contexts, **flags) -> np.ndarray:
    """The requirement as llama.cpp would size it, one llamacpp_startup per context (what the array must equal)."""
    weights = gguf_weights_bytes(model, "Q4_K_M")
    rest = []
    for ctx in np.asarray(contexts).ravel():
        startup = llamacpp_startup(model, ctx_size=int(ctx), **flags)
        rest.append(float(startup.kv_bytes + startup.recurrent_bytes) + startup.compute_bytes)
    return weights + np.array(rest, dtype=float).reshape(np.shape(contexts))


def outcome(compute):
    """What a call gives: its array, or the code and message of the KvError it raises."""
    try:
        return compute()
    except KvError as error:
        return (error.code, str(error))


def test_the_boundary_builds_are_modelled_ones_or_lie_between_them():
    assert min(BUILDS) == min(MODELLED_LLAMACPP_BUILDS) and max(BUILDS) == max(MODELLED_LLAMACPP_BUILDS)


@pytest.mark.parametrize("model_id", KINDS)
def test_the_requirement_over_many_contexts_equals_one_start_up_per_context(model_id):
    model = MODELS[model_id]
    compared = 0
    flag_grid = itertools.product(BUILDS, (1, 3, 4), (False, True), (None, False), (False, True), ("f16", "q8_0"))
    for build, parallel, unified, flash_attn, swa_full, cache in flag_grid:
        flags = {
            "build": build,
            "parallel": parallel,
            "kv_unified": unified,
            "flash_attn": flash_attn,
            "swa_full": swa_full,
            "cache_type_k": cache,
            "cache_type_v": cache,
        }
        expected = outcome(lambda: one_start_up_each(model, CONTEXTS, **flags))  # noqa: B023
        computed = outcome(lambda: llamacpp_required_bytes(model, ctx_size=CONTEXTS, **flags))  # noqa: B023
        if isinstance(expected, tuple):  # refused (a quantised V cache without flash attention): refused alike
            assert computed == expected, flags
            continue
        assert np.array_equal(computed, expected), flags
        compared += 1
    assert compared > 300


def test_an_array_of_contexts_keeps_its_shape_and_one_context_gives_one_value():
    model = MODELS["gemma-2-9b"]
    grid = CONTEXTS[:20].reshape(4, 5)
    need = llamacpp_required_bytes(model, ctx_size=grid, parallel=2)
    assert need.shape == (4, 5) and np.array_equal(need, one_start_up_each(model, grid, parallel=2))
    assert float(llamacpp_required_bytes(model, ctx_size=8192)) == float(one_start_up_each(model, [8192])[0])
    assert llamacpp_required_bytes(model, ctx_size=[]).shape == (0,)


def test_a_context_refused_later_in_the_array_raises_its_own_start_ups_error():
    model = MODELS["llama-3.1-8b"]
    with pytest.raises(KvError) as own:
        llamacpp_startup(model, ctx_size=0)
    with pytest.raises(KvError) as in_array:
        llamacpp_required_bytes(model, ctx_size=[4096, 8192, 0])
    assert (in_array.value.code, str(in_array.value)) == (own.value.code, str(own.value))


def test_a_context_with_no_cell_per_sequence_is_refused_as_at_start_up():
    # ≥ ≈b6970: n_ctx = PAD(300, 256) = 512 cells over 600 sequences leaves PAD(0, 256) = 0 per sequence
    model = MODELS["llama-3.1-8b"]
    with pytest.raises(KvError) as raised:
        llamacpp_required_bytes(model, ctx_size=[1_000_000, 300], parallel=600)
    assert raised.value.code == "llamacpp_ctx_seq_zero"


def test_a_flag_llama_cpp_refuses_is_refused_for_the_whole_array():
    with pytest.raises(KvError) as raised:
        llamacpp_required_bytes(MODELS["llama-3.1-8b"], ctx_size=CONTEXTS, cache_type_v="q4_0", flash_attn=False)
    assert raised.value.code == "llamacpp_quantized_v_needs_flash_attn"


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "slots", "cache"),
    [
        ("llama-3.1-8b", "rtx-3060-12gb", 1, "f16"),
        ("llama-3.1-8b", "rtx-4090", 4, "q8_0"),
        ("gemma-2-9b", "rtx-3060-12gb", 2, "q4_0"),
        ("deepseek-v2-lite", "m4-max-128gb", 1, "f16"),
        ("qwen3-next-80b-a3b", "m4-max-128gb", 8, "q8_0"),
    ],
)
def test_the_longest_context_fits_by_its_own_start_up_and_one_step_more_does_not(model_id, gpu_id, slots, cache):
    model, gpu = MODELS[model_id], GPUS[gpu_id]
    flags = {"parallel": slots, "cache_type_k": cache, "cache_type_v": cache}
    longest = llamacpp_max_context(model, gpu=gpu, step_tokens=256, **flags)
    memory = llamacpp_memory_bytes(gpu)
    assert longest % 256 == 0 and longest <= model.max_position_embeddings
    if longest:
        assert one_start_up_each(model, [longest * slots], **flags)[0] <= memory
    if longest < model.max_position_embeddings:
        assert one_start_up_each(model, [(longest + 256) * slots], **flags)[0] > memory
