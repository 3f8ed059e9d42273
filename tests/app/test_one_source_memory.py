"""One source of truth for memory: the CLI and the pages agree on the pool, tokens, users, blocks and concurrency.

Each case runs ``python -m kvcore capacity … --json`` (``kvcore.cli.main``) and opens the pages on the
same model, GPU and knobs, then compares what they show with what the CLI printed, formatted the way
the page formats it. The first case is the sidebar's default (Llama 3.1 8B on an RTX 4090, 8,192 tokens
per user): before one budget, the memory calculator said 8.04 GiB and 8 users, GQA/MQA/MLA 9.04 GiB and
9 users, quantization and sizing 5.64 GiB and 5 users. With the shared defaults (u = 0.9, 1 GiB of
overhead) every page that sizes a server says 5.64 GiB and 5 users; the memory calculator counts the
whole card on purpose, says so, and gives the server's figure beside its own.
"""

from __future__ import annotations

import pytest

import kvcore
from i18n import catalogue
from kvcore.units import format_gib, format_tokens
from tests.app.helpers import cli_json, metric, open_page

CONTEXT = 8192
#: (model, GPU, tensor-parallel size): dense GQA, sliding window, MoE, MoE + sliding (MXFP4), MLA over 8 GPUs.
CASES = [
    ("llama-3.1-8b", "rtx-4090", 1),
    ("gemma-3-27b", "h100-sxm", 1),
    ("qwen3-30b-a3b", "a100-80gb", 1),
    ("gpt-oss-20b", "rtx-4090", 1),
    ("deepseek-v3", "h200", 8),
]
ONE_GPU = [case for case in CASES if case[2] == 1]


def capacity(capsys, model_id: str, gpu_id: str, tp: int = 1, *extra: str) -> dict:
    """The JSON object `python -m kvcore capacity … --json` prints for the page's context."""
    return cli_json(
        capsys,
        "capacity",
        *("--model", model_id, "--gpu", gpu_id, "--tp", str(tp)),
        *("--context", str(CONTEXT), "--max-model-len", str(CONTEXT)),
        # The sizing page's budget is the seed's rule (VRAM · u − weights − 1 GiB): ask the CLI for that rule.
        *("--overhead-gib", str(kvcore.DEFAULT_OVERHEAD_BYTES / 2**30)),
        *extra,
    )


def test_the_sidebars_default_is_5_64_gib_and_5_users_in_the_cli(capsys):
    result = capacity(capsys, "llama-3.1-8b", "rtx-4090")
    assert format_gib(result["kv_pool_bytes"]) == "5.64 GiB"
    assert result["users_that_fit"] == 5
    assert result["budget"]["overhead"] == kvcore.DEFAULT_OVERHEAD_BYTES


@pytest.mark.parametrize(("model_id", "gpu_id", "tp"), CASES)
def test_the_sizing_page_shows_the_clis_pool_tokens_and_users(app, capsys, model_id, gpu_id, tp):
    result = capacity(capsys, model_id, gpu_id, tp)
    open_page(app, "lessons/sizing.py", model=model_id, gpu=gpu_id, sz_context=str(CONTEXT), sz_tp=str(tp))
    assert metric(app, "sizing.metric_pool") == format_gib(result["kv_pool_bytes"])
    assert metric(app, "sizing.metric_tokens") == format_tokens(result["tokens_that_fit"])
    assert metric(app, "sizing.metric_fit", context=format_tokens(CONTEXT)) == format_tokens(result["users_that_fit"])


@pytest.mark.parametrize(("model_id", "gpu_id", "tp"), ONE_GPU)
def test_the_quantization_page_fits_the_clis_users(app, capsys, model_id, gpu_id, tp):
    result = capacity(capsys, model_id, gpu_id, tp)
    open_page(app, "lessons/kv_quantization.py", model=model_id, gpu=gpu_id, kq_context=str(CONTEXT))
    assert metric(app, "kv_quantization.metric_fit_bf16") == format_tokens(result["users_that_fit"])
    assert f"**{format_gib(result['kv_pool_bytes'])}**" in room_text(app, "kv_quantization.room_text")


