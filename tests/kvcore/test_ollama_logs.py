"""Golden Ollama start-ups (data/ollama_logs/): every printed number reproduced by kvcore.

Each file is a real Ollama server log pasted in a public GitHub issue (its header names the
comment). The settings come from the log itself (the runner command's --ctx-size and --parallel,
--kv-cache-type, --flash-attn); the model's shape from data/models.csv. Checked within the printed
rounding (format.HumanBytes2, one decimal): the scheduler's KV estimate, both graph estimates,
the weights' sum, layers.model, memory.required.full/.partial/.allocations, and the llama.cpp
lines Ollama relays (kvcore.llamacpp with the build Ollama vendored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvcore.data import load_gpus, load_models
from kvcore.ollama import OLLAMA_MARKERS, ollama_release, ollama_startup, parse_ollama_log, reconcile_ollama
from kvcore.units import GiB, MiB
from kvcore.vllm_log import read_log_header

LOGS = Path(__file__).resolve().parents[2] / "data" / "ollama_logs"
LOG_FILES = sorted(LOGS.glob("*.log"))


def body(path: Path) -> str:
    return "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("# "))


def reconciled(path: Path):
    header = read_log_header(path.read_text(encoding="utf-8"))
    log = parse_ollama_log(body(path))
    return log, reconcile_ollama(log, load_models()[header["model"]], release=header["release"])


def test_there_are_at_least_four_golden_logs_across_the_formats():
    assert len(LOG_FILES) >= 4
    texts = [body(path) for path in LOG_FILES]
    assert any('msg="offload to cuda"' in text for text in texts)  # llm/memory.go, up to 0.5.11
    assert any("msg=offload library=" in text for text in texts)  # llm/server.go, 0.5.12+
    assert any("llama_kv_cache_init" in text for text in texts)  # relayed llama.cpp lines


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_every_log_names_its_source_release_and_model(path):
    header = read_log_header(path.read_text(encoding="utf-8"))
    assert header["source"].startswith("https://github.com/ollama/ollama/")
    for key in ("release", "release-evidence", "model", "hf-model", "gpu", "flags", "outcome"):
        assert header.get(key), key
    assert header["model"] in load_models()
    assert ollama_release(header["release"]).version == header["release"]


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_every_logged_number_agrees_with_kvcore(path):
    _, checks = reconciled(path)
    assert checks
    assert [(c.kind, c.status, c.logged, c.low, c.high, c.reason) for c in checks if c.status != "agree"] == []


@pytest.mark.parametrize("path", [p for p in LOG_FILES if "msg=offload" in body(p)], ids=lambda p: p.stem)
def test_the_estimate_lines_are_checked_in_full(path):
    _, checks = reconciled(path)
    kinds = {check.kind for check in checks}
    assert {"memory.required.kv", "memory.graph.full", "memory.graph.partial", "memory.weights.total"} <= kinds
    assert {"memory.required.full", "memory.required.partial", "layers.model"} <= kinds


def test_the_relayed_llama_cpp_lines_are_reconciled_by_kvcore_llamacpp():
    # issue 8447: DeepSeek-V3 before MLA caching, 61 layers · 2048 cells · 128 heads · (192 + 128) · 2 bytes.
    path = LOGS / "github_ollama_8447_deepseek-v3_gpu_overhead.log"
    log, checks = reconciled(path)
    assert log.llamacpp is not None
    buffers = next(check for check in checks if check.kind == "kv_buffer_bytes")
    assert buffers.status == "agree" and buffers.logged == (9600 + 160) * MiB == 61 * 2048 * 128 * 320 * 2


def test_a_wrapped_estimate_line_still_reads():
    # issue 10061: rick-github quoted the estimate over five lines.
    log = parse_ollama_log(body(LOGS / "github_ollama_10061_gemma-3-4b_q8_0_parallel4.log"))
    assert log.required_kv_bytes == 341.0 * MiB and log.projector_graph_bytes == 1.0 * GiB
    assert (log.ctx_size, log.parallel, log.kv_cache_type, log.flash_attention) == (8192, 4, "q8_0", True)


def test_the_q8_0_estimate_of_issue_10061_counts_one_byte_per_value():
    # Gemma 3 4B, 4 slots of 2048: 5 global layers · 8192 tokens + 29 sliding · (4·1024 + 512), each 4·512 values.
    log = parse_ollama_log(body(LOGS / "github_ollama_10061_gemma-3-4b_q8_0_parallel4.log"))
    assert log.required_kv_bytes == (5 * 8192 + 29 * 4608) * 2048 * 1
    start = ollama_startup(
        load_models()["gemma-3-4b"],
        num_ctx=2048,
        num_parallel=4,
        kv_cache_type="q8_0",
        flash_attention=True,
        version="0.6.3",
        gpu=load_gpus()["a100-80gb"],
    )
    # What the Ollama engine allocates: ggml's q8_0 is 34 bytes per 32 values, cells padded to 256.
    assert start.runner == "ollama"
    assert start.kv_pool_bytes == (5 * 8192 + 29 * 4608) * 2048 * 34 / 32


def test_issue_10061s_estimate_line_is_reproduced_character_for_character():
    # The inputs Ollama read from the GGUF and the GPU: weights, projector, free memory.
    start = ollama_startup(
        load_models()["gemma-3-4b"],
        num_ctx=2048,
        num_parallel=4,
        kv_cache_type="q8_0",
        flash_attention=True,
        gpu=load_gpus()["a100-80gb"],
        free_bytes=78.7 * GiB,
        weights_bytes=1.8 * GiB + 525 * MiB,
        projector_weights_bytes=795.9 * MiB,
        projector_graph_bytes=1.0 * GiB,
        version="0.6.3",
    )
    logged = " ".join(
        line.strip() for line in body(LOGS / "github_ollama_10061_gemma-3-4b_q8_0_parallel4.log").splitlines()[:5]
    )
    assert start.lines()[0] == logged[logged.index("msg=") :]


@pytest.mark.parametrize("path", [p for p in LOG_FILES if "msg=" in body(p)], ids=lambda p: p.stem)
def test_ollamas_own_lines_are_marked(path):
    assert OLLAMA_MARKERS.search(body(path))
