"""The engines' answer under the memory calculator and the sizing page (ui.engine_table)."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES, translate
from tests.app.helpers import open_page


def engine_table(app, lang="en"):
    [table] = [
        md.value for md in app.markdown if md.value.startswith("| " + translate(lang, "engine_table.col_engine"))
    ]
    return table


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", ["lessons/memory.py", "lessons/sizing.py"])
def test_every_engine_has_a_row_with_kvcores_numbers(app, models, gpus, page, lang):
    open_page(app, page, lang=lang)
    assert not app.exception
    table = engine_table(app, lang)
    rows = kvcore.compare_engines(models["llama-3.1-8b"], gpus[app.session_state["gpu"]], context_tokens=8192)
    for row in rows:
        assert f"{kvcore.ENGINE_NAMES[row.engine]} {row.startup.release}" in table


def test_the_sizing_page_asks_each_engine_about_its_own_users(app):
    open_page(app, "lessons/sizing.py", sz_users="4", sz_context="8192")
    table = engine_table(app)
    assert translate("en", "engine_table.col_enough", users="4 users") in table
    # Material icons, not emoji (a browser without an emoji font draws those as boxes).
    assert ":material/check_circle:" in table and "✅" not in table


def test_an_apple_gpu_says_which_engines_have_no_backend(app):
    open_page(app, "lessons/memory.py", gpu="m4-max-128gb")
    table = engine_table(app)
    assert table.count(translate("en", "engine_table.no_backend")) == 3  # vLLM, SGLang, TensorRT-LLM
    assert "llama.cpp" in table


def test_the_link_opens_the_engines_lesson_with_these_settings(app):
    open_page(app, "lessons/sizing.py", sz_context="16384")
    [link] = [link for link in app.get("page_link") if link.proto.label == translate("en", "engine_table.link")]
    assert link.proto.page == "engines"
    assert link.proto.query_string == "eg_context=16384&eg_gpus=1&eg_cache=16"
