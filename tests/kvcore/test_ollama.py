"""kvcore.ollama: Ollama's settings per release, its scheduler estimate, the cache it allocates, its lines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvcore.data import load_gpus, load_models
from kvcore.errors import KvError
from kvcore.ollama import (
    OLLAMA_DEFAULT_RELEASE,
    OLLAMA_MARKERS,
    OLLAMA_RELEASES,
    human_bytes2,
    metal_working_set_bytes,
    ollama_engine_cache,
    ollama_graph_bytes,
    ollama_kv_estimate_bytes,
    ollama_max_context,
    ollama_release,
    ollama_required_bytes,
    ollama_startup,
    parse_ollama_log,
    reconcile_ollama,
)
from kvcore.units import GiB, MiB

MODELS = load_models()
GPUS = load_gpus()


# ---------------------------------------------------------------- format.HumanBytes2 (format/bytes_test.go cases)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (1048575, "1024.0 KiB"),
        (1048576, "1.0 MiB"),
        (1073741823, "1024.0 MiB"),
        (1073741824, "1.0 GiB"),
        (1610612736, "1.5 GiB"),
    ],
)
def test_sizes_print_as_ollamas_human_bytes2(value, text):
    assert human_bytes2(value) == text


# ---------------------------------------------------------------- the rules of each release


def test_the_default_release_is_the_newest_modelled():
    assert OLLAMA_RELEASES[-1] == OLLAMA_DEFAULT_RELEASE
    assert ollama_release().version == OLLAMA_DEFAULT_RELEASE


@pytest.mark.parametrize(("version", "num_ctx"), [("0.3.10", 2048), ("0.6.6", 2048), ("0.6.7", 4096), ("0.15.4", 4096)])
def test_the_default_context_changed_in_0_6_7(version, num_ctx):
    assert ollama_release(version).default_num_ctx == num_ctx


@pytest.mark.parametrize(("gpu", "num_ctx"), [("rtx-3060-12gb", 4096), ("rtx-4090", 32768), ("a100-80gb", 262144)])
def test_from_0_15_5_the_default_context_follows_the_vram(gpu, num_ctx):
    assert ollama_release("0.15.5").default_num_ctx is None
    start = ollama_startup(MODELS["qwen3-8b"], gpu=GPUS[gpu], version="0.15.5", num_parallel=1)
    assert start.num_ctx == min(num_ctx, MODELS["qwen3-8b"].max_position_embeddings)


def test_parallel_was_automatic_until_0_10_0():
    assert ollama_release("0.9.0").default_num_parallel is None
    assert ollama_release("0.10.0").default_num_parallel == 1
    # An automatic OLLAMA_NUM_PARALLEL tries 4 (2 from 0.6.7) and falls back to 1 when it does not fit.
    small = ollama_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-3090"], version="0.5.7")
    assert small.num_parallel == 4 and small.num_ctx == 2048
    big = ollama_startup(MODELS["llama-3.1-70b"], gpu=GPUS["rtx-3090"], version="0.5.7")
    assert big.num_parallel == 1


def test_the_context_is_cut_to_the_trained_length_from_0_10_0():
    phi = MODELS["phi-2"]
    assert ollama_startup(phi, num_ctx=8192, version="0.9.0").num_ctx == 8192
    assert ollama_startup(phi, num_ctx=8192, version="0.10.0").num_ctx == phi.max_position_embeddings


def test_an_unknown_release_or_cache_type_is_a_kv_error_with_a_code():
    with pytest.raises(KvError) as caught:
        ollama_release("latest")
    assert caught.value.code == "ollama_unknown_release"
    with pytest.raises(KvError) as caught:
        ollama_startup(MODELS["llama-3.1-8b"], kv_cache_type="q5_1")
    assert caught.value.code == "ollama_unknown_cache_type"
    with pytest.raises(KvError) as caught:
        ollama_startup(MODELS["llama-3.1-8b"], kv_cache_type="q8_0", version="0.4.0")
    assert caught.value.code == "ollama_cache_type_unsupported"


# ---------------------------------------------------------------- the estimate


def test_the_estimate_counts_2_1_and_half_a_byte_per_value():
    model = MODELS["llama-3.1-8b"]
    f16, q8, q4 = (
        ollama_kv_estimate_bytes(model, num_ctx=4096, kv_cache_type=t, release="0.9.0").sum()
        for t in ("f16", "q8_0", "q4_0")
    )
    assert f16 == 4096 * 32 * 2 * 8 * 128 * 2  # 512 MiB
    assert (q8, q4) == (f16 / 2, f16 / 4)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=64), st.integers(min_value=1, max_value=4))
def test_the_estimate_grows_linearly_with_the_context_of_every_slot(kilotokens, parallel):
    model = MODELS["qwen2.5-7b"]
    one = ollama_kv_estimate_bytes(model, num_ctx=1024, num_parallel=1, release="0.9.0").sum()
    many = ollama_kv_estimate_bytes(model, num_ctx=1024 * kilotokens, num_parallel=parallel, release="0.9.0").sum()
    assert many == one * kilotokens * parallel


def test_gemma3s_sliding_layers_stop_growing_at_the_window_in_the_estimate():
    model = MODELS["gemma-3-12b"]
    short = ollama_kv_estimate_bytes(model, num_ctx=8192, release="0.9.0")
    long = ollama_kv_estimate_bytes(model, num_ctx=32768, release="0.9.0")
    sliding = np.array([layer.kind == "sliding" for layer in model.layers])
    assert np.array_equal(short[sliding], long[sliding])  # (1024 + 512) tokens each
    assert np.array_equal(long[~sliding], 4 * short[~sliding])
    # Before 0.6.0 the estimate counted every layer at the full context.
    assert (ollama_kv_estimate_bytes(model, num_ctx=8192, release="0.5.7") == short.max()).all()


def test_the_estimate_is_vectorised_over_num_ctx():
    model = MODELS["llama-3.1-8b"]
    ctx = np.array([2048, 4096, 8192])
    kv = ollama_kv_estimate_bytes(model, num_ctx=ctx)
    assert kv.shape == (3, 32)
    need = ollama_required_bytes(model, num_ctx=ctx)
    assert need.shape == (3,) and np.all(np.diff(need) > 0)


def test_the_llama_graph_estimate_matches_its_formula():
    # llama: full = max(4b(1 + 4e + c(1 + h)), 4b(e + v)) = 4·512·(1 + 16384 + 8192·33) = 560.0 MiB (many logs).
    partial, full = ollama_graph_bytes(MODELS["llama-3.1-8b"], num_ctx=2048, num_parallel=4)
    assert full == 4 * 512 * (1 + 4 * 4096 + 8192 * 33)
    assert partial > full
    metal = ollama_graph_bytes(MODELS["llama-3.1-8b"], num_ctx=2048, num_parallel=4, library="metal")
    assert metal == (full, full)


def test_a_model_without_a_graph_formula_takes_gqa_times_kv_over_6():
    model = MODELS["phi-4"]  # GGUF architecture phi3: no case in GraphSize
    kv = ollama_kv_estimate_bytes(model, num_ctx=2048).sum()
    assert ollama_graph_bytes(model, num_ctx=2048) == (4 * kv // 6, 4 * kv // 6)  # 40 heads / 10 KV heads


def test_more_layers_go_to_the_cpu_as_the_context_grows():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-3060-12gb"]
    short = ollama_startup(model, gpu=gpu, num_ctx=8192, version="0.9.0", num_parallel=1)
    long = ollama_startup(model, gpu=gpu, num_ctx=131072, version="0.9.0", num_parallel=1)
    assert short.fits and short.estimate.fully_offloaded
    assert not long.fits and long.estimate.layers_offload < long.estimate.layers_model
    assert long.estimate.required_full_bytes > long.estimate.required_partial_bytes


# ---------------------------------------------------------------- settings → engine


def test_a_quantised_cache_needs_flash_attention():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-4090"]
    without = ollama_startup(model, gpu=gpu, kv_cache_type="q8_0", num_ctx=8192, version="0.9.0")
    assert (without.requested_kv_cache_type, without.kv_cache_type, without.flash_attention) == ("q8_0", "f16", False)
    with_fa = ollama_startup(model, gpu=gpu, kv_cache_type="q8_0", flash_attention=True, num_ctx=8192, version="0.9.0")
    assert with_fa.kv_cache_type == "q8_0"


def test_mla_models_and_gemma2_get_no_flash_attention_so_no_quantised_cache():
    for name, version in (("deepseek-v2-lite", "0.9.0"), ("gemma-2-9b", "0.12.4")):
        start = ollama_startup(
            MODELS[name],
            gpu=GPUS["a100-80gb"],
            kv_cache_type="q8_0",
            flash_attention=True,
            version=version,
            num_ctx=4096,
        )
        assert (start.flash_attention, start.kv_cache_type) == (False, "f16"), name


def test_flash_attention_is_on_by_default_for_gpt_oss_from_0_12_4():
    model = MODELS["gpt-oss-20b"]
    assert not ollama_startup(model, gpu=GPUS["rtx-4090"], version="0.12.3").flash_attention
    assert ollama_startup(model, gpu=GPUS["rtx-4090"], version="0.12.4").flash_attention


def test_the_llama_engine_allocates_num_ctx_times_parallel_cells_at_ggmls_q8_0_size():
    model = MODELS["llama-3.1-8b"]
    start = ollama_startup(
        model,
        gpu=GPUS["rtx-4090"],
        num_ctx=8192,
        num_parallel=2,
        kv_cache_type="q8_0",
        flash_attention=True,
        version="0.12.4",
    )
    assert start.runner == "llama" and start.llamacpp is not None
    assert start.llamacpp.ctx_size == 16384 and start.llamacpp.parallel == 2
    # q8_0: 34 bytes per 32 values allocated, 1 byte per value estimated → 6.25 % more than Ollama planned.
    assert start.kv_pool_bytes == pytest.approx(start.estimate.kv_bytes * 34 / 32)
    assert start.as_json()["estimate_vs_allocated_kv_bytes"] == pytest.approx(start.estimate.kv_bytes / 16)


def test_the_ollama_engine_pads_cells_and_keeps_the_gpt_oss_window_at_4096():
    cells, layer_bytes = ollama_engine_cache(MODELS["gpt-oss-20b"], num_ctx=8000, flash_attention=True)
    assert set(cells[0::2]) == {4096 + 512} and set(cells[1::2]) == {8192}  # roundUp(8000, 256)
    assert layer_bytes[1] == 8192 * 2 * 8 * 64 * 2
    cells, _ = ollama_engine_cache(MODELS["gpt-oss-20b"], num_ctx=8000, flash_attention=False)
    assert set(cells[1::2]) == {8000}  # roundUp(8000, 32)


def test_from_0_30_0_every_model_runs_in_llama_server():
    start = ollama_startup(MODELS["gemma-3-12b"], gpu=GPUS["rtx-3060-12gb"])
    assert start.runner == "llama-server" and start.estimate is None
    assert start.llamacpp.ctx_size == start.num_ctx * start.num_parallel
    assert start.lines() == start.llamacpp.lines()


# ---------------------------------------------------------------- what fits on my machine


def test_apple_silicon_gives_metal_two_thirds_up_to_32_gib_and_three_quarters_above():
    assert metal_working_set_bytes(16 * GiB) == pytest.approx(16 * GiB * 2 / 3)
    assert metal_working_set_bytes(128 * GiB) == 96 * GiB


def test_a_q8_0_cache_and_fewer_slots_buy_a_longer_context():
    model, gpu = MODELS["llama-3.1-8b"], GPUS["rtx-3060-12gb"]
    f16 = ollama_max_context(model, gpu=gpu)
    q8 = ollama_max_context(model, gpu=gpu, kv_cache_type="q8_0")
    four = ollama_max_context(model, gpu=gpu, num_parallel=4)
    assert q8 > f16 > four > 0
    assert ollama_required_bytes(model, num_ctx=f16) < gpu.reported_memory_bytes
    assert ollama_required_bytes(model, num_ctx=f16 + 1024) >= gpu.reported_memory_bytes


def test_a_model_too_big_for_the_card_has_no_context():
    assert ollama_max_context(MODELS["llama-3.1-70b"], gpu=GPUS["rtx-3060-12gb"]) == 0
    assert ollama_max_context(MODELS["llama-3.1-70b"], gpu=GPUS["m3-max-128gb"]) > 32768


# ---------------------------------------------------------------- lines, JSON, the contract


def test_the_startup_answers_the_engine_contract():
    start = ollama_startup(MODELS["qwen2.5-7b"], gpu=GPUS["rtx-4090"], num_ctx=8192, version="0.9.0")
    data = start.as_json()
    for key in ("engine", "release", "kv_pool_bytes", "tokens", "fits", "cells", "k_bytes", "v_bytes", "kv_bytes"):
        assert key in data
    assert data["engine"] == "ollama" and data["kv_bytes"] == data["k_bytes"] + data["v_bytes"]
    assert start.max_concurrency(8192) == start.num_parallel and start.max_concurrency(8193) == 0
    assert {term.name for term in start.terms} >= {"weights", "graph", "kv_estimate", "minimum_memory"}
    assert ollama_startup(MODELS["qwen2.5-7b"]).fits  # no GPU: a CPU load


def test_sliding_window_json_has_the_swa_keys():
    data = ollama_startup(MODELS["gemma-3-12b"], gpu=GPUS["rtx-4090"], num_ctx=8192, version="0.12.4").as_json()
    assert data["swa_cells"] == 1024 + 512 and data["swa_layers"] == 40 and data["full_layers"] == 8


@pytest.mark.parametrize(
    ("version", "message"), [("0.5.4", 'msg="offload to cuda" '), ("0.9.0", "msg=offload library=cuda ")]
)
def test_the_estimate_line_has_each_releases_message(version, message):
    start = ollama_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-4090"], num_ctx=4096, num_parallel=1, version=version)
    assert start.lines()[0].startswith(message)
    assert 'memory.required.kv="512.0 MiB"' in start.lines()[0]


def test_the_llama_engine_prints_device_lines_instead_of_the_offload_line_from_0_12_11():
    start = ollama_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-4090"], num_ctx=4096, version="0.12.11")
    lines = start.lines()
    assert not any(line.startswith("msg=offload") for line in lines)
    assert 'msg="kv cache" device=CUDA0 size="512.0 MiB"' in lines


@pytest.mark.parametrize(
    ("name", "version"),
    [("llama-3.1-8b", "0.5.4"), ("gemma-3-12b", "0.9.0"), ("gpt-oss-20b", "0.12.4"), ("qwen2.5-7b", "0.12.11")],
)
def test_printed_lines_read_back_and_reconcile(name, version):
    start = ollama_startup(MODELS[name], gpu=GPUS["rtx-4090"], num_ctx=8192, num_parallel=1, version=version)
    text = "\n".join(start.lines())
    text += f'\nmsg="starting llama server" cmd="ollama runner --ctx-size {start.num_ctx} --parallel 1'
    text += ' --flash-attn"' if start.flash_attention else '"'
    log = parse_ollama_log(text)
    checks = reconcile_ollama(log, MODELS[name], release=version)
    assert checks and all(check.status == "agree" for check in checks), [c for c in checks if c.status != "agree"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400))
def test_the_reader_never_raises(text):
    log = parse_ollama_log(text)
    assert isinstance(log.recognised, tuple)


def test_the_markers_match_ollamas_lines_not_the_llama_cpp_lines_it_relays():
    assert OLLAMA_MARKERS.search("level=INFO source=server.go:130 msg=offload library=cuda layers.model=81")
    assert OLLAMA_MARKERS.search('level=INFO source=device.go:251 msg="kv cache" device=Metal size="1.2 GiB"')
    for line in (
        "llama_kv_cache_init:      CUDA0 KV buffer size =   160.00 MiB",
        "llama_new_context_with_model: KV self size  = 9760.00 MiB, K (f16): 5856.00 MiB, V (f16): 3904.00 MiB",
        "llama_kv_cache: size =  256.00 MiB (  4096 cells,   8 layers,  1/1 seqs), K (f16):  128.00 MiB",
    ):
        assert not OLLAMA_MARKERS.search(line)


def test_a_log_without_settings_cannot_be_checked_and_says_why():
    log = parse_ollama_log('msg=offload library=cuda layers.model=33 memory.required.kv="1.0 GiB"')
    checks = reconcile_ollama(log, MODELS["llama-3.1-8b"])
    assert [check.status for check in checks] == ["cannot_check"]
    assert "num_ctx" in checks[0].reason
    assert reconcile_ollama(log, MODELS["llama-3.1-8b"], num_ctx=8192)[0].status == "agree"
    assert MiB  # the unit the estimate prints
