"""The paste page reads other engines' start-up lines too (kvcore.detect_engine, ui.engine_logs)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kvcore
from i18n import LANGUAGES, translate
from tests.app.helpers import page_opener

ROOT = Path(__file__).resolve().parents[2]
PAGE = "lessons/vllm_log.py"
open_page = page_opener(PAGE)
#: A real log of each other engine, the model it ran and the page's KV cache choice that matches it.
PASTES = [
    ("trtllm", "trtllm_logs/nvidia-trtllm_4275_llama-3.1-8b_fp8kv_rtx-5090.log", "llama-3.1-8b", "fp8"),
    ("sglang", "sglang_logs/vllm_21348_qwen3-235b-a22b_fp8_tp4.log", "qwen3-235b-a22b", "log"),
    ("llama.cpp", "llamacpp_logs/ik_llama.cpp-issue_822_gpt-oss-20b_iswa-131k-b6699.log", "gpt-oss-20b", "log"),
]


def paste(app, text, **params):
    open_page(app, **params)
    app.text_area(key="vl_text").set_value(text).run()
    return app


@pytest.mark.parametrize(("engine", "file", "model_id", "kv"), PASTES, ids=[row[0] for row in PASTES])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_another_engines_log_is_named_and_checked_by_its_own_rules(app, engine, file, model_id, kv, lang):
    text = (ROOT / "data" / file).read_text(encoding="utf-8")
    # The choice's link holds its label, as the page shows it.
    paste(
        app,
        text,
        lang=lang,
        model=model_id,
        vl_kv_dtype=translate(lang, f"vllm_log.kv_{'fp8' if kv == 'fp8' else 'from_log'}"),
    )
    assert not app.exception, [e.value for e in app.exception]
    name = kvcore.ENGINE_NAMES[engine]
    assert any(f"**{name}**" in info.value for info in app.info)
    [table] = [md.value for md in app.markdown if md.value.startswith("| " + translate(lang, "engine_logs.col_line"))]
    assert translate(lang, "vllm_log.status_agree") in table
    assert translate(lang, "vllm_log.status_differ") not in table


def test_the_trtllm_log_read_as_16_bit_says_what_to_change(app):
    text = (ROOT / "data" / PASTES[0][1]).read_text(encoding="utf-8")
    paste(app, text, model="llama-3.1-8b", vl_kv_dtype=translate("en", "vllm_log.kv_bf16"))
    assert any(caption.value == translate("en", "engine_logs.differ_hint") for caption in app.caption)


def test_a_vllm_log_still_goes_to_the_vllm_reader(app):
    text = (ROOT / "data" / "vllm_logs" / "vllm_10517_llama31_8b_20k.txt").read_text(encoding="utf-8")
    paste(app, text)
    assert not any(translate("en", "engine_logs.col_line") in md.value for md in app.markdown)


def test_a_paste_full_of_markup_is_shown_as_code_never_rendered(app):
    text = (ROOT / "data" / PASTES[0][1]).read_text(encoding="utf-8")
    hostile = text + "\n[TensorRT-LLM][INFO] Number of tokens per block: 32. <script>alert(1)</script> **bold**"
    paste(app, hostile, model="llama-3.1-8b")
    assert not app.exception
    assert any("<script>" in block.value for block in app.code)
    assert not any("<script>" in md.value for md in app.markdown)
