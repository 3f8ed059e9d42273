"""Golden tests: real SGLang start-up logs (data/sglang_logs), every number recomputed.

The logs come from public issues, pull requests and READMEs. Each file names its source, release,
model and flags in its header (and, under "defaults", a flag the user left to SGLang). Inputs taken
from the log: the "avail mem" before and after the weights ("Load weight begin", or after + "mem
usage"; the smallest TP rank's), and each allocation line's own #tokens. Computed by kvcore: the
K / V / KV sizes from those tokens, the pool's tokens from the free memory and the flags,
max_running_requests, context_len, and the lines that :func:`kvcore.sglang.sglang_startup` prints
for the same settings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvcore.data import load_models
from kvcore.sglang import parse_sglang_log, reconcile_sglang, sglang_default_mem_fraction, sglang_startup
from kvcore.units import GiB

LOGS = Path(__file__).resolve().parents[2] / "data" / "sglang_logs"
FILES = sorted(LOGS.glob("*.log"))
MODELS = load_models()
HEADER_KEYS = ("source", "release", "release-evidence", "model", "hf-model", "gpu", "flags", "outcome")

#: Checks that cannot be made from a file's lines, and why (every other check must agree).
CANNOT_CHECK = {
    "memory_pool_end_avail_bytes": "SGLang allocates other buffers between the lines",
    "available_gpu_mem_bytes": "SGLang allocates other buffers between the lines",
}
#: Per file: the checks that must agree (at least these), and max_total_num_tokens when the log lacks the memory.
EXPECTED = {
    "sglang_2468_mistral-7b-v0.1_tp1.log": (
        {"max_running_requests", "context_len", "max_prefill_tokens"},
        True,
    ),
    "ktransformers_1804_deepseek-v3_tp2_max-total-tokens.log": ({"kv_size_bytes", "max_total_num_tokens"}, False),
    "vllm_21348_qwen3-235b-a22b_fp8_tp4.log": ({"k_size_bytes", "v_size_bytes"}, True),
    "sglang_27537_qwen3-30b-a3b_fp8_tp2.log": ({"k_size_bytes", "v_size_bytes"}, True),
    # The pool formula from the printed memory: rest = post − pre · (1 − f), tokens = ⌊rest / cell⌋.
    "sglang_4760_llama-3.1-8b_tp1_default-fraction.log": (
        {"k_size_bytes", "v_size_bytes", "max_total_num_tokens"},
        False,
    ),
    "jerryzsj-my-deepseek-r1_bd9f5c7_qwen2.5-7b_r1-distill_tp1.log": (
        {"k_size_bytes", "v_size_bytes", "max_total_num_tokens", "max_running_requests", "context_len"},
        False,
    ),
    "didier-durand-llms-in-clouds_3e1df42_qwen2.5-32b_qwq_tp4.log": (
        {"k_size_bytes", "v_size_bytes", "max_total_num_tokens", "max_running_requests", "context_len"},
        False,
    ),
    "ajith-sirra-amd-issues_561754c_kimi-k2_k2.5-default-backend_tp8.log": (
        {"kv_size_bytes", "max_total_num_tokens"},
        False,
    ),
    "ajith-sirra-amd-issues_561754c_kimi-k2_k2.5-triton-backend_tp8.log": (
        {"kv_size_bytes", "max_total_num_tokens"},
        False,
    ),
}
#: Sources are issue or pull request threads, or a file at a fixed commit (a README or report with a pasted log).
SOURCE = re.compile(r"https://github\.com/[^/\s]+/[^/\s]+/(issues/\d+|pull/\d+|blob/[0-9a-f]{40}/\S+) \(")


def _read(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text(encoding="utf-8")
    header = {m.group(1): m.group(2) for m in re.finditer(r"^# ([a-z-]+): (.*)$", text, re.M)}
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# "))
    return header, body


def _settings(header: dict[str, str]) -> dict[str, object]:
    """The reconcile keyword arguments from the header's engine flags and the defaults it states."""
    flags = header["flags"] + " " + header.get("defaults", "")
    found: dict[str, object] = {}
    for name, pattern, kind in (
        ("mem_fraction_static", r"--mem-fraction-static[ =](\S+)", float),
        ("tp", r"--(?:tp|tp-size|tensor-parallel-size)[ =](\d+)", int),
        ("max_total_tokens", r"--max-total-tokens[ =](\d+)", int),
        ("max_running_requests", r"--max-running-requests[ =](\d+)", int),
        ("page_size", r"--page-size[ =](\d+)", int),
        ("kv_cache_dtype", r"--kv-cache-dtype[ =](\S+)", str),
    ):
        match = re.search(pattern, flags)
        if match:
            found[name] = kind(match.group(1))
    return found


