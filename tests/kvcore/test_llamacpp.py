"""llama.cpp's KV cache sizing, its printed lines and its log reader (kvcore.llamacpp)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore
from kvcore.errors import KvError
from kvcore.llamacpp import (
    LLAMACPP_CACHE_TYPES,
    LLAMACPP_MARKERS,
    MODELLED_LLAMACPP_BUILDS,
    NEWEST_LLAMACPP_BUILD,
    llamacpp_cells,
    llamacpp_layer_widths,
    llamacpp_row_bytes,
    llamacpp_startup,
    parse_llamacpp_log,
    reconcile_llamacpp,
)
from kvcore.units import MiB

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()


# --- rows and cache types -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bytes_per_1024"),
    [
        ("f32", 4096),
        ("f16", 2048),
        ("bf16", 2048),
        ("q8_0", 1088),  # 32 blocks · 34 bytes
        ("q4_0", 576),  # 32 · 18
        ("q4_1", 640),  # 32 · 20
        ("q5_0", 704),  # 32 · 22
        ("q5_1", 768),  # 32 · 24
        ("iq4_nl", 576),  # 32 · 18
    ],
)
def test_row_of_1024_values_follows_ggml_block_sizes(name, bytes_per_1024):
    assert llamacpp_row_bytes(name, 1024) == bytes_per_1024


def test_cache_types_are_the_ones_llama_cpp_accepts():
    assert set(LLAMACPP_CACHE_TYPES) == {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}
    assert LLAMACPP_CACHE_TYPES["q8_0"] == (34, 32)


def test_a_quantised_row_must_hold_whole_blocks():
    with pytest.raises(KvError) as error:
        llamacpp_row_bytes("q4_0", 48)
    assert error.value.code == "llamacpp_row_not_blocks"


def test_unknown_cache_type_is_a_kv_error():
    with pytest.raises(KvError) as error:
        llamacpp_startup(MODELS["llama-3.1-8b"], cache_type_k="q3_k")
    assert error.value.code == "llamacpp_unknown_cache_type"


def test_quantised_v_without_flash_attention_is_refused():
    with pytest.raises(KvError) as error:
        llamacpp_startup(MODELS["llama-3.1-8b"], cache_type_v="q8_0", flash_attn=False)
    assert error.value.code == "llamacpp_quantized_v_needs_flash_attn"


def test_quantised_k_alone_works_without_flash_attention():
    startup = llamacpp_startup(MODELS["llama-3.2-3b"], cache_type_k="q8_0", flash_attn=False)
    # Llama 3.2 3B, 4096 cells, 28 layers, 1024 values: K 28·4096·1088 = 119 MiB, V 28·4096·2048 = 224 MiB.
    assert startup.k_bytes == 119 * MiB
    assert startup.v_bytes == 224 * MiB


# --- cells ----------------------------------------------------------------------------------


def test_newest_build_pads_the_context_to_256():
    assert llamacpp_cells(4000) == (4096, 4096, 1)
    assert llamacpp_cells(4000, flash_attn=False) == (4096, 4096, 1)


def test_newest_build_splits_the_context_over_sequences_and_pads_each():
    # unsloth/unsloth#7530: ctx 1024 with 3 slots allocates 1536 cells, with 4 slots 1024.
    assert llamacpp_cells(1024, parallel=3) == (1536, 512, 3)
    assert llamacpp_cells(1024, parallel=4) == (1024, 256, 4)


def test_unified_cache_keeps_one_stream():
    assert llamacpp_cells(8192, parallel=4, kv_unified=True) == (8192, 8192, 1)


def test_older_builds_pad_to_32_without_flash_attention_and_256_with_it():
    assert llamacpp_cells(4001, flash_attn=False, build=4094) == (4032, 4032, 1)
    assert llamacpp_cells(4001, flash_attn=True, build=4094) == (4096, 4096, 1)


def test_builds_with_streams_round_the_per_sequence_share_up():
    # b6170 create_memory: PAD(⌈5000 / 3⌉, 32) = PAD(1667, 32) = 1696 per stream.
    assert llamacpp_cells(5000, parallel=3, flash_attn=False, build=6170) == (5088, 1696, 3)


def test_before_streams_every_sequence_shares_one_cache():
    assert llamacpp_cells(8192, parallel=4, build=3600) == (8192, 8192, 1)


def test_builds_without_padding_use_the_context_as_given():
    assert llamacpp_cells(5000, parallel=2, build=6900) == (5000, 2500, 2)


# --- sliding windows ------------------------------------------------------------------------


def test_gpt_oss_sliding_layers_hold_window_plus_ubatch_padded():
    startup = llamacpp_startup(MODELS["gpt-oss-20b"], ctx_size=131072, flash_attn=True)
    # 128 + 512 = 640 → PAD 256 = 768 cells; 12 full and 12 sliding layers of 8 · 64 = 512 values.
    assert [cache.cells for cache in startup.caches] == [131072, 768]
    assert [cache.layers for cache in startup.caches] == [12, 12]
    assert startup.full_cache.kv_bytes == 3072 * MiB
    assert startup.swa_cache is not None and startup.swa_cache.kv_bytes == 18 * MiB


def test_b6170_pads_the_window_sum_then_caps_at_the_context():
    startup = llamacpp_startup(MODELS["gpt-oss-20b"], ctx_size=131072, flash_attn=True, build=6170)
    assert startup.swa_cache is not None and startup.swa_cache.cells == 768


def test_swa_full_keeps_every_layer_at_full_length():
    startup = llamacpp_startup(MODELS["gemma-3-12b"], ctx_size=32768, swa_full=True)
    assert [cache.cells for cache in startup.caches] == [32768, 32768]


def test_before_iswa_sliding_layers_take_the_whole_context():
    startup = llamacpp_startup(MODELS["gemma-3-12b"], ctx_size=32768, build=4094, flash_attn=True)
    assert len(startup.caches) == 1 and startup.full_cache.layers == 48


def test_unified_cache_counts_the_window_once_per_sequence():
    separate = llamacpp_startup(MODELS["gemma-3-4b"], ctx_size=32768, parallel=4, flash_attn=True)
    shared = llamacpp_startup(MODELS["gemma-3-4b"], ctx_size=32768, parallel=4, kv_unified=True, flash_attn=True)
    # separate: 4 streams of PAD(1024 + 512, 256) = 1536; unified: one of PAD(4 · 1024 + 512, 256) = 4608.
    assert separate.swa_cache is not None and (separate.swa_cache.cells, separate.swa_cache.streams) == (1536, 4)
    assert shared.swa_cache is not None and (shared.swa_cache.cells, shared.swa_cache.streams) == (4608, 1)


# --- MLA ------------------------------------------------------------------------------------


def test_mla_storage_changed_across_builds():
    model = MODELS["deepseek-v3"]
    assert set(llamacpp_layer_widths(model, build=4094)) == {("full", 128 * 192, 128 * 128)}
    assert set(llamacpp_layer_widths(model, build=6170)) == {("full", 576, 512)}
    assert set(llamacpp_layer_widths(model)) == {("full", 576, 0)}
    assert set(llamacpp_layer_widths(model, build=6170, mla_gguf=False)) == {("full", 24576, 16384)}


def test_newest_mla_cache_prints_an_empty_v():
    startup = llamacpp_startup(MODELS["deepseek-v3"], ctx_size=8192)
    # 61 layers · 8192 cells · 576 values · 2 bytes = 549 MiB, V none (a view of K).
    assert startup.k_bytes == 549 * MiB and startup.v_bytes == 0
    assert "V (f16):    0.00 MiB" in startup.lines()[-1]


# --- per-layer widths and recurrent state ----------------------------------------------------


def test_layers_with_their_own_kv_head_count_are_summed_one_by_one():
    model = MODELS["llama-3.2-1b"]
    heads = [8] * 8 + [2] * 8
    startup = llamacpp_startup(model, ctx_size=4096, layer_kv_heads=heads, flash_attn=True)
    per_head = 4096 * 64 * 2 * 2  # cells · head_dim · (K + V) · f16
    assert startup.kv_bytes == per_head * sum(heads)


def test_layer_heads_must_list_every_layer():
    with pytest.raises(KvError) as error:
        llamacpp_startup(MODELS["llama-3.2-1b"], layer_kv_heads=[8, 8])
    assert error.value.code == "llamacpp_layer_heads_length"


def test_qwen3_next_caches_only_its_full_attention_layers_plus_a_recurrent_state():
    startup = llamacpp_startup(MODELS["qwen3-next-80b-a3b"], ctx_size=131072, flash_attn=True)
    # 12 of 48 layers attend: 12 · 131072 · 2 · 256 · (K + V) · 2 bytes = 3072 MiB.
    assert startup.full_cache.layers == 12 and startup.kv_bytes == 3072 * MiB
    # 36 Gated DeltaNet layers · 548,864 f32 values of state for one sequence.
    assert startup.recurrent_bytes == 36 * 548864 * 4


# --- the startup object ---------------------------------------------------------------------


def test_as_json_has_the_issue_keys_and_is_plain_json():
    data = llamacpp_startup(MODELS["gemma-3-27b"], ctx_size=32768, gpu=GPUS["rtx-4090"]).as_json()
    for key in ("engine", "release", "kv_pool_bytes", "tokens", "fits", "cells", "k_bytes", "v_bytes", "kv_bytes"):
        assert key in data
    for key in ("swa_cells", "swa_kv_bytes", "full_layers", "swa_layers"):
        assert key in data
    assert data["engine"] == "llama.cpp" and data["release"] == f"b{NEWEST_LLAMACPP_BUILD}"
    json.dumps(data)


def test_tokens_are_cells_times_streams():
    startup = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=8192, parallel=4)
    assert startup.tokens == 8192 and startup.cells == 2048


def test_max_concurrency_shares_a_unified_cache_and_gives_each_stream_one_request():
    shared = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=8192, parallel=4, kv_unified=True)
    separate = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=8192, parallel=4)
    assert shared.max_concurrency(1024) == 8.0
    assert separate.max_concurrency(2048) == 4.0
    assert separate.max_concurrency(2049) == 0.0


def test_without_a_gpu_everything_fits_and_sits_on_the_cpu():
    startup = llamacpp_startup(MODELS["llama-3.1-8b"])
    assert startup.fits and startup.device_kv_bytes == (("CPU", startup.kv_bytes),)
    assert startup.kv_pool_bytes == startup.kv_bytes


def test_a_long_context_does_not_fit_a_small_card():
    small = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=131072, gpu=GPUS["rtx-3060-12gb"])
    short = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=8192, gpu=GPUS["rtx-3060-12gb"])
    assert not small.fits and short.fits
    assert short.weights_estimated


def test_given_weights_replace_the_estimate():
    startup = llamacpp_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-4090"], weights_bytes=30 * 2**30)
    assert not startup.fits and not startup.weights_estimated


def test_layers_left_on_the_cpu_keep_their_kv_there():
    startup = llamacpp_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-4090"], n_gpu_layers=16)
    parts = dict(startup.device_kv_bytes)
    assert parts["CPU"] == parts["CUDA0"] == startup.kv_bytes // 2


def test_two_gpus_split_the_layers():
    startup = llamacpp_startup(MODELS["llama-3.1-8b"], gpu=GPUS["rtx-4090"], gpu_count=2)
    assert dict(startup.device_kv_bytes) == {"CUDA0": startup.kv_bytes // 2, "CUDA1": startup.kv_bytes // 2}
    assert startup.kv_pool_bytes == startup.kv_bytes / 2


def test_every_modelled_build_is_listed_with_what_changed():
    assert max(MODELLED_LLAMACPP_BUILDS) == NEWEST_LLAMACPP_BUILD
    assert all(text for text in MODELLED_LLAMACPP_BUILDS.values())


# --- printed lines --------------------------------------------------------------------------


def test_newest_lines_have_the_size_line_format():
    lines = llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=4096).lines()
    assert lines[-1] == (
        "llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), "
        "K (f16):  256.00 MiB, V (f16):  256.00 MiB"
    )


def test_old_builds_print_kv_self_size():
    lines = llamacpp_startup(MODELS["llama-3-8b"], ctx_size=8192, build=3600, flash_attn=False).lines()
    assert lines[-1] == (
        "llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB"
    )


def test_iswa_lines_name_both_caches():
    lines = llamacpp_startup(MODELS["gpt-oss-20b"], ctx_size=131072, flash_attn=True, build=6170).lines()
    assert "llama_kv_cache_unified_iswa: creating non-SWA KV cache, size = 131072 cells" in lines
    assert "llama_kv_cache_unified_iswa: creating     SWA KV cache, size = 768 cells" in lines
    assert lines[-1].startswith("llama_kv_cache_unified: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs)")


BUILDS = sorted(MODELLED_LLAMACPP_BUILDS)
MODEL_IDS = ["llama-3.1-8b", "qwen2.5-7b", "gemma-3-27b", "gpt-oss-20b", "deepseek-v3", "phi-3.5-mini"]


@settings(max_examples=60, deadline=None)
@given(
    model_id=st.sampled_from(MODEL_IDS),
    build=st.sampled_from(BUILDS),
    ctx=st.integers(min_value=256, max_value=70000),
    parallel=st.integers(min_value=1, max_value=6),
    unified=st.booleans(),
    cache=st.sampled_from(["f16", "q8_0", "q4_0"]),
)
def test_kvcore_reads_back_and_agrees_with_its_own_lines(model_id, build, ctx, parallel, unified, cache):
    startup = llamacpp_startup(
        MODELS[model_id],
        ctx_size=ctx,
        parallel=parallel,
        kv_unified=unified,
        cache_type_k=cache,
        cache_type_v=cache,
        flash_attn=True,
        build=build,
    )
    log = parse_llamacpp_log("\n".join([f"build: {build} (abcdef12)", *startup.lines()]))
    checks = reconcile_llamacpp(log, MODELS[model_id], parallel=parallel, kv_unified=unified)
    assert checks and all(check.status == "agree" for check in checks), checks


@settings(max_examples=40, deadline=None)
@given(ctx=st.integers(min_value=1, max_value=400).map(lambda n: n * 256))
def test_kv_bytes_grow_linearly_with_the_context(ctx):
    one = llamacpp_startup(MODELS["qwen2.5-7b"], ctx_size=ctx)
    two = llamacpp_startup(MODELS["qwen2.5-7b"], ctx_size=2 * ctx)
    assert two.kv_bytes == 2 * one.kv_bytes


def test_q8_0_is_17_32_of_f16():
    f16 = llamacpp_startup(MODELS["qwen2.5-7b"], ctx_size=8192)
    q8 = llamacpp_startup(
        MODELS["qwen2.5-7b"], ctx_size=8192, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn=True
    )
    assert q8.kv_bytes * 32 == f16.kv_bytes * 17


# --- the reader -----------------------------------------------------------------------------


def test_reader_takes_the_real_iswa_lines_apart():
    text = (
        "llama_kv_cache_unified_iswa: creating non-SWA KV cache, size = 131072 cells\n"
        "llama_kv_cache_unified:      CANN0 KV buffer size =   512.00 MiB\n"
        "llama_kv_cache_unified: size = 3072.00 MiB (131072 cells,  12 layers,  1/1 seqs), "
        "K (f16): 1536.00 MiB, V (f16): 1536.00 MiB\n"
        "llama_kv_cache_unified_iswa: creating     SWA KV cache, size = 768 cells\n"
    )
    log = parse_llamacpp_log(text)
    assert log.iswa_cells == (("non-SWA", 131072), ("SWA", 768))
    assert log.caches[0].layers == 12 and log.caches[0].streams == 1
    assert log.buffers[0][0] == "CANN0"
    assert log.format == "unified_streams"


def test_reader_reads_the_seqs_form_without_streams():
    log = parse_llamacpp_log(
        "llama_kv_cache_unified: size =  128.00 MiB (  4096 cells,  16 layers,  1 seqs), "
        "K (f16):   64.00 MiB, V (f16):   64.00 MiB"
    )
    assert log.caches[0].n_seq_max == 1 and log.caches[0].streams is None and log.format == "unified"


def test_reader_reads_settings_and_build():
    log = parse_llamacpp_log(
        "build: 6699 (c08002a1) with cc\nllama_context: n_ctx         = 131072\nllama_context: flash_attn    = 1\n"
        "llama_context: kv_unified    = false\nllama_context: n_seq_max     = 2\n"
    )
    assert (log.build, log.n_ctx, log.flash_attn, log.kv_unified, log.n_seq_max) == (6699, 131072, True, False, 2)


def test_reader_notices_the_refusal_of_a_quantised_v_cache():
    log = parse_llamacpp_log("llama_init_from_model: V cache quantization requires flash_attn")
    assert not log.refused_quantized_v
    log = parse_llamacpp_log("quantized V cache was requested, but this requires Flash Attention")
    assert log.refused_quantized_v


def test_reconcile_says_why_it_cannot_check_an_empty_log():
    (check,) = reconcile_llamacpp(parse_llamacpp_log("hello"), MODELS["llama-3.1-8b"])
    assert check.status == "cannot_check" and check.reason


def test_a_wrong_model_is_caught():
    text = "\n".join(llamacpp_startup(MODELS["llama-3.1-8b"], ctx_size=4096).lines())
    checks = reconcile_llamacpp(parse_llamacpp_log(text), MODELS["qwen2.5-7b"])
    assert any(check.status == "differ" for check in checks)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400))
def test_reader_never_raises(text):
    log = parse_llamacpp_log(text)
    reconcile_llamacpp(log, MODELS["llama-3.1-8b"])


def test_markers_match_llama_cpp_lines_only():
    assert LLAMACPP_MARKERS.search("llama_kv_cache: size =  512.00 MiB (  4096 cells")
    assert LLAMACPP_MARKERS.search("llama_new_context_with_model: KV self size  = 1024.00 MiB")
    assert LLAMACPP_MARKERS.search("llama_kv_cache_iswa: creating non-SWA KV cache, size = 8192 cells")
    assert not LLAMACPP_MARKERS.search("INFO [kv_cache_utils.py:716] GPU KV cache size: 31,232 tokens")
    assert not LLAMACPP_MARKERS.search("KV Cache is allocated. #tokens: 1024, K size: 1.0 GB, V size: 1.0 GB")
