"""The formula with the learner's numbers: kvcore's results, readable units, local decimal marks."""

import kvcore
from ui.formula import formula_terms, latex_number, result_latex


def test_a_small_formula_term_is_shown_in_mib_not_as_zero_gib():
    assert result_latex(9_437_184) == r"= \mathbf{9}\ \text{MiB}"


def test_portuguese_formula_numbers_use_a_decimal_comma_protected_from_latex_spacing():
    assert result_latex(1.625 * 2**30, lang="pt") == r"= \mathbf{1{,}62}\ \text{GiB}"
    assert latex_number(8192, "pt") == "8.192"
    assert latex_number(8192, "en") == "8{,}192"


def test_one_term_per_layer_kind_and_the_terms_are_kvcores_parts():
    gemma = kvcore.load_models()["gemma-3-27b"]
    terms = formula_terms(gemma, context_tokens=65_536, concurrency=4, bytes_per_value=2.0)
    parts = kvcore.kv_cache_bytes_by_kind(gemma, context_tokens=65_536, concurrency=4, bytes_per_value=2.0)
    assert [(term.kind, term.layers) for term in terms] == [("sliding", 52), ("full", 10)]
    assert [term.kv_bytes for term in terms] == [float(parts["sliding"]), float(parts["full"])]
    assert r"\min(65{,}536, 1{,}024)" in terms[0].substituted