def test_there_are_at_least_four_logs_covering_gqa_mla_and_tp():
    assert len(FILES) >= 4
    assert {path.name for path in FILES} == set(EXPECTED)
    models = {_read(path)[0]["model"] for path in FILES}
    assert any(MODELS[m].attention_type == "MLA" for m in models)
    assert any(MODELS[m].attention_type == "GQA" for m in models)
    assert any(int(_settings(_read(path)[0]).get("tp", 1)) > 1 for path in FILES)


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_header_names_its_source(path):
    header, body = _read(path)
    for key in HEADER_KEYS:
        assert header.get(key), f"{path.name}: header {key!r} missing"
    assert SOURCE.match(header["source"])
    assert header["model"] in MODELS
    assert header["outcome"].startswith(("started", "refused"))
    assert "KV Cache is allocated" in body or "max_total_num_tokens=" in body


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_every_number_reconciles(path):
    header, body = _read(path)
    model = MODELS[header["model"]]
    log = parse_sglang_log(body)
    found = reconcile_sglang(log, model, **_settings(header))  # type: ignore[arg-type]
    must_agree, tokens_unknown = EXPECTED[path.name]
    statuses = {check.kind: check.status for check in found}
    for check in found:
        if check.status == "cannot_check":
            if check.kind == "max_total_num_tokens":
                assert tokens_unknown, f"{path.name}: {check.reason}"
            else:
                assert check.kind in CANNOT_CHECK, f"{path.name}: {check.kind}: {check.reason}"
            assert check.reason
        else:
            assert check.status == "agree", f"{path.name}: {check}"
    assert must_agree <= {kind for kind, status in statuses.items() if status == "agree"}, statuses


def test_the_printed_lines_are_reproduced():
    # vLLM #21348: Qwen3-235B-A22B on 4 GPUs, 367404 tokens (input) → K and V 8.23 GB each (computed).
    run = sglang_startup(MODELS["qwen3-235b-a22b"], tp=4, max_total_tokens=367404, release="0.4.9")
    assert "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB" in run.lines()
    # ktransformers #1804: DeepSeek-V3 on 2 GPUs; inputs: avail mem 33.80 GB after 13.06 GB of weights,
    # --mem-fraction-static 0.9, --max-total-tokens 10000 → the pool holds the cap, 576 values · 61 layers.
    post = 33.80 * GiB
    run = sglang_startup(
        MODELS["deepseek-v3"],
        tp=2,
        mem_fraction_static=0.9,
        max_total_tokens=10000,
        pre_model_load_bytes=post + 13.06 * GiB,
        post_model_load_bytes=post,
    )
    lines = run.lines()
    assert (
        "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=33.80 GB, mem usage=13.06 GB."
        in lines
    )
    assert "KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB" in lines
    assert run.profiled_tokens is not None and run.profiled_tokens > 10000
    # sglang #2468: Mistral-7B, 56524 tokens (input) and its 32768 context → 2049 request slots (computed).
    run = sglang_startup(MODELS["mistral-7b-v0.1"], max_total_tokens=56524, release="0.4.0")
    assert run.lines()[-1] == (
        "max_total_num_tokens=56524, max_prefill_tokens=16384, max_running_requests=2049, context_len=32768"
    )


def _pool_check(path: Path) -> tuple[str, float | None, float | None]:
    header, body = _read(path)
    found = reconcile_sglang(parse_sglang_log(body), MODELS[header["model"]], **_settings(header))  # type: ignore[arg-type]
    check = next(check for check in found if check.kind == "max_total_num_tokens")
    return check.status, check.logged, check.expected


