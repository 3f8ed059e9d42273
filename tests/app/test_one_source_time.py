"""One time model: the CLI and the app's pages show the same TTFT and time per output token.

Each case runs ``python -m kvcore`` (``kvcore.cli.main(... --json)``) and opens a page on the
same inputs; the page's metric must be the CLI's float rendered the same way. Both call
``kvcore.timing`` with its named defaults (``DEFAULT_MFU``/``DEFAULT_MBU``: the datasheet
bound; ``TYPICAL_MFU``/``TYPICAL_MBU``: where the Prefill vs decode lesson starts), and each
page states which it uses beside the number.
"""

from __future__ import annotations

import pytest

import kvcore
from course import exercises
from kvcore import timing
from kvcore.units import format_seconds, format_tokens
from tests.app.helpers import caption_with, cli_json, metric, open_page

PREFILL_DECODE = "lessons/prefill_decode.py"
DECODE_SPEED = "lessons/decode_speed.py"


def efficiencies(*, mfu: float, mbu: float) -> list[str]:
    """The CLI flags for the page's efficiencies."""
    return ["--mfu", f"{mfu:g}", "--efficiency", f"{mbu:g}"]


# ---------------------------------------------------------------- the two disagreements


def test_a_128_token_prefill_on_an_h100_takes_the_lessons_4_80_ms_in_the_cli_too(app, capsys):
    # Before: the CLI divided FLOPs by the peak only (2.08 ms, yet "bound": "memory"); the roofline
    # max(2.08 ms of compute, 16.06 GB / 3.35 TB/s = 4.80 ms of reading) is the lesson's 4.80 ms.
    result = cli_json(
        capsys, "prefill", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "128", "--mfu", "1"
    )
    assert result["ttft_s"] == pytest.approx(4.80e-3, abs=0.01e-3)
    assert result["compute_time_s"] == pytest.approx(2.08e-3, abs=0.01e-3)
    assert result["bound"] == "memory"
    open_page(app, PREFILL_DECODE, gpu="h100-sxm", pd_prompt="128", pd_mfu="1.0", pd_mbu="1.0")
    assert metric(app, "prefill_decode.metric_ttft") == format_seconds(result["ttft_s"])


