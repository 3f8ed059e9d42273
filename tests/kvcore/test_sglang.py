"""SGLang's pool sizing (kvcore.sglang): the budget formula, the releases, the printed lines, the log reader."""

from __future__ import annotations

import json
import math

import pytest

from kvcore.data import load_gpus, load_models
from kvcore.errors import KvError
from kvcore.sglang import (
    SGLANG_MARKERS,
    SGLANG_RELEASES,
    parse_sglang_log,
    reconcile_sglang,
    sglang_cell_bytes,
    sglang_default_mem_fraction,
    sglang_release_rules,
    sglang_startup,
)
from kvcore.units import GiB

MODELS = load_models()
GPUS = load_gpus()


def test_release_rules_pick_the_newest_release_read_at_or_below():
    assert sglang_release_rules("0.3.0").release == "0.3.6"
    assert sglang_release_rules("0.4.3.post4").release == "0.4.3"
    assert sglang_release_rules("0.4.5").release == "0.4.4"
    assert sglang_release_rules("0.4.6.post5").release == "0.4.6"
    assert sglang_release_rules("0.5.1").release == "0.4.9"
    assert sglang_release_rules("0.5.23").release == "0.5.6"
    assert sglang_release_rules().release == SGLANG_RELEASES[-1]
    for bad in ("latest", "0.2.15", ""):
        with pytest.raises(KvError) as error:
            sglang_release_rules(bad)
        assert error.value.code == "sglang_unknown_release"


def test_cell_bytes_per_token_per_gpu():
    # Llama-3.1-8B: 8 KV heads · 128 · 32 layers · 2 (K, V) · 2 bytes.
    assert sglang_cell_bytes(MODELS["llama-3.1-8b"]) == 8 * 128 * 32 * 2 * 2
    # TP splits the KV heads, but never below one head per rank (Qwen3-235B has 4 KV heads).
    assert sglang_cell_bytes(MODELS["qwen3-235b-a22b"], tp=4) == 1 * 128 * 94 * 2 * 2
    assert sglang_cell_bytes(MODELS["qwen3-235b-a22b"], tp=8) == sglang_cell_bytes(MODELS["qwen3-235b-a22b"], tp=4)
    # MLA: 512 + 64 = 576 values per layer, the same on every rank, no factor 2.
    for tp in (1, 2, 8):
        assert sglang_cell_bytes(MODELS["deepseek-v3"], tp=tp) == 576 * 61 * 2
    # Qwen3-Next: only its 12 full-attention layers hold KV.
    assert sglang_cell_bytes(MODELS["qwen3-next-80b-a3b"]) == 2 * 256 * 12 * 2 * 2
    # fp8 halves the cell.
    assert sglang_cell_bytes(MODELS["llama-3.1-8b"], bytes_per_value=1.0) == 65536


def test_default_mem_fraction_by_release():
    # 0.3.6 and 0.4.3: a table by TP size.
    assert [sglang_default_mem_fraction("0.3.6", gpu_mem_mib=None, tp=t) for t in (1, 2, 4, 8, 16)] == [
        0.88,
        0.87,
        0.85,
        0.82,
        0.79,
    ]
    assert sglang_default_mem_fraction("0.4.3", gpu_mem_mib=None, tp=8) == 0.81
    # 0.4.6: above 81920 MiB, 13 GiB held back, unrounded.
    assert sglang_default_mem_fraction("0.4.6", gpu_mem_mib=143771) == pytest.approx((143771 - 13312) / 143771)
    assert sglang_default_mem_fraction("0.4.6", gpu_mem_mib=81559, tp=4) == 0.85
    # 0.4.9: (9.5 + tp / 2) GiB on an 80 GB card.
    assert sglang_default_mem_fraction("0.4.9", gpu_mem_mib=81559, tp=8) == round((81559 - 13.5 * 1024) / 81559, 3)
    # 0.5.6: 512 + 8192 · 1.5 + 256 · 2 + 1/8 · 1024 MiB on an H100 at TP1; at least 10 GiB above 60 GiB.
    assert sglang_default_mem_fraction("0.5.6", gpu_mem_mib=81559) == round((81559 - 13440) / 81559, 3)
    # A 16 GB card: chunked prefill 2048, CUDA graphs up to 8 → 3728 MiB.
    assert sglang_default_mem_fraction("0.5.6", gpu_mem_mib=16376) == round((16376 - 3728) / 16376, 3)
    # No GPU known: 0.88.
    assert sglang_default_mem_fraction("0.5.6", gpu_mem_mib=None) == 0.88


