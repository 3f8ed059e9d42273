"""The vLLM log lesson: a pasted log is read and reconciled as kvcore.vllm_log does; nothing pasted breaks it."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

from i18n import LANGUAGES, catalogue, translate
from kvcore.log_lines import MAX_LINES
from kvcore.units import GiB, format_gib, format_tokens
from kvcore.vllm_log import log_flags, parse_vllm_log, reconcile, startup_advice
from tests.app.helpers import TRICKY_PAIRS, metric, page_opener

PAGE = "lessons/vllm_log.py"
LOGS = Path(__file__).resolve().parents[2] / "data" / "vllm_logs"
#: The presets, in order: (excerpt, model id, weights bytes per parameter for the check).
PRESETS = [
    ("vllm_10517_llama31_8b_20k", "llama-3.1-8b", None),
    ("vllm_10517_llama31_8b_29k", "llama-3.1-8b", None),
    ("lmcache_1739_qwen3_14b_v1", "qwen3-14b", None),
    ("mlperf_550_llama31_8b_v1_error", "llama-3.1-8b", None),
    ("vllm_13882_qwen25_7b_negative_kv", "qwen2.5-7b", None),
    ("vllm_pr12569_llama31_70b_w8a8_v1", "llama-3.1-70b", 1.0),
]
STATUS_KEYS = {
    "agree": "vllm_log.status_agree",
    "differ": "vllm_log.status_differ",
    "cannot_check": "vllm_log.status_cannot_check",
}
TRICKY = [
    *TRICKY_PAIRS,
    ("gpt-oss-120b", "mi300x"),
]
GPU_MEMORY_DEFAULT = "rtx-4090"


def excerpt(name: str) -> str:
    """The log as the page loads it: without the data set's "# key: value" header."""
    lines = (LOGS / f"{name}.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not re.match(r"#\s*[a-z][a-z0-9\-]*:", line.strip()))
    return "".join(lines[start:])


open_page = page_opener(PAGE)


def paste(app, text: str):
    return app.text_area(key="vl_text").input(text).run()


def expected(models, gpus, text: str, *, model_id="llama-3.1-8b", gpu_id=GPU_MEMORY_DEFAULT, context=8192, **kw):
    log = parse_vllm_log(text)
    fill = {}
    if log.total_gpu_memory_bytes is None:
        fill["total_gpu_memory_bytes"] = gpus[gpu_id].memory_bytes
    if log.gpu_memory_utilization is None:
        fill["gpu_memory_utilization"] = 0.90
    return log, reconcile(dataclasses.replace(log, **fill), models[model_id], context_tokens=context, **kw)


def check_lines(app) -> list[str]:
    return [md.value for md in app.markdown if "** — " in md.value]


def shown_statuses(app) -> dict[str, str]:
    """Check name → status text, as the page writes them."""
    statuses = {}
    for line in check_lines(app):
        name, _, status = line.partition("** — ")
        statuses[name.split("**", 1)[1]] = status
    return statuses


def kvcore_statuses(result) -> dict[str, str]:
    return {
        translate("en", f"vllm_log.check_{check.kind}"): translate("en", STATUS_KEYS[check.status])
        for check in result.checks
        if not (check.status == "cannot_check" and check.reason == "not_in_log" and check.logged is None)
    }


def test_the_default_page_reads_issue_10517_and_shows_kvcores_advice(app, models, gpus):
    open_page(app)
    assert not app.exception
    _, result = expected(models, gpus, excerpt(PRESETS[0][0]))
    assert metric(app, "vllm_log.metric_longest") == format_tokens(result.advice.longest_context_tokens)
    assert metric(app, "vllm_log.metric_users", context="8,192") == f"{result.advice.users_at_context:,.2f}"
    assert metric(app, "vllm_log.metric_fp8") == format_tokens(result.advice.fp8_longest_context_tokens)
    assert shown_statuses(app) == kvcore_statuses(result)
    assert shown_statuses(app)["GPU blocks"] == "agrees"


def test_moving_the_context_slider_changes_the_users_that_fit(app, models, gpus):
    open_page(app)
    app.slider(key="vl_context").set_value(4096).run()
    _, result = expected(models, gpus, excerpt(PRESETS[0][0]), context=4096)
    assert metric(app, "vllm_log.metric_users", context="4,096") == f"{result.advice.users_at_context:,.2f}"


@pytest.mark.parametrize(("index", "preset"), list(enumerate(PRESETS)), ids=[name for name, *_ in PRESETS])
def test_each_preset_fills_the_log_picks_its_model_and_shows_kvcores_statuses(app, models, gpus, index, preset):
    name, model_id, weights = preset
    open_page(app)
    app.button(key=f"vl_presets_{index}").click().run()
    assert not app.exception
    assert app.session_state["model"] == model_id
    assert app.text_area(key="vl_text").value == excerpt(name)
    _, result = expected(models, gpus, excerpt(name), model_id=model_id, weights_bytes_per_param=weights)
    assert shown_statuses(app) == kvcore_statuses(result)


def test_the_29k_log_says_it_does_not_fit_and_names_a_utilisation(app, models, gpus):
    open_page(app)
    app.button(key="vl_presets_1").click().run()
    _, result = expected(models, gpus, excerpt(PRESETS[1][0]))
    util = result.advice.gpu_memory_utilization_to_fit
    assert util is not None and util <= 1.0
    [warning] = [w.value for w in app.warning if w.value.startswith("**It does not fit.**")]
    assert f"**{util:.2f}**" in warning


def test_an_fp8_override_makes_the_bytes_per_token_differ(app, models, gpus):
    open_page(app)
    app.button_group(key="vl_kv_dtype").set_value("fp8").run()
    _, result = expected(models, gpus, excerpt(PRESETS[0][0]), kv_bytes_per_value=1.0)
    assert result.check("bytes_per_token").status == "differ"
    assert shown_statuses(app)["Bytes per token"] == "differs"


def test_a_pasted_log_lists_its_numbers_and_its_ignored_lines(app):
    open_page(app)
    text = (
        "INFO 10-03 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n"
        "hello there\n"
        "INFO 10-03 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n"
    )
    paste(app, text)
    assert not app.exception
    table = app.dataframe[0].value
    fields = dict(zip(table["Field"], table["Value"], strict=True))
    assert fields["gpu_kv_cache_tokens"] == "42,656"
    assert fields["available_kv_cache_bytes"] == "6.51 GiB"
    assert list(table["Line"]) == [1, 3]
    assert [code.value for code in app.code] == ["hello there"]


def test_pasted_markup_is_shown_as_text_never_rendered(app):
    open_page(app)
    text = "<script>alert(1)</script>\n[x](javascript:alert(1))\n**bold** GPU KV cache size: 1,024 tokens <b>x</b>"
    paste(app, text)
    assert not app.exception
    rendered = [md.value for md in app.markdown] + [c.value for c in app.caption] + [w.value for w in app.warning]
    assert not [value for value in rendered if "<script>" in value or "javascript:" in value or "<b>" in value]
    assert app.code[0].value == "<script>alert(1)</script>\n[x](javascript:alert(1))"
    assert "<b>x</b>" in app.dataframe[0].value["Text"][0]


def test_a_megabyte_of_junk_is_truncated_without_an_exception(app):
    open_page(app)
    # More than the box takes (a browser stops at max_chars; the session can still hold more).
    app.session_state["vl_text"] = ("junk \x1b[31m<i>ß</i> " * 40 + "\n") * 3000
    app.run()
    assert not app.exception
    assert any(w.value.startswith("The text is long") for w in app.warning)
    assert any(i.value.startswith("No line here looks like") for i in app.info)


def test_more_lines_than_the_parser_reads_are_cut_with_a_notice(app):
    open_page(app)
    paste(app, "x\n" * (MAX_LINES + 10))
    assert not app.exception
    assert any(w.value.startswith("The text is long") for w in app.warning)
    assert app.code[0].value == "\n".join(["x"] * MAX_LINES)


def test_an_empty_box_asks_for_a_log_and_still_teaches(app):
    open_page(app)
    paste(app, "")
    assert not app.exception
    assert any(i.value.startswith("No line here looks like") for i in app.info)
    assert app.latex and app.slider(key="vl_context")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_runs_in_both_languages(app, lang):
    open_page(app, lang=lang)
    assert not app.exception
    assert app.title[0].value == translate(lang, "vllm_log.title")


@pytest.mark.parametrize(("model_id", "gpu_id"), TRICKY)
def test_tricky_models_never_break_the_page(app, model_id, gpu_id):
    open_page(app, model=model_id, gpu=gpu_id)
    assert not app.exception, [e.value for e in app.exception]
    starts = tuple(translate(lang, "error.bad_combination", detail="")[:20] for lang in LANGUAGES)
    assert not [error for error in app.error if error.value.startswith(starts)]


def test_the_utilisation_to_type_keeps_its_point_in_portuguese(app, models, gpus):
    """A flag's value is typed into a command: vLLM rejects "0,95", so pt prose keeps "0.95" there (issue 15)."""
    open_page(app, lang="pt")
    app.button(key="vl_presets_1").click().run()
    _, result = expected(models, gpus, excerpt(PRESETS[1][0]))
    util = result.advice.gpu_memory_utilization_to_fit
    assert util is not None
    [warning] = [w.value for w in app.warning if "--gpu-memory-utilization" in w.value]
    assert f"**{util:.2f}**" in warning
    assert f"**{util:.2f}**".replace(".", ",") not in warning


# --- a log that cannot be the model's, the release, and advice from one budget -----------------------


def planned(models, gpus, text: str, *, model_id="llama-3.1-8b", gpu_id=GPU_MEMORY_DEFAULT, **kw):
    """kvcore's one-budget advice for `text`, as the page builds it."""
    log = parse_vllm_log(text)
    return startup_advice(log, models[model_id], gpus[gpu_id], flags=log_flags(log, text), **kw)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_log_of_another_model_says_so_at_the_top_and_agrees_on_nothing(app, models, lang):
    # The default log is Llama 3.1 8B's (issue 10517); Qwen3-8B stores 144 KiB per token, not 128.
    open_page(app, lang=lang, model="qwen3-8b")
    assert not app.exception
    start = translate(lang, "vllm_log.model_mismatch", model="Qwen3 8B", implied="", low="", high="", stores="",
                      ratio="", tp="", b="").split("**")[1]  # fmt: skip
    assert app.error and app.error[0].value.startswith(f"**{start}")
    assert "144" in app.error[0].value and "127" in app.error[0].value
    agrees = translate(lang, "vllm_log.status_agree")
    weights = translate(lang, "vllm_log.check_weights_bytes")
    assert not [line for line in check_lines(app) if line.endswith(f"— {agrees}") and weights not in line]
    assert any(info.value == translate(lang, "vllm_log.advice_needs_model") for info in app.info)


def test_the_right_model_shows_no_mismatch(app):
    open_page(app)
    assert not [error for error in app.error if "cannot come from" in error.value]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_release_is_read_from_the_logs_format(app, lang):
    open_page(app, lang=lang)
    expected_caption = translate(
        lang,
        "vllm_log.release_inferred",
        release="0.6.4.post1",
        era="V0",
        evidence=translate(lang, "vllm_log.evidence_profiling_results"),
    )
    assert expected_caption in [caption.value for caption in app.caption]


def test_the_advice_comes_from_vllms_budget_for_the_logs_settings(app, models, gpus):
    open_page(app)
    app.button(key="vl_presets_1").click().run()
    plan = planned(models, gpus, excerpt(PRESETS[1][0]), gpu_id="rtx-3090")  # the preset sets the log's GPU
    assert not plan.fits and plan.utilization_to_fit is not None and plan.longest_max_model_len is not None
    [warning] = [w.value for w in app.warning if w.value.startswith("**It does not fit.**")]
    assert f"`--gpu-memory-utilization` to **{plan.utilization_to_fit:.2f}**" in warning
    assert f"`--max-model-len` to **{plan.longest_max_model_len}**" in warning
    assert translate("en", "vllm_log.advice_fp8" if plan.fp8_fits else "vllm_log.advice_fp8_not") in warning
    assert f"`--tensor-parallel-size {plan.tp_to_fit}`" in warning
    # Beside the log's pool, the estimate the advice comes from, with its terms.
    assert metric(app, "vllm_log.metric_log_pool") == format_gib(2.89 * GiB)
    assert metric(app, "vllm_log.metric_estimate_pool") == format_gib(plan.estimate.log.kv_pool_bytes)
    [table] = [table.value for table in app.table]
    terms = dict(zip(table["Budget term"], table["Memory"], strict=True))
    assert terms["Weights"] == "− " + format_gib(plan.estimate.log.weights_bytes)
    assert terms["= KV pool"] == format_gib(plan.estimate.log.kv_pool_bytes)
    assert any(f"vLLM {plan.estimate.release.label} ({plan.estimate.release.era})" in c.value for c in app.caption)


def test_the_advice_keeps_points_in_flags_in_portuguese(app, models, gpus):
    open_page(app, lang="pt")
    app.button(key="vl_presets_1").click().run()
    plan = planned(models, gpus, excerpt(PRESETS[1][0]), gpu_id="rtx-3090")  # the preset sets the log's GPU
    [warning] = [w.value for w in app.warning if w.value.startswith("**Não cabe.**")]
    assert f"`--gpu-memory-utilization` para **{plan.utilization_to_fit:.2f}**" in warning
    assert f"`--tensor-parallel-size {plan.tp_to_fit}`" in warning


def test_a_model_no_setting_fits_is_never_advised_zero(app, models, gpus):
    open_page(app, model="llama-3.1-405b")
    text = "Available KV cache memory: -120.00 GiB\nMaximum concurrency for 8,192 tokens per request: 0.00x"
    paste(app, text)
    assert not app.exception
    plan = planned(models, gpus, text, model_id="llama-3.1-405b")
    assert plan.utilization_to_fit is None and plan.longest_max_model_len is None
    shown = " ".join(w.value for w in app.warning)
    assert translate("en", "vllm_log.advice_utilization_none", top="0.98") in shown
    assert translate("en", "vllm_log.advice_nothing_fits") in shown
    assert "to **0**" not in shown and "**-" not in shown


def test_settings_kvcore_cannot_estimate_give_a_notice_not_a_traceback(app):
    open_page(app)
    paste(app, "--pipeline-parallel-size 99\nGPU KV cache size: 1,024 tokens")
    assert not app.exception
    start = translate("en", "vllm_log.estimate_failed", detail="")
    assert any(e.value.startswith(start) and len(e.value) > len(start) for e in app.error)


def test_the_predict_box_asks_about_the_pool_the_metric_shows(app, models, gpus):
    """The box's budget is the log's blocks: typing the floor of the page's "users" metric is right."""
    open_page(app)
    _, result = expected(models, gpus, excerpt(PRESETS[0][0]))
    users = result.advice.users_at_context
    assert metric(app, "vllm_log.metric_users", context="8,192") == f"{users:,.2f}"
    [key] = {w.key.removesuffix("_answer") for w in app.text_input if w.key and w.key.startswith("pv_vllm_log_")}
    app.text_input(key=f"{key}_answer").input(str(math.floor(users)))
    app.button(key=f"{key}_check").click().run()
    right = catalogue("en")["practice.verdict_right"].split("{", 1)[0]
    assert any(message.value.startswith(right) for message in app.success)


def test_a_preset_pastes_the_log_alone_and_picks_the_gpu_it_ran_on(app):
    open_page(app)
    app.button(key="vl_presets_0").click().run()
    assert app.session_state["gpu"] == "rtx-3090"  # its header: "# gpu: rtx-3090"
    assert not any(line.startswith("# ") for line in app.text_area(key="vl_text").value.splitlines())
