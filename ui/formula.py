"""Worked formulas as LaTeX, with the learner's numbers in them and the decimal mark of their language.

The steps themselves (the formula, the numbers put in, kvcore's value) come from
``course.worked``, the same steps the exercises' worked answers show; this module
only writes them as LaTeX. ``worked_latex`` walks a step's formula and writes each
quantity with a page's formatter: ``plain_number`` (8{,}192), ``roofline_number``
(16{,}1\\ \\text{TFLOP}, the Prefill vs decode page), ``traffic_number``
(\\text{16.06 GB}, the decode page). The KV cache formula is split by kind of layer
(``formula_terms``), each term's bytes kvcore's (``kv_cache_bytes_by_kind``), so the
page shows kvcore's result, never a sum of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import kvcore
from charts import formatting
from charts.formatting import latex_quantity, memory, size
from course import worked
from course.worked import Quantity, WorkedStep
from i18n import NUMBER_SEPARATORS, translate
from kvcore import units

#: The course's formula (seed 000), in LaTeX.
SYMBOLIC = r"\text{KV} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b"

#: What each kind of layer keeps per sequence, in LaTeX (a linear layer's state is a word: ``kind_symbolic``).
SYMBOLIC_BY_KIND = {
    "full": r"2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b",
    "sliding": r"2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot \min(s, w) \cdot B \cdot b",
    "mla": r"L \cdot (r_{kv} + d_{rope}) \cdot s \cdot B \cdot b",
}


def kind_symbolic(kind: str, lang: str = "en") -> str:
    """What one kind of layer keeps per sequence, in LaTeX; a linear layer's state named in `lang`."""
    if kind != "linear":
        return SYMBOLIC_BY_KIND[kind]
    state = r"\text{" + translate(lang, "formula.state") + "}"
    return rf"L \cdot {state} \cdot B \cdot b_{{{state}}}"


#: Linear-attention state is kept in BF16 (kvcore's default, passed explicitly so the text can show it).
STATE_DTYPE = "bf16"

#: How the Prefill vs decode page writes a quantity of each unit (kvcore.units, in English; localised after).
ROOFLINE_FORMATS: dict[str, Callable[[float], str]] = {
    "FLOP": units.format_flop,
    "FLOP/s": units.format_flops,
    "B/s": lambda value: units.format_bandwidth(value, decimals=3),
    "B": units.format_bytes_decimal,
    "s": units.format_seconds,
}
#: How the decode page writes its traffic, bandwidth and time (decimal GB, like the bandwidth it is divided by).
TRAFFIC_FORMATS: dict[str, Callable[[float], str]] = {
    "B": units.format_bytes_decimal,
    "B/s": units.format_bandwidth,
    "s": units.format_seconds,
}

#: Between max's arguments on the roofline page: a comma and a space.
BREAK = r",\ "
#: A page's way of writing one quantity as LaTeX.
NumberLatex = Callable[[Quantity, str], str]


@dataclass(frozen=True, slots=True, kw_only=True)
class FormulaTerm:
    """One kind of layer: how many, the formula with numbers (LaTeX), kvcore's bytes, and the worked step."""

    kind: str
    layers: int
    symbolic: str
    substituted: str
    kv_bytes: float
    step: WorkedStep


def latex_number(value: float, lang: str = "en") -> str:
    """8192 → '8{,}192' in English, '8.192' in Portuguese; 0.5 → '0.5' / '0{,}5' (charts.formatting, by language)."""
    return formatting.latex_number(value, NUMBER_SEPARATORS[lang])


# ---------------------------------------------------------------- writing one quantity


def plain_number(quantity: Quantity, lang: str) -> str:
    """A count or a factor as it is: '8{,}192', '0{,}5' in Portuguese."""
    return latex_number(quantity.value, lang)


def shown_text(quantity: Quantity, lang: str, formats: dict[str, Callable[[float], str]]) -> str | None:
    """The quantity as a page shows it, 'number unit' in `lang` ('989,4 TFLOP/s'), or None for a plain number."""
    if quantity.unit not in formats:
        return None
    return formatting.localized(formats[quantity.unit](quantity.value), NUMBER_SEPARATORS[lang])