def test_the_default_decode_pages_differ_only_by_their_stated_shared_assumptions(app, capsys):
    # Llama 3.1 8B on an RTX 4090 (1,008 GB/s), one user. Bandwidth-limited decode: 8,192 tokens at
    # MBU 1 (the datasheet bound), (16.06 GB + 8,192 · 131,072 B) / 1,008 GB/s = 17.0 ms. Prefill vs
    # decode: a 1,024-token prompt and 300 output tokens, so the middle step attends over 1,174 tokens,
    # at MBU 0.8 (typical kernels): (16.06 GB + 1,174 · 131,072 B) / (1,008 GB/s · 0.8) = 20.1 ms.
    bound = cli_json(capsys, "decode", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--context", "8192")
    typical = cli_json(
        capsys, "decode", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--context", "1174",
        *efficiencies(mfu=timing.TYPICAL_MFU, mbu=timing.TYPICAL_MBU),
    )  # fmt: skip
    assert format_seconds(bound["step_time_s"]) == "17 ms"
    assert format_seconds(typical["step_time_s"]) == "20.1 ms"

    open_page(app, DECODE_SPEED)
    assert metric(app, "decode_speed.metric_step") == format_seconds(bound["step_time_s"])
    stated = caption_with(app, "Assumed: MBU")
    assert f"MBU **{timing.DEFAULT_MBU:g}** and MFU **{timing.DEFAULT_MFU:g}**" in stated
    assert f"**{format_tokens(8192)} tokens** of context" in stated

    open_page(app, PREFILL_DECODE)
    assert metric(app, "prefill_decode.metric_tpot") == format_seconds(typical["step_time_s"])
    stated = caption_with(app, "Assumed: MFU")
    assert f"MFU **{timing.TYPICAL_MFU:g}** and MBU **{timing.TYPICAL_MBU:g}**" in stated
    assert f"**{format_tokens(1174)} tokens**" in stated


# ---------------------------------------------------------------- many models and GPUs

PREFILL_CASES = [
    # dense GQA, MLA, sliding window (Gemma 3: 5 sliding + 1 full; gpt-oss: alternating), MoE, MLA + MoE.
    ("llama-3.1-8b", "rtx-4090", 4096, 300, 1, "bf16"),
    ("llama-3.1-70b", "h100-sxm", 2048, 200, 4, "fp8"),
    ("deepseek-v3", "b200", 8192, 500, 1, "fp8"),
    ("gemma-3-27b", "a100-80gb", 16384, 300, 1, "bf16"),
    ("gpt-oss-120b", "h100-sxm", 1024, 400, 8, "int4"),
    ("qwen3-next-80b-a3b", "mi300x", 32768, 300, 1, "bf16"),
]


@pytest.mark.parametrize(("model", "gpu", "prompt", "output", "batch", "weights"), PREFILL_CASES)
def test_the_prefill_lesson_and_the_cli_give_the_same_ttft_and_time_per_token(
    app, capsys, model, gpu, prompt, output, batch, weights
):
    rates = efficiencies(mfu=timing.TYPICAL_MFU, mbu=timing.TYPICAL_MBU)
    common = ["--model", model, "--gpu", gpu, "--weight-dtype", weights, "--kv-dtype", "bf16", *rates]
    prefill = cli_json(capsys, "prefill", *common, "--prompt", str(prompt))
    middle = kvcore.mean_decode_context_tokens(prompt_tokens=prompt, output_tokens=output)
    decode = cli_json(capsys, "decode", *common, "--context", f"{float(middle):g}", "--batch", str(batch))

    open_page(
        app, PREFILL_DECODE, model=model, gpu=gpu, pd_prompt=str(prompt), pd_output=str(output),
        pd_batch=str(batch), pd_weights=weights,
    )  # fmt: skip
    assert not app.exception and not app.error
    assert metric(app, "prefill_decode.metric_ttft") == format_seconds(prefill["ttft_s"])
    # The page shows the mean of the answer's steps; while one roof binds the step time is linear in the
    # context, so the mean is the middle step, which the CLI times.
    assert metric(app, "prefill_decode.metric_tpot") == format_seconds(decode["step_time_s"])


DECODE_CASES = [
    ("llama-3.1-8b", "h100-sxm", 32768, 32, 1),
    ("llama-3.1-70b", "h100-sxm", 131072, 1, 8),
    ("deepseek-v3", "mi300x", 65536, 4, 8),
    ("gemma-3-27b", "rtx-4090", 8192, 2, 1),
    ("gpt-oss-20b", "rtx-4090", 16384, 16, 1),
    ("qwen3-next-80b-a3b", "a100-80gb", 4096, 256, 2),
    ("gpt-oss-20b", "rtx-4090", 1024, 256, 1),  # compute-bound: see below
]


@pytest.mark.parametrize(("model", "gpu", "context", "batch", "tp"), DECODE_CASES)
def test_the_decode_lesson_and_the_cli_give_the_same_time_per_token(app, capsys, model, gpu, context, batch, tp):
    result = cli_json(
        capsys, "decode", "--model", model, "--gpu", gpu, "--context", str(context), "--batch", str(batch),
        "--tp", str(tp),
    )  # fmt: skip
    open_page(app, DECODE_SPEED, model=model, gpu=gpu, ds_context=str(context), ds_batch=str(batch), ds_tp=str(tp))
    assert not app.exception and not app.error
    assert metric(app, "decode_speed.metric_step") == format_seconds(result["step_time_s"])


def test_a_compute_bound_decode_step_is_the_same_on_the_page_and_in_the_cli(app, capsys):
    # Falcon 7B (one KV head: 8 KiB a token) on an RTX 4090, 256 users at 1,024 tokens: ≈ 16.5 ms of reading,
    # ≈ 23.3 ms of compute, so the roofline takes the compute term. (gpt-oss-20b was the case until a batch of
    # 256 was read as touching nearly all its 32 experts: now memory-bound.)
    result = cli_json(
        capsys, "decode", "--model", "falcon-7b", "--gpu", "rtx-4090", "--context", "1024", "--batch", "256"
    )
    assert result["bound"] == "compute" and result["step_time_s"] == result["compute_time_s"]
    open_page(app, DECODE_SPEED, model="falcon-7b", gpu="rtx-4090", ds_context="1024", ds_batch="256")
    assert metric(app, "decode_speed.metric_step") == format_seconds(result["step_time_s"])
    assert any(f"take **{format_seconds(result['compute_time_s'])}**" in md.value for md in app.markdown)


# ---------------------------------------------------------------- the exercises use the same model and defaults


@pytest.mark.parametrize(("model", "gpu", "context", "batch", "tp"), DECODE_CASES)
def test_the_decode_exercise_answers_what_the_cli_and_the_decode_lesson_show(
    capsys, models, gpus, model, gpu, context, batch, tp
):
    # The predict box of the decode lesson asks this exercise on the page's own settings (at the page's
    # default MBU, the datasheet bound the question states).
    result = cli_json(
        capsys, "decode", "--model", model, "--gpu", gpu, "--context", str(context), "--batch", str(batch),
        "--tp", str(tp),
    )  # fmt: skip
    asked = exercises.exercise_for(
        "decode_ms_per_token", model=models[model], gpu=gpus[gpu], context_tokens=context, batch=batch, gpus=tp
    )
    assert asked.answer_value == 1e3 * result["step_time_s"]


@pytest.mark.parametrize(("model", "gpu", "prompt", "output", "batch", "weights"), PREFILL_CASES)
def test_the_prefill_exercise_answers_what_the_cli_shows(
    capsys, models, gpus, model, gpu, prompt, output, batch, weights
):
    result = cli_json(
        capsys, "prefill", "--model", model, "--gpu", gpu, "--weight-dtype", weights, "--prompt", str(prompt)
    )
    asked = exercises.exercise_for(
        "prefill_ttft", model=models[model], gpu=gpus[gpu], prompt_tokens=prompt, weights_dtype=weights
    )
    assert asked.answer_value == 1e3 * result["ttft_s"]