def test_the_memory_lines_prove_the_pool_formula():
    # rest = post − pre · (1 − mem_fraction_static), tokens = ⌊rest / cell⌋: reproduced from the printed free
    # memory (no --max-total-tokens) on GQA at TP 1 and TP 4 and on MLA at TP 8.
    proved = [path for path in FILES if _pool_check(path)[0] == "agree" and "max-total-tokens" not in path.name]
    assert len(proved) >= 4, proved
    kinds = {MODELS[_read(path)[0]["model"]].attention_type for path in proved}
    assert {"GQA", "MLA"} <= kinds
    assert any(int(_settings(_read(path)[0]).get("tp", 1)) > 1 for path in proved)
    assert any(int(_settings(_read(path)[0]).get("tp", 1)) == 1 for path in proved)


def test_the_stated_default_fractions_are_the_release_tables():
    # sglang PR #4760 sets no --mem-fraction-static: 0.4.4 picks 0.88 at TP 1 (server_args.py), which the
    # pool reproduces; the two READMEs print the value their release chose (0.88 at TP 1, 0.85 at TP 4).
    assert sglang_default_mem_fraction("0.4.4", gpu_mem_mib=None, tp=1) == 0.88
    assert sglang_default_mem_fraction("0.4.3", gpu_mem_mib=None, tp=1) == 0.88
    assert sglang_default_mem_fraction("0.4.3", gpu_mem_mib=None, tp=4) == 0.85
    for name, fraction in (
        ("jerryzsj-my-deepseek-r1_bd9f5c7_qwen2.5-7b_r1-distill_tp1.log", 0.88),
        ("didier-durand-llms-in-clouds_3e1df42_qwen2.5-32b_qwq_tp4.log", 0.85),
    ):
        assert parse_sglang_log(_read(LOGS / name)[1]).mem_fraction_static == fraction


def test_the_pool_is_sized_from_the_smallest_rank():
    # Kimi-K2.5 on 8 MI355X: each rank prints its own free memory and SGLang sizes every pool from the minimum
    # (TP3: 283.53 GB before the weights, 209.96 GB after), whatever order the ranks' lines come in. The ranks
    # printed first (TP7 before, TP1 after) would give about 6000 tokens more than the 2454421 allocated.
    header, body = _read(LOGS / "ajith-sirra-amd-issues_561754c_kimi-k2_k2.5-default-backend_tp8.log")
    model = MODELS[header["model"]]
    for text in (body, "\n".join(reversed(body.splitlines()))):
        log = parse_sglang_log(text)
        assert log.load_begin_avail_bytes == pytest.approx(283.53 * GiB)
        assert log.load_end_avail_bytes == pytest.approx(209.96 * GiB)
        assert "load_end_avail_bytes" in log.conflicts
        found = reconcile_sglang(log, model, **_settings(header))  # type: ignore[arg-type]
        assert {check.kind: check.status for check in found}["max_total_num_tokens"] == "agree"
    fraction = parse_sglang_log(body).mem_fraction_static
    assert fraction == 0.8260405859375
    first_ranks = sglang_startup(
        model, tp=8, mem_fraction_static=fraction, pre_model_load_bytes=283.68 * GiB, post_model_load_bytes=210.38 * GiB
    )
    assert first_ranks.tokens - 2454421 > 5000


def test_sglang_startup_prints_the_llama_load_line_and_pool():
    # sglang PR #4760: 78.59 GiB free before the weights (63.48 after + 15.11), default 0.88 → 442771 tokens,
    # 21 more than the 442750 printed: within the ± 0.005 GB rounding of the two printed values (± 41 tokens).
    run = sglang_startup(
        MODELS["llama-3.1-8b"],
        release="0.4.4",
        pre_model_load_bytes=(63.48 + 15.11) * GiB,
        post_model_load_bytes=63.48 * GiB,
    )
    assert run.mem_fraction_static == 0.88
    lines = run.lines()
    assert (
        "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.48 GB, mem usage=15.11 GB." in lines
    )
    assert abs(run.tokens - 442750) <= 41
    assert "KV Cache is allocated. #tokens: 442750, K size: 27.02 GB, V size: 27.02 GB" in (
        sglang_startup(MODELS["llama-3.1-8b"], max_total_tokens=442750, release="0.4.4").lines()
    )