def test_pool_follows_the_budget_formula():
    model = MODELS["qwen3-14b"]
    pre, post = 23.08 * GiB, 16.00 * GiB
    run = sglang_startup(model, tp=4, mem_fraction_static=0.8, pre_model_load_bytes=pre, post_model_load_bytes=post)
    cell = 2 * 128 * 40 * 2 * 2
    assert run.cell_bytes == cell
    assert run.rest_bytes == pytest.approx(post - pre * 0.2)
    assert run.tokens == math.floor((post - pre * 0.2) / cell)
    assert run.weights_bytes == pytest.approx(pre - post)
    # One padding row more than the pool, on each of the 40 layers.
    assert run.k_size_bytes == run.v_size_bytes == (run.tokens + 1) * 40 * 2 * 128 * 2
    assert run.kv_pool_bytes == run.k_size_bytes + run.v_size_bytes
    assert run.fits
    # 3730 request slots (⌊tokens / 40960 · 512⌋), fewer than tokens / 2.
    assert run.max_running_requests == 3730


def test_page_size_floors_and_pads_with_a_whole_page():
    model = MODELS["llama-3.1-8b"]
    kw = {"mem_fraction_static": 0.9, "pre_model_load_bytes": 79 * GiB, "post_model_load_bytes": 64 * GiB}
    one = sglang_startup(model, **kw)
    paged = sglang_startup(model, page_size=64, **kw)
    assert paged.tokens == one.tokens // 64 * 64
    assert paged.tokens % 64 == 0
    assert paged.k_size_bytes == (paged.tokens + 64) * 32 * 8 * 128 * 2
    # Before 0.4.6 the buffers have size + 1 rows.
    old = sglang_startup(model, release="0.4.3", **kw)
    assert old.k_size_bytes == (old.tokens + 1) * 32 * 8 * 128 * 2


def test_max_total_tokens_caps_and_fp8_doubles():
    model = MODELS["llama-3.1-8b"]
    kw = {"mem_fraction_static": 0.88, "pre_model_load_bytes": 79 * GiB, "post_model_load_bytes": 64 * GiB}
    free = sglang_startup(model, **kw)
    capped = sglang_startup(model, max_total_tokens=100_000, **kw)
    assert capped.tokens == 100_000 < free.tokens
    above = sglang_startup(model, max_total_tokens=10**9, **kw)
    assert above.tokens == free.tokens
    fp8 = sglang_startup(model, kv_cache_dtype="fp8_e5m2", **kw)
    assert fp8.tokens == math.floor(free.rest_bytes / (free.cell_bytes / 2))
    assert fp8.kv_pool_bytes == pytest.approx(free.kv_pool_bytes, rel=1e-4)
    with pytest.raises(KvError) as error:
        sglang_startup(model, kv_cache_dtype="q8_0", **kw)
    assert error.value.code == "sglang_unknown_kv_cache_dtype"


def test_refusal_when_the_weights_leave_no_room():
    model = MODELS["llama-3.1-70b"]
    run = sglang_startup(model, gpu=GPUS["h100-sxm"], mem_fraction_static=0.5)
    assert not run.fits
    assert run.tokens <= 0
    assert run.max_concurrency(4096) == 0.0
    assert run.lines()[-1] == (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        "Current value: self.server_args.mem_fraction_static=0.5"
    )
    old = sglang_startup(model, gpu=GPUS["h100-sxm"], mem_fraction_static=0.5, release="0.4.9")
    assert old.lines()[-1] == "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."


def test_gpu_defaults_and_lines():
    run = sglang_startup(MODELS["llama-3.1-8b"], gpu=GPUS["h100-sxm"])
    assert run.mem_fraction_static == sglang_default_mem_fraction(
        "0.5.6", gpu_mem_mib=GPUS["h100-sxm"].reported_memory_bytes / 2**20
    )
    assert run.chunked_prefill_size == 8192
    lines = run.lines()
    assert lines[0].startswith("Load weight begin. avail mem=")
    assert lines[1].startswith("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=")
    assert lines[1].endswith(" GB.")
    assert lines[2] == (
        f"KV Cache is allocated. #tokens: {run.tokens}, K size: {run.k_size_bytes / GiB:.2f} GB, "
        f"V size: {run.v_size_bytes / GiB:.2f} GB"
    )
    assert lines[-1].startswith(
        f"max_total_num_tokens={run.tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384"
    )
    assert "available_gpu_mem=" in lines[-1]