def roofline_number(quantity: Quantity, lang: str) -> str:
    """'989{,}4\\ \\text{TFLOP/s}': a rate, an amount or a time in math type, its unit in text (Prefill vs decode)."""
    text = shown_text(quantity, lang, ROOFLINE_FORMATS)
    if text is None:
        return plain_number(quantity, lang)
    figure, unit = text.split(" ", 1)
    return formatting.latex(figure) + r"\ \text{" + unit + "}"


def traffic_number(quantity: Quantity, lang: str) -> str:
    """'\\text{16.06 GB}': bytes, bandwidth or a time as text (bandwidth-limited decode); counts as plain numbers."""
    text = shown_text(quantity, lang, TRAFFIC_FORMATS)
    return plain_number(quantity, lang) if text is None else r"\text{" + text + "}"


# ---------------------------------------------------------------- writing a step


def worked_latex(line: WorkedStep, *, lang: str, number: NumberLatex = plain_number, call_separator: str = ", ") -> str:
    """The substituted formula of `line` as LaTeX: each quantity written by `number`, a / b as a fraction.

    Products use \\cdot, min and max keep their parentheses (arguments joined by `call_separator`),
    floor is ⌊…⌋, and the formula's own parentheses stay where it has them (not around a fraction's parts).
    """
    quantities = {quantity.symbol: quantity for quantity in line.quantities}

    def inside(node: worked.Node) -> str:
        return render(node.inner if isinstance(node, worked.Group) else node)

    def render(node: worked.Node) -> str:
        if isinstance(node, worked.Number):
            return latex_number(node.value, lang)
        if isinstance(node, worked.Name):
            return number(quantities[node.name], lang)
        if isinstance(node, worked.Group):
            return "(" + render(node.inner) + ")"
        if isinstance(node, worked.Call):
            args = call_separator.join(render(arg) for arg in node.args)
            if node.function in ("floor", "ceil"):
                left, right = (r"\lfloor ", r"\rfloor") if node.function == "floor" else (r"\lceil ", r"\rceil")
                return r"\left" + left + args + r" \right" + right
            return "\\" + node.function + "(" + args + ")"
        if node.op == "neg" or node.left is None:
            return "-" + render(node.right)
        if node.op == "/":
            return r"\frac{" + inside(node.left) + "}{" + inside(node.right) + "}"
        if node.op == "^":
            return render(node.left) + "^{" + inside(node.right) + "}"
        operator = {"*": r" \cdot ", ">=": r" \geq "}.get(node.op, f" {node.op} ")
        return render(node.left) + operator + render(node.right)

    return render(worked.parse(line.formula))


def result_latex(num_bytes: float, lang: str = "en", *, decimal: bool = False) -> str:
    """'= 1.13\\ \\text{GiB}' for the right-hand side ('= 1{,}13 …' in Portuguese).

    The unit follows the size (a 128-token window is MiB, not '0 GiB'); binary, or
    decimal (kB, MB, GB) when the learner chose decimal GB.
    """
    text = size(num_bytes, NUMBER_SEPARATORS[lang], unit="GB" if decimal else "GiB")
    return "= " + latex_quantity(text, bold=True)


# ---------------------------------------------------------------- the KV cache and what one GPU holds


def formula_terms(
    model: kvcore.ModelSpec,
    *,
    context_tokens: int,
    concurrency: int,
    bytes_per_value: float,
    tp: int = 1,
    lang: str = "en",
) -> list[FormulaTerm]:
    """The formula split by layer kind, in the order the kinds first appear (``course.worked.kv_terms``).

    With `tp` GPUs, one GPU's cache: its own KV heads (H_kv_gpu), MLA's latent whole, 1/tp of a linear state.
    """
    lines = worked.kv_terms(
        model,
        context_tokens=context_tokens,
        concurrency=concurrency,
        bytes_per_value=bytes_per_value,
        tp=tp,
        state_bytes_per_value=kvcore.bytes_per_value(STATE_DTYPE),
    )
    terms = []
    for line in lines:
        kind = line.name.removeprefix("kv_")
        terms.append(
            FormulaTerm(
                kind=kind,
                layers=model.count(kind),
                symbolic=kind_symbolic(kind, lang),
                substituted=worked_latex(line, lang=lang),
                kv_bytes=line.value,
                step=line,
            )
        )
    return terms


