"""One word per concept in each language (issue 15), as the README's terminology table lists them.

Every catalogue string (lessons, quizzes, glossary, errors: all of them live in i18n/) is
scanned for the other variants of a term: "cache KV" for "KV cache", "lote" for "batch",
"a FlashAttention" for "o FlashAttention", British spellings in English, and "GPU(s)"-style
plurals, which the plural keys (``ui.plural``, ``key.one`` / ``key.other``) replace.
ALLOWED lists the few texts that quote a variant on purpose.
"""

from __future__ import annotations

import re

import pytest

from i18n import LANGUAGES, catalogue

#: A count glued to "(s)", "(es)", "(ões)": "GPU(s)", "camada(s)", "posição(ões)". "Tempo (s)" (seconds) has a space.
PAREN_PLURAL = re.compile(r"[^\W\d_]\((?:s|es|ões|as|os)\)")

#: Per language: the variant's name → (the pattern it matches, the word to use instead).
VARIANTS: dict[str, dict[str, tuple[re.Pattern[str], str]]] = {
    "pt": {
        "cache KV": (re.compile(r"\bcaches? KV\b", re.I), "KV cache"),
        "cabeças de KV": (re.compile(r"\bcabeças? de (?:KV|K/V|K e V)\b", re.I), "cabeças KV"),
        "cabeças de consulta": (re.compile(r"\bcabeças? de consulta\b", re.I), "cabeças de query"),
        "KV heads": (re.compile(r"\b(?:KV|K/V|query) heads?\b", re.I), "cabeças KV / cabeças de query"),
        "decodificação": (re.compile(r"\bdecodific\w*", re.I), "decode"),
        "pré-preenchimento": (re.compile(r"\b(?:pré-?)?preenchimento\b", re.I), "prefill"),
        "lote": (re.compile(r"\blotes?\b", re.I), "batch"),
        "núcleos tensoriais": (re.compile(r"\bnúcleos? tensor\w*", re.I), "tensor cores"),
        "cartão do modelo": (re.compile(r"\bcart(?:ão|ões) d[oe]s? modelos?\b", re.I), "model card"),
        "especialistas": (re.compile(r"\bespecialistas?\b", re.I), "experts"),
        "a FlashAttention": (re.compile(r"\b(?:a|da|na|pela|à|uma) FlashAttention\b", re.I), "o FlashAttention"),
        "(s)": (PAREN_PLURAL, "a plural key (ui.plural)"),
    },
    "en": {
        "British -ise/-isation": (
            re.compile(
                r"\b(?:utili|quanti|optimi|normali|recogni|minimi|maximi|summari|visuali|seriali|tokeni|initiali"
                r"|amorti|organi|reali|paralleli|characteri|standardi|categori|prioriti|customi|speciali|emphasi"
                r"|analy)s(?:e|ed|es|ing|ation|ations|er|ers)\b",
                re.I,
            ),
            "-ize / -ization (utilization, quantization)",
        ),
        "British -our": (re.compile(r"\b(?:colour|behaviour|favour|labour|honour|neighbour|flavour)\w*", re.I), "-or"),
        "British -ll-": (
            re.compile(r"\b(?:modell|labell|cancell|travell|signall|fuell)(?:ed|ing|er|ers)\b", re.I),
            "-l- (modeled, labeled)",
        ),
        "British -re/-ce/-e": (
            re.compile(r"\b(?:centre[sd]?|metre|litre|licence|defence|grey|whilst|programme|catalogue)\b", re.I),
            "center, license, gray, while, program, catalog",
        ),
        "K/V heads": (re.compile(r"\bK/V heads?\b"), "KV heads"),
        # `--kv-cache-dtype` is a flag, not prose: a lower-case, dashed "kv-cache" passes.
        "KV-cache": (re.compile(r"(?<![-\w])(?:KV-cache|K/V cache|cache KV)\b"), "KV cache"),
        "Tensor Cores": (re.compile(r"\bTensor Cores?\b"), "tensor cores"),
        "(s)": (PAREN_PLURAL, "a plural key (ui.plural)"),
    },
}

#: (language, key) → the variants that text may quote. Keep it short: each entry is a quotation, not a habit.
ALLOWED: dict[tuple[str, str], set[str]] = {
    # The glossary names the word a Portuguese reader may meet elsewhere.
    ("pt", "glossary.moe_text"): {"especialistas"},
}


def offences(lang: str, key: str, text: str) -> list[str]:
    allowed = ALLOWED.get((lang, key), set())
    return [
        f"{lang} {key}: {match.group(0)!r} → {use}"
        for name, (pattern, use) in VARIANTS[lang].items()
        if name not in allowed
        for match in pattern.finditer(text)
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_text_uses_the_one_word_for_each_term(lang):
    found = [line for key, text in catalogue(lang).items() for line in offences(lang, key, text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "o cache KV cresce"),
        ("pt", "8 cabeças de KV"),
        ("pt", "Decodificação limitada pela banda"),
        ("pt", "um lote de 32"),
        ("pt", "A FlashAttention deixa"),
        ("pt", "confira no cartão do modelo"),
        ("pt", "{n} GPU(s)"),
        ("pt", "{value} camada(s)"),
        ("pt", "{slots} posição(ões)"),
        ("en", "memory-bandwidth utilisation"),
        ("en", "a quantised model"),
        ("en", "each colour is a request"),
        ("en", "{n} layer(s)"),
    ],
)
def test_a_variant_is_caught(lang, text):
    assert offences(lang, "any.key", text)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "o KV cache do batch, 8 cabeças KV para 32 cabeças de query"),
        ("pt", "O FlashAttention no prefill e no decode; tensor cores; model card; experts"),
        ("pt", "Tempo entre requisições (s)"),
        ("pt", "$KV_{{seq}}(s)$"),
        ("en", "utilization, quantization, the tensor parallelism, a promise to raise it"),
        ("en", "TTFT (s)"),
    ],
)
def test_the_chosen_words_pass(lang, text):
    assert not offences(lang, "any.key", text)


def test_every_allowance_is_still_needed():
    for (lang, key), names in ALLOWED.items():
        text = catalogue(lang)[key]
        for name in names:
            assert VARIANTS[lang][name][0].search(text), f"{lang} {key} no longer quotes {name!r}: drop it from ALLOWED"