def test_mla_line_and_old_formats():
    model = MODELS["deepseek-v3"]
    run = sglang_startup(model, tp=8, max_total_tokens=10000)
    assert run.is_mla and run.v_size_bytes == 0.0
    assert run.lines() == [
        "KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB",
        "max_total_num_tokens=10000, chunked_prefill_size=4096, max_prefill_tokens=16384, "
        "max_running_requests=2048, context_len=163840",
    ]
    llama = MODELS["llama-3.1-8b"]
    assert sglang_startup(llama, max_total_tokens=1000, release="0.4.3").lines()[0] == (
        "KV Cache is allocated. K size: 0.06 GB, V size: 0.06 GB."
    )
    old = sglang_startup(llama, max_total_tokens=1000, release="0.3.6").lines()
    assert old == ["max_total_num_tokens=1000, max_prefill_tokens=16384, max_running_requests=500, context_len=131072"]


def test_sliding_window_pool_ratio():
    model = MODELS["gpt-oss-20b"]
    kw = {"mem_fraction_static": 0.85, "pre_model_load_bytes": 79 * GiB, "post_model_load_bytes": 65 * GiB}
    run = sglang_startup(model, **kw)
    swa, full = model.count("sliding"), model.count("full")
    assert run.swa_layers == swa and run.full_layers == full
    assert run.swa_tokens == int(run.tokens * 0.8)
    flat = sglang_startup(model, disable_hybrid_swa_memory=True, **kw)
    assert run.tokens == int(flat.tokens * model.num_hidden_layers / (0.8 * swa + full))
    lines = run.lines()
    assert lines[2].startswith(f"KV Cache is allocated. #tokens: {run.swa_tokens}, ")
    assert lines[3].startswith(f"KV Cache is allocated. #tokens: {run.tokens}, ")
    assert lines[4].startswith("SWAKVPool mem usage: ") and lines[4].endswith(
        f"swa size: {run.swa_tokens}, full size: {run.tokens}"
    )
    # The window bounds what one request needs from the sliding pool.
    assert run.max_concurrency(100_000) == pytest.approx(min(run.tokens / 100_000, run.max_running_requests))


def test_hybrid_linear_model_takes_the_mamba_pool_first():
    model = MODELS["qwen3-next-80b-a3b"]
    kw = {"tp": 4, "mem_fraction_static": 0.85, "pre_model_load_bytes": 137 * GiB, "post_model_load_bytes": 96 * GiB}
    run = sglang_startup(model, **kw)
    assert run.mamba_cache_size > 0 and run.mamba_bytes > 0
    rest = 96 * GiB - 137 * GiB * 0.15
    assert run.mamba_bytes <= rest * 0.9 / 1.9
    assert run.tokens == math.floor((rest - run.mamba_bytes) / run.cell_bytes)
    assert run.max_running_requests <= run.mamba_cache_size // 3
    with pytest.raises(KvError) as error:
        sglang_startup(model, release="0.4.9", **kw)
    assert error.value.code == "sglang_hybrid_unsupported"


def test_needs_a_gpu_or_a_cap():
    with pytest.raises(KvError) as error:
        sglang_startup(MODELS["llama-3.1-8b"])
    assert error.value.code == "sglang_needs_gpu"
    with pytest.raises(KvError) as error:
        sglang_startup(MODELS["llama-3.1-8b"], gpu=GPUS["h100-sxm"], mem_fraction_static=1.5)
    assert error.value.code == "sglang_bad_fraction"


