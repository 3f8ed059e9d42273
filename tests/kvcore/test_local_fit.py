"""What fits on my machine: llama.cpp's whole requirement per context, the memory a GPU offers, the longest context.

kvcore.llamacpp (gguf_weights_bytes, llamacpp_memory_bytes, llamacpp_required_bytes, llamacpp_max_context,
metal_working_set_bytes) and kvcore.ollama.ollama_library.
"""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore.llamacpp import (
    GGUF_BITS_PER_WEIGHT,
    gguf_weights_bytes,
    llamacpp_max_context,
    llamacpp_memory_bytes,
    llamacpp_required_bytes,
    llamacpp_startup,
    metal_working_set_bytes,
)
from kvcore.ollama import ollama_library
from kvcore.units import GiB

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()


def test_a_gguf_file_weighs_its_bits_per_weight_times_the_parameters():
    model = MODELS["llama-3.1-8b"]
    assert gguf_weights_bytes(model, "Q8_0") == pytest.approx(model.total_params * 8.5 / 8)
    assert gguf_weights_bytes(model, "f16") == pytest.approx(2 * model.total_params)  # the type's case is free
    assert gguf_weights_bytes(model) == pytest.approx(model.total_params * GGUF_BITS_PER_WEIGHT["Q4_K_M"] / 8)


def test_an_unknown_gguf_type_is_an_input_error():
    with pytest.raises(kvcore.KvError) as raised:
        gguf_weights_bytes(MODELS["llama-3.1-8b"], "Q9_X")
    assert raised.value.code == "llamacpp_unknown_gguf_type"


def test_apple_silicon_offers_metals_working_set_and_a_card_what_its_driver_reports():
    # 128 GiB unified memory → 3/4 = 96 GiB (recommendedMaxWorkingSetSize 103079.22 MB in ggml-metal logs).
    assert llamacpp_memory_bytes(GPUS["m4-max-128gb"]) == 96 * GiB
    assert llamacpp_memory_bytes(GPUS["m4-pro-64gb"]) == metal_working_set_bytes(64 * GiB) == 48 * GiB
    card = GPUS["rtx-3060-12gb"]
    assert llamacpp_memory_bytes(card) == card.reported_memory_bytes
    assert llamacpp_memory_bytes(card, gpu_count=2) == 2 * card.reported_memory_bytes


def test_the_metal_working_set_is_the_one_ollama_reads():
    # Moved from kvcore.ollama to kvcore.llamacpp: one function, both names.
    assert kvcore.ollama.metal_working_set_bytes is metal_working_set_bytes is kvcore.metal_working_set_bytes


@pytest.mark.parametrize(("gpu", "library"), [("rtx-4090", "cuda"), ("mi300x", "rocm"), ("m3-max-128gb", "metal")])
def test_ollama_names_the_library_of_each_gpu(gpu, library):
    assert ollama_library(GPUS[gpu]) == library
    assert ollama_library(None) == "cpu"


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gemma-3-27b", "qwen3-next-80b-a3b", "deepseek-v2-lite"])
def test_the_requirement_is_the_sum_the_start_up_tests(model):
    spec, gpu = MODELS[model], GPUS["rtx-4090"]
    startup = llamacpp_startup(spec, ctx_size=16384, parallel=2, cache_type_k="q8_0", cache_type_v="q8_0", gpu=gpu)
    [need] = llamacpp_required_bytes(spec, ctx_size=[16384], parallel=2, cache_type_k="q8_0", cache_type_v="q8_0")
    assert need == pytest.approx(
        startup.weights_bytes + startup.kv_bytes + startup.recurrent_bytes + startup.compute_bytes
    )
    assert startup.fits == (need <= gpu.memory_bytes)  # the start-up's own test, against the nominal memory


def test_the_requirement_keeps_the_shape_of_its_contexts_and_never_falls():
    contexts = np.array([[1024, 2048], [4096, 65536]])
    need = llamacpp_required_bytes(MODELS["gemma-3-12b"], ctx_size=contexts)
    assert need.shape == (2, 2)
    assert np.all(np.diff(need.ravel()) >= 0)


def test_given_weights_replace_the_estimate():
    model = MODELS["llama-3.1-8b"]
    estimated = llamacpp_required_bytes(model, ctx_size=4096, gguf_type="Q4_K_M")
    given = llamacpp_required_bytes(model, ctx_size=4096, weights_bytes=5 * GiB)
    assert given - estimated == pytest.approx(5 * GiB - gguf_weights_bytes(model, "Q4_K_M"))


def test_the_longest_context_fits_and_one_step_more_does_not():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-3060-12gb"]
    longest = llamacpp_max_context(model, gpu=gpu)
    assert 8192 < longest < model.max_position_embeddings and longest % 256 == 0
    memory = llamacpp_memory_bytes(gpu)
    assert llamacpp_required_bytes(model, ctx_size=longest) <= memory
    assert llamacpp_required_bytes(model, ctx_size=longest + 256) > memory


def test_a_q8_0_cache_and_fewer_slots_buy_a_longer_context():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-3060-12gb"]
    f16 = llamacpp_max_context(model, gpu=gpu)
    q8 = llamacpp_max_context(model, gpu=gpu, cache_type_k="q8_0", cache_type_v="q8_0")
    four = llamacpp_max_context(model, gpu=gpu, parallel=4)
    assert q8 > f16 > four > 0


def test_a_context_per_slot_counts_every_slot():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-3060-12gb"]
    longest = llamacpp_max_context(model, gpu=gpu, parallel=2)
    need = llamacpp_required_bytes(model, ctx_size=2 * longest, parallel=2)
    assert need <= llamacpp_memory_bytes(gpu) < llamacpp_required_bytes(model, ctx_size=2 * (longest + 256), parallel=2)


def test_weights_beyond_the_working_set_fit_on_no_mac_though_the_memory_is_larger():
    # Llama 3.1 70B at Q6_K ≈ 70.6e9 · 6.56 / 8 ≈ 53.9 GiB: under 64 GiB of unified memory, over Metal's 48 GiB.
    model, mac = MODELS["llama-3.1-70b"], GPUS["m4-pro-64gb"]
    assert 48 * GiB < gguf_weights_bytes(model, "Q6_K") < 64 * GiB
    assert llamacpp_max_context(model, gpu=mac, gguf_type="Q6_K") == 0
    assert llamacpp_max_context(model, gpu=mac, gguf_type="Q4_K_M") > 16384


def test_a_model_too_big_for_the_card_has_no_context():
    assert llamacpp_max_context(MODELS["llama-3.1-70b"], gpu=GPUS["rtx-3060-12gb"]) == 0
