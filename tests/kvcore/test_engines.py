"""kvcore.engines: one entry point for every engine's start-up, the side-by-side view, and log detection."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import kvcore
from kvcore.errors import KvError

ROOT = Path(__file__).resolve().parents[2]
#: Each engine's folder of real start-up logs (data/<folder>), and the files' suffix.
LOG_FOLDERS = {
    "vllm": ("vllm_logs", "*.txt"),
    "sglang": ("sglang_logs", "*.log"),
    "trtllm": ("trtllm_logs", "*.log"),
    "llama.cpp": ("llamacpp_logs", "*.log"),
    "ollama": ("ollama_logs", "*.log"),
}
#: The JSON keys issue 14 names for each engine's `startup --json`.
ISSUE_KEYS = {
    "vllm": {"kv_pool_bytes", "num_blocks", "tokens", "max_concurrency", "fits", "estimated_max_model_len"},
    "sglang": {"max_total_num_tokens", "k_size_bytes", "v_size_bytes"},
    "trtllm": {"max_tokens_in_paged_kv_cache", "num_blocks", "allocated_bytes"},
    "llama.cpp": {"cells", "k_bytes", "v_bytes", "kv_bytes"},
    "ollama": {"cells", "k_bytes", "v_bytes", "kv_bytes"},
}


@pytest.fixture(scope="module")
def models():
    return kvcore.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kvcore.load_gpus()


def golden_logs():
    for engine, (folder, pattern) in LOG_FOLDERS.items():
        if engine in kvcore.ENGINES:
            for path in sorted((ROOT / "data" / folder).glob(pattern)):
                yield pytest.param(engine, path, id=f"{engine}:{path.stem}")


@pytest.mark.parametrize(("engine", "path"), list(golden_logs()))
def test_every_real_log_is_recognised_as_its_own_engine(engine, path):
    text = path.read_text(encoding="utf-8")
    if engine == "ollama" and not kvcore.OLLAMA_MARKERS.search(text):
        engine = "llama.cpp"  # only the llama.cpp lines Ollama relays were pasted
    assert kvcore.detect_engine(text) == engine


@pytest.mark.parametrize("text", ["", "hello", "GPU KV cache size", "\x1b[31m" * 50, "#" * 10_000])
def test_reading_any_paste_never_raises(text):
    reading = kvcore.read_engine_log(text)
    assert reading.engine in kvcore.ENGINES


def test_an_unknown_engine_is_a_kv_error_with_a_code(models):
    with pytest.raises(KvError) as raised:
        kvcore.engine_startup("tgi", models["llama-3.1-8b"])
    assert raised.value.code == "unknown_engine"


@pytest.mark.parametrize("engine", kvcore.ENGINES)
def test_each_engine_answers_the_same_questions(models, gpus, engine):
    run = kvcore.engine_startup(engine, models["llama-3.1-8b"], gpu=gpus["h100-sxm"])
    assert run.engine == engine and run.release
    assert run.fits and run.tokens > 0 and run.kv_pool_bytes > 0
    assert run.lines() and all(isinstance(line, str) for line in run.lines())
    numbers = run.as_json()
    assert ISSUE_KEYS[engine] <= set(numbers)
    json.dumps(numbers)  # plain JSON


@pytest.mark.parametrize(
    ("model_id", "gpu_id"), [("llama-3.1-8b", "rtx-4090"), ("gpt2", "t4"), ("gemma-3-27b", "h100-sxm")]
)
def test_the_side_by_side_rows_count_users_as_each_engine_does(models, gpus, model_id, gpu_id):
    context = 1024 if model_id == "gpt2" else 8192
    rows = kvcore.compare_engines(models[model_id], gpus[gpu_id], context_tokens=context)
    assert [row.engine for row in rows] == list(kvcore.ENGINES)
    for row in rows:
        assert row.users == math.floor(row.startup.max_concurrency(context) + 1e-9)
        assert row.startup.tokens >= 0


def test_a_model_too_big_for_the_gpu_fits_on_no_engine(models, gpus):
    rows = kvcore.compare_engines(models["llama-3.1-405b"], gpus["rtx-4090"], context_tokens=8192)
    assert all(not row.startup.fits and row.users == 0 for row in rows)
    # The servers refuse to start; llama.cpp and Ollama still allocate the cache, part of it on the CPU.
    assert all(row.startup.tokens == 0 for row in rows if row.engine not in kvcore.SLOT_ENGINES)


def test_an_8_bit_cache_holds_about_twice_the_tokens_on_every_server_engine(models, gpus):
    wide = kvcore.compare_engines(models["llama-3.1-8b"], gpus["h100-sxm"], context_tokens=8192)
    narrow = kvcore.compare_engines(models["llama-3.1-8b"], gpus["h100-sxm"], context_tokens=8192, cache_bits=8)
    for a, b in zip(wide, narrow, strict=True):
        if a.engine in ("vllm", "sglang", "trtllm"):
            assert 1.9 < b.startup.tokens / a.startup.tokens < 2.1, a.engine


def test_a_students_flags_replace_only_that_engines_defaults(models, gpus):
    rows = kvcore.compare_engines(
        models["llama-3.1-8b"], gpus["h100-sxm"], context_tokens=8192, flags={"vllm": {"utilization": 0.5}}
    )
    assert rows[0].flags["utilization"] == 0.5
    default = kvcore.engine_startup("vllm", models["llama-3.1-8b"], gpu=gpus["h100-sxm"], flags={"max_model_len": 8192})
    assert rows[0].startup.kv_pool_bytes < default.kv_pool_bytes


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kvcore", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("engine", kvcore.ENGINES)
def test_the_cli_prints_the_engines_lines_then_its_numbers(engine):
    text = cli("startup", "--engine", engine, "--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    numbers = cli("startup", "--engine", engine, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json")
    assert text.returncode == 0 and numbers.returncode == 0, text.stderr + numbers.stderr
    result = json.loads(numbers.stdout)
    assert text.stdout.splitlines() == result["lines"]
    assert ISSUE_KEYS[engine] <= set(result)


def test_the_cli_takes_the_explicit_numbers_of_a_models_info_lines():
    result = cli(
        "startup", "--engine", "vllm", "--layers", "32", "--kv-heads", "8", "--head-dim", "128",
        "--params-b", "8", "--gpu", "h100-sxm", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["bytes_per_token"] == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize(
    "args",
    [
        ["--engine", "vllm", "--model", "llama-3.1-8b"],  # no GPU
        ["--engine", "nonsense", "--model", "llama-3.1-8b", "--gpu", "h100-sxm"],
        ["--engine", "trtllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--kv-cache-dtype", "int3"],
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_code_2(args):
    result = cli("startup", *args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