def test_as_json_is_plain_and_has_the_issue_keys():
    run = sglang_startup(MODELS["qwen3-8b"], gpu=GPUS["rtx-4090"])
    data = json.loads(json.dumps(run.as_json()))
    for key in (
        "engine",
        "release",
        "kv_pool_bytes",
        "tokens",
        "fits",
        "max_total_num_tokens",
        "k_size_bytes",
        "v_size_bytes",
    ):
        assert key in data
    assert data["engine"] == "sglang" and data["tokens"] == data["max_total_num_tokens"] == run.tokens
    assert data["kv_pool_bytes"] == pytest.approx(data["k_size_bytes"] + data["v_size_bytes"])
    assert sum(term.bytes for term in run.terms) == pytest.approx(GPUS["rtx-4090"].reported_memory_bytes, rel=0.2)


def test_max_concurrency():
    run = sglang_startup(MODELS["llama-3.1-8b"], max_total_tokens=131072)
    assert run.max_concurrency(8192) == 16.0
    assert run.max_concurrency(1) == run.max_running_requests


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "release"),
    [
        ("llama-3.1-8b", "h100-sxm", 1, "0.5.6"),
        ("qwen3-32b", "a100-80gb", 2, "0.4.9"),
        ("deepseek-v3", "h200", 8, "0.5.6"),
        ("mistral-7b-v0.1", "rtx-4090", 1, "0.4.6"),
        ("qwen2.5-72b", "h100-sxm", 4, "0.4.3"),
    ],
)
def test_printed_lines_reconcile_with_kvcore(model, gpu, tp, release):
    run = sglang_startup(MODELS[model], gpu=GPUS[gpu], tp=tp, release=release)
    log = parse_sglang_log("\n".join(f"[2025-01-01 00:00:00 TP0] {line}" for line in run.lines()))
    assert log.tokens == run.tokens
    found = reconcile_sglang(log, MODELS[model], tp=tp, mem_fraction_static=run.mem_fraction_static, release=release)
    statuses = {check.kind: check.status for check in found}
    assert "differ" not in statuses.values(), found
    if run.rules.kv_line != "none" and not (run.is_mla and run.rules.kv_line == "sizes"):
        assert statuses.get("kv_size_bytes" if run.is_mla else "k_size_bytes") == "agree"
    assert statuses["max_total_num_tokens"] == "agree"
    assert statuses["max_running_requests"] == "agree"