def total_symbolic(*, total: str, weights: str, overhead: str) -> str:
    """What one GPU holds, in words of the learner's language: 'Total = Weights + KV + Overhead'."""
    return rf"\text{{{total}}} = \text{{{weights}}} + \text{{KV}} + \text{{{overhead}}}"


def memory_number(quantity: Quantity, lang: str, *, decimal: bool = False) -> str:
    """A memory figure as LaTeX, in GiB or decimal GB whatever its size: '14{,}96\\ \\text{GiB}'."""
    return latex_quantity(memory(quantity.value, NUMBER_SEPARATORS[lang], unit="GB" if decimal else "GiB"))


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

    The total is passed in (kvcore's ``total_memory_bytes``), never added up here (``course.worked.memory_total``).
    """
    line = worked.memory_total(
        weights_bytes=weights_bytes, kv_bytes=kv_bytes, overhead_bytes=overhead_bytes, total_bytes=total_bytes
    )
    return total_latex(line, lang=lang, decimal=decimal)


def total_latex(line: WorkedStep, *, lang: str = "en", decimal: bool = False) -> str:
    """The memory total step (``course.worked.memory_total``) as LaTeX: its parts, then its value in bold."""

    def shown(quantity: Quantity, lang: str) -> str:
        return memory_number(quantity, lang, decimal=decimal)

    unit = "GB" if decimal else "GiB"
    total = latex_quantity(memory(line.value, NUMBER_SEPARATORS[lang], unit=unit), bold=True)
    return worked_latex(line, lang=lang, number=shown) + " = " + total


# ---------------------------------------------------------------- the time model


def roofline_latex(lines: tuple[WorkedStep, WorkedStep, WorkedStep], *, name: str, lang: str) -> str:
    """A phase on the roofline (``course.worked.roofline``), one line per term so it fits a phone (LaTeX).

    t_compute = FLOPs / (P · MFU) = …, t_memory = bytes / (BW · MBU) = …, `name` = max(…) = **…**;
    the subscripts in `lang` (t_cálculo, t_memória in Portuguese).
    """
    compute, memory_line, result = lines
    compute_word, memory_word = translate(lang, "formula.compute"), translate(lang, "formula.memory")

    def value(line: WorkedStep) -> str:
        return roofline_number(Quantity(symbol=line.name, value=line.value, unit=line.unit), lang)

    def substituted(line: WorkedStep, separator: str = ", ") -> str:
        return worked_latex(line, lang=lang, number=roofline_number, call_separator=separator)

    return (
        r"\begin{aligned}"
        rf"t_\text{{{compute_word}}} &= {substituted(compute)} = {value(compute)} \\"
        rf"t_\text{{{memory_word}}} &= {substituted(memory_line)} = {value(memory_line)} \\"
        rf"\text{{{name}}} &= {substituted(result, BREAK)} = \mathbf{{{value(result)}}}"
        r"\end{aligned}"
    )


def ridge_latex(line: WorkedStep, *, lang: str) -> str:
    """ridge = P / BW = **… FLOP/byte** (``course.worked.ridge``), as LaTeX, 'ridge' in `lang`."""
    text = formatting.localized(units.format_flop_per_byte(line.value), NUMBER_SEPARATORS[lang])
    figure, unit = text.split(" ", 1)
    result = formatting.latex(figure) + r"\ \text{" + unit + "}"
    ridge = translate(lang, "formula.ridge")
    return rf"\text{{{ridge}}} = {worked_latex(line, lang=lang, number=roofline_number)} = \mathbf{{{result}}}"


def decode_time_latex(line: WorkedStep, *, lang: str) -> str:
    """t_step = (W + B · KV_seq) / (n_gpu · BW · MBU) = **… ms** with the decode page's numbers (LaTeX).

    'step' is in `lang` (t_passo in Portuguese), as on the page's line of symbols.
    """
    result = formatting.localized(units.format_seconds(line.value), NUMBER_SEPARATORS[lang])
    step = r"t_{\text{" + translate(lang, "formula.step") + "}}"
    return step + " = " + worked_latex(line, lang=lang, number=traffic_number) + r" = \textbf{" + result + "}"
