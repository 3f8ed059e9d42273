"""The KV cache formula with the learner's numbers in it, one term per kind of layer.

Each term's bytes come from kvcore (``kv_cache_bytes_by_kind``), so the page shows
kvcore's result, never a sum of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import kvcore
from charts import formatting
from charts.formatting import latex_quantity, memory, size
from i18n import NUMBER_SEPARATORS

#: The course's formula (seed 000), in LaTeX.
SYMBOLIC = r"\text{KV} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b"

#: What each kind of layer keeps per sequence, in LaTeX.
SYMBOLIC_BY_KIND = {
    "full": r"2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b",
    "sliding": r"2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot \min(s, w) \cdot B \cdot b",
    "mla": r"L \cdot (r_{kv} + d_{rope}) \cdot s \cdot B \cdot b",
    "linear": r"L \cdot \text{state} \cdot B \cdot b_{state}",
}

#: Linear-attention state is kept in BF16 (kvcore's default, passed explicitly so the text can show it).
STATE_DTYPE = "bf16"


@dataclass(frozen=True, slots=True, kw_only=True)
class FormulaTerm:
    """One kind of layer: how many, the formula with numbers (LaTeX), and kvcore's bytes."""

    kind: str
    layers: int
    symbolic: str
    substituted: str
    kv_bytes: float


def latex_number(value: float, lang: str = "en") -> str:
    """8192 → '8{,}192' in English, '8.192' in Portuguese; 0.5 → '0.5' / '0{,}5' (charts.formatting, by language)."""
    return formatting.latex_number(value, NUMBER_SEPARATORS[lang])


def formula_terms(
    model: kvcore.ModelSpec, *, context_tokens: int, concurrency: int, bytes_per_value: float, lang: str = "en"
) -> list[FormulaTerm]:
    """The formula split by layer kind, in the order the kinds first appear."""
    terms = []
    parts = kvcore.kv_cache_bytes_by_kind(
        model,
        context_tokens=context_tokens,
        concurrency=concurrency,
        bytes_per_value=bytes_per_value,
        state_bytes_per_value=kvcore.bytes_per_value(STATE_DTYPE),
    )
    for kind, kv_bytes in parts.items():
        layers = model.count(kind)
        terms.append(
            FormulaTerm(
                kind=kind,
                layers=layers,
                symbolic=SYMBOLIC_BY_KIND[kind],
                substituted=_substituted(
                    model,
                    kind,
                    layers,
                    context_tokens=context_tokens,
                    concurrency=concurrency,
                    b=bytes_per_value,
                    lang=lang,
                ),
                kv_bytes=float(kv_bytes),
            )
        )
    return terms


def result_latex(num_bytes: float, lang: str = "en", *, decimal: bool = False) -> str:
    """'= 1.13\\ \\text{GiB}' for the right-hand side ('= 1{,}13 …' in Portuguese).

    The unit follows the size (a 128-token window is MiB, not '0 GiB'); binary, or
    decimal (kB, MB, GB) when the learner chose decimal GB.
    """
    text = size(num_bytes, NUMBER_SEPARATORS[lang], unit="GB" if decimal else "GiB")
    return "= " + latex_quantity(text, bold=True)


def _substituted(
    model: kvcore.ModelSpec, kind: str, layers: int, *, context_tokens: int, concurrency: int, b: float, lang: str
) -> str:
    def n(value: float) -> str:
        return latex_number(value, lang)

    s, big_b = n(context_tokens), n(concurrency)
    if kind == "full":
        factors = ["2", n(layers), n(model.num_key_value_heads), n(model.head_dim), s, big_b, n(b)]
    elif kind == "sliding":
        window = rf"\min({s}, {n(model.sliding_window or 0)})"
        factors = ["2", n(layers), n(model.num_key_value_heads), n(model.head_dim), window, big_b, n(b)]
    elif kind == "mla":
        latent = f"({n(model.kv_lora_rank)} + {n(model.qk_rope_head_dim)})"
        factors = [n(layers), latent, s, big_b, n(b)]
    else:
        factors = [n(layers), n(model.linear_state_values), big_b, n(kvcore.bytes_per_value(STATE_DTYPE))]
    return r" \cdot ".join(factors)


def total_symbolic(*, total: str, weights: str, overhead: str) -> str:
    """What one GPU holds, in words of the learner's language: 'Total = Weights + KV + Overhead'."""
    return rf"\text{{{total}}} = \text{{{weights}}} + \text{{KV}} + \text{{{overhead}}}"


def total_substituted(
    *,
    weights_bytes: float,
    kv_bytes: float,
    overhead_bytes: float,
    total_bytes: float,
    lang: str = "en",
    decimal: bool = False,
) -> str:
    """'14{,}96\\ \\text{GiB} + 1\\ \\text{GiB} + … = \\mathbf{…}' with kvcore's parts and total, in GiB or decimal GB.

    The total is passed in (kvcore's ``total_memory_bytes``), never added up here.
    """

    def shown(num_bytes: float) -> str:
        return memory(num_bytes, NUMBER_SEPARATORS[lang], unit="GB" if decimal else "GiB")

    parts = " + ".join(latex_quantity(shown(part)) for part in (weights_bytes, kv_bytes, overhead_bytes))
    return parts + " = " + latex_quantity(shown(total_bytes), bold=True)