@pytest.mark.parametrize(("model_id", "gpu_id", "tp"), ONE_GPU)
def test_the_attention_variants_page_leaves_the_clis_room(app, capsys, model_id, gpu_id, tp):
    result = capacity(capsys, model_id, gpu_id, tp)
    open_page(app, "lessons/attention_variants.py", model=model_id, gpu=gpu_id, av_context=str(CONTEXT))
    if result["kv_pool_bytes"] > 0:
        assert f"**{format_gib(result['kv_pool_bytes'])}**" in room_text(app, "attention_variants.fit_summary")


def test_the_attention_variants_page_fits_the_clis_users_for_the_default(app, capsys):
    # Llama 3.1 8B is itself GQA with 8 KV heads: the page's GQA variant at its default heads is the model.
    result = capacity(capsys, "llama-3.1-8b", "rtx-4090")
    open_page(app, "lessons/attention_variants.py", av_context=str(CONTEXT))
    text = room_text(app, "attention_variants.fit_summary")
    assert f"**{format_tokens(result['users_that_fit'])}** with GQA" in text


@pytest.mark.parametrize(("model_id", "gpu_id", "tp"), ONE_GPU)
def test_the_memory_calculator_states_the_whole_card_and_the_servers_view(app, capsys, model_id, gpu_id, tp):
    served = capacity(capsys, model_id, gpu_id, tp)
    whole = capacity(capsys, model_id, gpu_id, tp, "--gpu-memory-utilization", "1")
    open_page(app, None, model=model_id, gpu=gpu_id, context=str(CONTEXT))
    caption = next(c.value for c in app.caption if c.value.startswith(start("memory.assumptions")))
    assert f"**{format_gib(max(whole['kv_pool_bytes'], 0.0))}**" in caption
    assert f"**{format_tokens(whole['users_that_fit'])}** users" in caption
    assert f"**{format_gib(max(served['kv_pool_bytes'], 0.0))}**" in caption
    assert f"**{format_tokens(served['users_that_fit'])}** users." in caption


@pytest.mark.parametrize(("model_id", "gpu_id", "tp"), CASES)
def test_the_vllm_pool_page_shows_the_clis_blocks_tokens_and_concurrency(app, capsys, model_id, gpu_id, tp):
    # The page and `capacity` without --overhead-gib estimate the same start-up: the newest modelled
    # vLLM release on this GPU (kvcore.vllm_startup), every term from the GPU alone.
    result = cli_json(
        capsys,
        "capacity",
        *("--model", model_id, "--gpu", gpu_id, "--tp", str(tp)),
        *("--context", str(CONTEXT), "--max-model-len", str(CONTEXT)),
    )
    assert result["vllm_version"] == kvcore.NEWEST_RELEASE
    open_page(app, "lessons/vllm_pool.py", model=model_id, gpu=gpu_id, vp_max_model_len=str(CONTEXT), vp_tp=str(tp))
    assert metric(app, "vllm_pool.metric_pool") == format_gib(result["kv_pool_bytes"])
    assert metric(app, "vllm_pool.metric_blocks") == format_tokens(result["num_blocks"])
    assert metric(app, "vllm_pool.metric_tokens") == format_tokens(result["tokens"])
    shown = metric(app, "vllm_pool.metric_concurrency", length=format_tokens(CONTEXT))
    assert shown == f"{result['max_concurrency']:.2f}×"


def start(key: str) -> str:
    """A catalogue text up to its first placeholder."""
    return catalogue("en")[key].split("{", 1)[0]


def room_text(app, key: str) -> str:
    """The one markdown block that starts like the catalogue text `key`."""
    [text] = [block.value for block in app.markdown if block.value.startswith(start(key))]
    return text