def test_parser_reads_every_format_and_never_raises():
    text = "\n".join(
        (
            "[2025-03-01 10:00:00 TP0] server_args=ServerArgs(model_path='x', kv_cache_dtype='fp8_e5m2', "
            "context_length=None, mem_fraction_static=0.88, max_running_requests=None, max_total_tokens=None, "
            "chunked_prefill_size=8192, max_prefill_tokens=16384, page_size=1, tp_size=2)",
            "[2025-03-01 10:00:01 TP0] Init torch distributed ends. mem usage=0.21 GB",
            "[2025-03-01 10:00:02 TP0] Load weight begin. avail mem=78.50 GB",
            "[2025-03-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
            "avail mem=70.90 GB, mem usage=7.60 GB.",
            "[2025-03-01 10:00:09 TP0] KV Cache is allocated. #tokens: 1000000, K size: 30.52 GB, V size: 30.52 GB",
            "[2025-03-01 10:00:09 TP0] Memory pool end. avail mem=9.10 GB",
            "[2025-03-01 10:00:20 TP0] max_total_num_tokens=1000000, chunked_prefill_size=8192, "
            "max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=8.00 GB",
        )
    )
    log = parse_sglang_log(text)
    assert log.load_begin_avail_bytes == pytest.approx(78.50 * GiB)
    assert log.load_end_avail_bytes == pytest.approx(70.90 * GiB)
    assert log.weights_mem_usage_bytes == pytest.approx(7.60 * GiB)
    assert log.half_step["load_end_avail_bytes"] == pytest.approx(0.005 * GiB)
    assert (log.model_type, log.model_dtype) == ("LlamaForCausalLM", "torch.bfloat16")
    assert (log.kv_tokens, log.max_total_num_tokens, log.max_running_requests, log.context_len) == (
        1000000,
        1000000,
        4096,
        131072,
    )
    assert (log.mem_fraction_static, log.tp_size, log.page_size, log.kv_cache_dtype) == (0.88, 2, 1, "fp8_e5m2")
    assert log.max_running_requests_arg is None and log.max_total_tokens is None
    assert log.init_distributed_mem_usage_bytes == pytest.approx(0.21 * GiB)
    assert log.kv_line_format == "tokens"
    assert all(SGLANG_MARKERS.search(line.text) for line in log.recognised if "ServerArgs" not in line.text)
    # The 0.5.23 formats: elapsed, quant, the KV line's dtype.
    new = parse_sglang_log(
        "Load weight end. elapsed=12.30 s, type=Qwen3ForCausalLM, quant=fp8, avail mem=60.00 GB, mem usage=16.00 GB.\n"
        "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 5000, K size: 1.00 GB, V size: 1.00 GB"
    )
    assert (new.model_type, new.quant, new.kv_dtype, new.kv_tokens) == (
        "Qwen3ForCausalLM",
        "fp8",
        "torch.float8_e4m3fn",
        5000,
    )
    assert new.kv_line_format == "dtype"
    old = parse_sglang_log("KV Cache is allocated. K size: 1.53 GB, V size: 1.53 GB.")
    assert old.kv_line_format == "sizes" and old.kv_tokens is None
    swa = parse_sglang_log("SWAKVPool mem usage: 12.345678 GB, swa size: 800, full size: 1000")
    assert (swa.swa_size, swa.swa_full_size) == (800, 1000)
    command = parse_sglang_log(
        "python -m sglang.launch_server --tp 4 --mem-fraction-static 0.93 --max-total-tokens 1000 "
        "--context-length 4096 --page-size 16 --max-running-requests 8 --kv-cache-dtype fp8_e5m2"
    )
    assert (command.tp_size, command.mem_fraction_static, command.max_total_tokens, command.context_length) == (
        4,
        0.93,
        1000,
        4096,
    )
    assert (command.page_size, command.max_running_requests_arg, command.kv_cache_dtype) == (16, 8, "fp8_e5m2")
    refused = parse_sglang_log("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
    assert refused.not_enough_memory
    for junk in ("", b"\xff\xfe\x00", "KV Cache is allocated. #tokens: , K size: GB", "x" * 300_000, None, 12):
        parse_sglang_log(junk)  # type: ignore[arg-type]
    assert parse_sglang_log("<script>alert(1)</script>").recognised == ()


def test_markers_match_sglang_lines_only():
    assert SGLANG_MARKERS.search("[2025-01-01 TP0] KV Cache is allocated. #tokens: 1, K size: 0.00 GB, V size: 0.00 GB")
    assert SGLANG_MARKERS.search("[TP0] Load weight end. type=X, dtype=torch.bfloat16, avail mem=1.00 GB")
    assert SGLANG_MARKERS.search("max_total_num_tokens=56524, max_prefill_tokens=16384")
    for other in (
        "INFO 11-20 10:00:00 [kv_cache_utils.py:716] GPU KV cache size: 31,232 tokens",
        "llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB",
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 10.00 GiB for max tokens in paged KV cache (100000).",
    ):
        assert not SGLANG_MARKERS.search(other)


def test_reconcile_flags_a_wrong_number():
    model = MODELS["qwen3-14b"]
    log = parse_sglang_log(
        "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=16.00 GB, mem usage=7.08 GB.\n"
        "KV Cache is allocated. #tokens: 298447, K size: 5.69 GB, V size: 5.69 GB\n"
        "max_total_num_tokens=298447, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=3730, "
        "context_len=40960, available_gpu_mem=2.82 GB"
    )
    good = {check.kind: check.status for check in reconcile_sglang(log, model, tp=4, mem_fraction_static=0.8)}
    assert good["k_size_bytes"] == good["v_size_bytes"] == good["max_total_num_tokens"] == "agree"
    assert good["max_running_requests"] == good["context_len"] == "agree"
    # Another TP size means other K sizes; another fraction another pool.
    wrong_tp = {check.kind: check.status for check in reconcile_sglang(log, model, tp=2, mem_fraction_static=0.8)}
    assert wrong_tp["k_size_bytes"] == "differ"
    wrong_f = {check.kind: check.status for check in reconcile_sglang(log, model, tp=4, mem_fraction_static=0.85)}
    assert wrong_f["max_total_num_tokens"] == "differ"
    # Without the fraction the pool cannot be checked.
    unknown = {check.kind: check for check in reconcile_sglang(log, model, tp=4)}
    assert unknown["max_total_num_tokens"].status == "cannot_check" and unknown["max_total_num_tokens"].reason
