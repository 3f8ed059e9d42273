"""Golden TensorRT-LLM start-ups (data/trtllm_logs/): every printed number reproduced by kvcore.

Inputs taken from each log: the free memory after the engine loaded ("available", C++ path) or
the profiling peak, device total and temporary cache (PyTorch backend), the fraction and
tokens_per_block where printed. Everything else (bytes per token, blocks, tokens, allocated GiB,
the estimate) is computed from the model's config and checked within the printed rounding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvcore.data import load_models
from kvcore.trtllm import TRTLLM_MARKERS, parse_trtllm_log, reconcile_trtllm, trtllm_startup
from kvcore.units import GiB

LOGS = Path(__file__).resolve().parents[2] / "data" / "trtllm_logs"

#: Settings each log does not print (its header's flags), by file-name prefix.
SETTINGS: dict[str, dict[str, object]] = {
    # 0.13 engine, default fraction 0.9 and tokens_per_block 64 (the log stops before the block-size line).
    "nvidia-trtllm_2268": {"tokens_per_block": 64},
    # FP8 KV cache (quantize.py --kv_cache_dtype fp8), fraction 0.9 set.
    "nvidia-trtllm_4275": {"kv_cache_dtype": "fp8", "free_gpu_memory_fraction": 0.9},
    # TP 2 (8 KV heads → 4 per GPU), 0.13 default block size 64, max_seq_len 8000, host cache 45 GB (inferred).
    "triton-trtllm-backend_576": {
        "tp": 2,
        "tokens_per_block": 64,
        "max_seq_len": 8000,
        "host_cache_size": 45_000_000_000,
    },
    # PyTorch backend: every input is printed.
    "github-hosted_2263047771": {},
    # PyTorch backend default tokens_per_block 32 (KvCacheConfig, 1.1); the post cuts the block-size line.
    "nvidia-forums_354807": {"tokens_per_block": 32},
}


def header(path: Path) -> dict[str, str]:
    fields = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            fields[key] = value
    return fields


def body(path: Path) -> str:
    return "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("# "))


def settings_for(path: Path) -> dict[str, object]:
    return next(value for prefix, value in SETTINGS.items() if path.name.startswith(prefix))


LOG_FILES = sorted(LOGS.glob("*.log"))


def test_there_are_at_least_four_golden_logs_and_one_of_each_backend():
    assert len(LOG_FILES) >= 4
    texts = [body(path) for path in LOG_FILES]
    assert any("PyTorch backend" in text or "Estimated max memory" in text for text in texts)
    assert any("Memory usage when calculating max tokens in paged kv cache" in text for text in texts)


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_every_log_names_its_source_release_and_model(path):
    fields = header(path)
    assert fields["source"].startswith("https://") or "search-index file id" in fields["source"]
    for key in ("release", "release-evidence", "model", "hf-model", "gpu", "flags", "outcome"):
        assert fields.get(key), key
    assert fields["model"] in load_models()
    assert isinstance(settings_for(path), dict)  # every file has its settings row above


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_every_logged_number_agrees_with_kvcore(path):
    model = load_models()[header(path)["model"]]
    log = parse_trtllm_log(body(path))
    checks = reconcile_trtllm(log, model, **settings_for(path))  # type: ignore[arg-type]
    assert checks, "nothing to check"
    bad = [(c.kind, c.status, c.logged, c.expected, c.low, c.high, c.reason) for c in checks if c.status != "agree"]
    assert not bad


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_every_log_is_detected_as_tensorrt_llm(path):
    assert any(TRTLLM_MARKERS.search(line) for line in body(path).splitlines())


def test_issue_2268_the_startup_prints_the_two_logged_lines():
    # Inputs from the log: total 39.39 GiB, available 21.89 GiB. Computed: 524,288 B/token (MHA, 32 KV heads),
    # ⌊21.89 GiB · 0.9 / 524,288⌋ = 40,347 tokens → ⌈40,347 / 64⌉ = 631 blocks.
    path = LOGS / "nvidia-trtllm_2268_qwen1.5-7b_a100-40gb.log"
    run = trtllm_startup(
        load_models()["qwen1.5-7b"],
        backend="trt",
        release="0.13.0.dev2024082000",
        total_memory_bytes=39.39 * GiB,
        free_memory_bytes=21.89 * GiB,
    )
    logged = body(path).splitlines()
    assert run.lines()[:2] == logged
    assert run.bytes_per_token == 524_288


def test_gpt_oss_120b_the_pytorch_startup_prints_the_logged_estimate_and_pool():
    # Inputs from the log: device total 119.70 GiB, peak 113.65 GiB. Computed: 73,728 B/token
    # (36 layers · 2 · 8 · 64 · 2: one window, every layer), the profiling cache of 8,224 tokens
    # (0.56 GiB), (119.70 − 113.65 + 0.56) · 0.9 = 5.95 GiB → 86,720 tokens in 2,710 blocks.
    path = LOGS / "github-hosted_2263047771_gpt-oss-120b_dgx-spark_pytorch.log"
    run = trtllm_startup(
        load_models()["gpt-oss-120b"],
        release="1.1.0rc3",
        total_memory_bytes=119.70 * GiB,
        peak_memory_bytes=113.65 * GiB,
    )
    logged = [line.split("] ", 1)[-1] if line.startswith("[12/") else line for line in body(path).splitlines()]
    lines = run.lines()
    assert lines[0] in logged  # the Peak memory line, character for character
    assert lines[1] in logged  # Estimated max memory in KV cache : 5.95 GiB
    assert lines[3] in logged  # Attention window size 131072 exceeds upper bound 86720 ... (max_position_embeddings)
    assert lines[-1] == logged[-2]  # [MemUsageChange] Allocated 5.95 GiB ... (86720).
    assert run.tokens == 86_720 and run.primary_blocks == 2_710
