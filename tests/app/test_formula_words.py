"""The words inside a formula are in the reader's language: t_cálculo, not t_compute, on a Portuguese page.

Symbols (n_kv, d_head, W, BW), units, acronyms (MBU, TTFT), config names (block\\_size,
max\\_num\\_seqs) and the words Portuguese shares with English (pool, cache, bytes, token)
stay as they are; each English word below comes from the catalogues' ``formula.*`` keys.
"""

from __future__ import annotations

import re

import pytest

import kvcore
from course import worked
from i18n import translate
from tests.app.helpers import open_page
from ui import formula

#: The English words a formula used to show in Portuguese too, each a ``formula.<word>`` key now.
ENGLISH_WORDS = frozenset(
    {
        "compute", "memory", "step", "ridge", "state", "standard", "scale", "blocks", "full", "sliding", "needed",
        "estimate", "graph", "reserve", "cells", "layers", "row", "users", "concurrency", "context", "before",
        "static", "peak", "free",
    }
)  # fmt: skip
#: Words in LaTeX that are not a command's name (\frac, \text, \cdot …).
WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-zÀ-ÿ]+")
#: Pages whose formulas hold words, opened so that every formula with a word shows (engines, kinds of layer).
FORMULA_PAGES = [
    ("lessons/prefill_decode.py", {}),
    ("lessons/decode_speed.py", {}),
    *[("lessons/engines.py", {"eg_engine": engine}) for engine in kvcore.ENGINES],
    ("lessons/local_llm.py", {"lo_engine": "Ollama"}),
    ("lessons/local_llm.py", {"lo_engine": "llama.cpp"}),
    ("lessons/flash_attention.py", {}),
    ("lessons/kv_quantization.py", {"model": "qwen3-next-80b-a3b"}),
    ("lessons/vllm_pool.py", {}),
    ("lessons/why_cache.py", {"model": "gemma-3-27b"}),
    ("lessons/memory.py", {"model": "qwen3-next-80b-a3b"}),
]


def english_words(latex: str) -> set[str]:
    return {word for word in WORD.findall(latex) if word in ENGLISH_WORDS}


def page_latex(app) -> list[str]:
    return [element.value for element in app.latex]


def test_every_replaced_word_has_a_catalogue_key_in_both_languages():
    for word in ENGLISH_WORDS:
        assert translate("en", f"formula.{word}") == word
        assert english_words(translate("pt", f"formula.{word}")) == set(), word


@pytest.mark.parametrize(("page", "params"), FORMULA_PAGES)
def test_portuguese_formulas_hold_no_english_words(app, page, params):
    open_page(app, page, lang="pt", **params)
    assert not app.exception, [exception.value for exception in app.exception]
    shown = page_latex(app)
    assert shown, page
    assert [(latex, english_words(latex)) for latex in shown if english_words(latex)] == []


@pytest.mark.parametrize(("page", "params"), FORMULA_PAGES)
def test_the_same_formulas_in_english_use_the_english_words(app, page, params):
    open_page(app, page, lang="en", **params)
    assert set().union(*map(english_words, page_latex(app))), page


def roofline_steps() -> tuple:
    rates = kvcore.rates_for(kvcore.load_gpus()["h100-sxm"], weights_dtype="bf16", mfu=0.5, mbu=0.8)
    flops = worked.Quantity(symbol="FLOPs", value=1e12, unit="FLOP")
    moved = worked.Quantity(symbol="bytes", value=1e10, unit="B")
    return worked.roofline("TTFT", flops=flops, moved=moved, rates=rates, efficiencies=True), rates


def test_the_roofline_subscripts_read_calculo_and_memoria_in_portuguese():
    lines, rates = roofline_steps()
    shown = formula.roofline_latex(lines, name="TTFT", lang="pt")
    assert r"t_\text{cálculo}" in shown and r"t_\text{memória}" in shown
    assert r"t_\text{compute}" in formula.roofline_latex(lines, name="TTFT", lang="en")
    ridge = worked.ridge(peak_flop_per_s=rates.peak_flop_per_s, bandwidth_bytes_per_s=rates.bandwidth_bytes_per_s)
    assert formula.ridge_latex(ridge, lang="pt").startswith(r"\text{equilíbrio} = ")


def test_the_linear_layers_state_is_named_in_the_language():
    assert english_words(formula.kind_symbolic("linear", "pt")) == set()
    assert r"\text{estado}" in formula.kind_symbolic("linear", "pt")
    assert formula.kind_symbolic("linear", "en") == r"L \cdot \text{state} \cdot B \cdot b_{\text{state}}"
    assert formula.kind_symbolic("full", "pt") == formula.SYMBOLIC_BY_KIND["full"]
