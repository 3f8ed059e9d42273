"""The formula with the learner's numbers: kvcore's results, readable units, local decimal marks.

Every formula a page shows evaluates back to the number it shows (within the rounding of the numbers
shown), and the pages show the worked steps of ``course.worked`` for their own settings.
"""

import math
import re

import pytest

import kvcore
from course import worked
from course.worked import Quantity, WorkedStep
from tests.app.helpers import open_page
from ui import formula
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


# ---------------------------------------------------------------- a shown formula evaluates to the number shown

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
#: Dense GQA, MLA (FP8), sliding + full, sliding + full MoE (MXFP4), MoE with replicated KV heads, linear + full.
FAMILIES = ("llama-3.1-8b", "deepseek-v3", "gemma-3-27b", "gpt-oss-120b", "qwen3-235b-a22b", "qwen3-next-80b-a3b")
GPU_IDS = ("rtx-4090", "h100-sxm", "b200")
#: What each unit a page writes is worth in kvcore's units (bytes, seconds, FLOP, FLOP/s, bytes/s).
UNIT_VALUES = {
    "": 1.0, "FLOP": 1.0, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15, "TFLOP/s": 1e12, "FLOP/byte": 1.0,
    "B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "GB/s": 1e9, "TB/s": 1e12,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
    "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0,
}  # fmt: skip


#: Decimals kvcore.units rounds each unit to (it then drops trailing zeros, so '37 GB' is 37.00 GB ± 0.005).
UNIT_DECIMALS = {
    **dict.fromkeys(("FLOP", "GFLOP", "TFLOP", "PFLOP"), 2), "TFLOP/s": 1,
    **dict.fromkeys(("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"), 2),
    **dict.fromkeys(("µs", "ms", "s", "min", "h"), 1),
}  # fmt: skip


def read_shown(latex: str, lang: str, *, bandwidth_decimals: int = 2) -> tuple[float, float]:
    """A number as a page writes it ('16{,}1\\ \\text{TFLOP}', '\\text{2,3 GB}') → (value, half its last digit).

    Both in kvcore's units; the half digit is how far the true number may lie from the one shown:
    half a unit of the last decimal kvcore.units rounds to (bandwidths: `bandwidth_decimals`; an
    intensity: 2, 1 or 0 decimals by its size), and for a plain number (a count, a factor, written in
    full or to six significant digits) nothing or half its sixth digit.
    """
    text = latex.replace("{,}", ",").replace(r"\ ", " ")
    text = re.sub(r"\\(mathbf|textbf|text)\{", "", text).replace("}", "").strip()
    figure, _, unit = text.partition(" ")
    thousands, mark = (",", ".") if lang == "en" else (".", ",")
    figure = figure.replace(thousands, "").replace(mark, ".")
    number, scale = float(figure), UNIT_VALUES[unit]
    if unit == "":
        digits = 0.0 if "." not in figure else 0.5 * 10.0 ** (math.floor(math.log10(abs(number))) - 5)
        return number, digits
    if unit in ("GB/s", "TB/s"):
        decimals = bandwidth_decimals
    elif unit == "FLOP/byte":
        decimals = 2 if number < 10 else 1 if number < 1000 else 0
    else:
        decimals = UNIT_DECIMALS[unit]
    return number * scale, 0.5 * 10.0**-decimals * scale


def assert_shown_formula_evaluates_to_the_number_shown(
    line: WorkedStep, shown: str, number: formula.NumberLatex, lang: str, *, bandwidth_decimals: int = 2
) -> None:
    """Every quantity of `line` is in the shown LaTeX, and the numbers as shown give the result as shown.

    Each shown number may be off by half its last digit, so the formula is evaluated on the
    numbers shown and may miss the result shown by what those roundings allow: a factor of
    Π (1 + r) / (1 − r) over the relative roundings r (every formula here adds, multiplies,
    divides and takes maxima of positive numbers), plus the result's own rounding.
    """
    values, bound = {}, 1.0
    for quantity in line.quantities:
        written = number(quantity, lang)
        assert written in shown, (written, shown)
        value, half = read_shown(written, lang, bandwidth_decimals=bandwidth_decimals)
        values[quantity.symbol] = value
        bound *= (value + half) / (value - half) if value > half else math.inf
    result, result_half = read_shown(shown.rsplit("=", 1)[1], lang)
    computed = worked.evaluate(line.formula, values)
    assert abs(computed - result) <= (bound - 1) * computed + result_half + 1e-12 * abs(result), (line, shown)


def roofline_lines(model, gpu, *, prompt=4096, context=8192, batch=1, tp=1, mfu=0.5, mbu=0.8):
    weights_dtype = kvcore.dtype_name(model.weights_dtype)
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mfu=mfu, mbu=mbu, gpus=tp)
    sizes = {"weight_bytes_per_param": kvcore.bytes_per_value(weights_dtype), "kv_bytes_per_value": 2.0}
    flops = float(kvcore.prefill_flops(model, prompt_tokens=prompt))
    moved = float(kvcore.prefill_bytes(model, prompt_tokens=prompt, **sizes))
    step_flops = float(kvcore.decode_flops_per_step(model, context_tokens=context, batch=batch))
    step_moved = float(kvcore.decode_bytes_per_step(model, context_tokens=context, batch=batch, **sizes).total)
    phases = {}
    for name, f, m in (("TTFT", flops, moved), ("TPOT", step_flops, step_moved)):
        phases[name] = worked.roofline(
            name,
            flops=Quantity(symbol="FLOPs", value=f, unit="FLOP"),
            moved=Quantity(symbol="bytes", value=m, unit="B"),
            rates=rates,
            efficiencies=True,
        )
    ridge = worked.ridge(peak_flop_per_s=rates.peak_flop_per_s, bandwidth_bytes_per_s=rates.bandwidth_bytes_per_s)
    return phases, ridge


def decode_line(model, gpu, *, context=32768, batch=4, tp=1, mbu=1.0) -> WorkedStep:
    """The decode page's formula, built as the page builds it."""
    weights_dtype = kvcore.dtype_name(model.weights_dtype)
    sizes = {"weight_bytes_per_param": kvcore.bytes_per_value(weights_dtype), "kv_bytes_per_value": 2.0}
    read = kvcore.decode_bytes_per_step(model, context_tokens=context, batch=batch, gpus=tp, **sizes)
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mbu=mbu, gpus=tp)
    return worked.decode_memory_time(read, batch=batch, rates=rates)


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("gpu_id", GPU_IDS)
@pytest.mark.parametrize("model_id", FAMILIES)
def test_the_roofline_formulas_evaluate_to_the_times_shown(model_id, gpu_id, lang):
    phases, ridge = roofline_lines(MODELS[model_id], GPUS[gpu_id], batch=16)
    for name, lines in phases.items():
        shown = formula.roofline_latex(lines, name=name, lang=lang)
        rows = shown.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}").split(r" \\")
        for line, row in zip(lines, rows, strict=True):
            assert_shown_formula_evaluates_to_the_number_shown(
                line, row, formula.roofline_number, lang, bandwidth_decimals=3
            )
    shown = formula.ridge_latex(ridge, lang=lang)
    assert_shown_formula_evaluates_to_the_number_shown(
        ridge, shown, formula.roofline_number, lang, bandwidth_decimals=3
    )


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("gpu_id", GPU_IDS)
@pytest.mark.parametrize("model_id", FAMILIES)
def test_the_decode_formula_evaluates_to_the_step_time_shown(model_id, gpu_id, tp, lang):
    line = decode_line(MODELS[model_id], GPUS[gpu_id], tp=tp)
    shown = formula.decode_time_latex(line, lang=lang)
    assert_shown_formula_evaluates_to_the_number_shown(line, shown, formula.traffic_number, lang)


def test_the_decode_formula_on_eight_gpus_counts_the_cache_every_gpu_reads():
    """Fixed: the page divided B · one GPU's-worth of DeepSeek-V3's cache by 8 GPUs and showed 5.5 ms, not 3.1 ms.

    Each of the 8 GPUs keeps MLA's whole latent, so the step reads 8 copies; the formula now says so.
    """
    line = decode_line(MODELS["deepseek-v3"], GPUS["h100-sxm"], batch=4, tp=8)
    shown = formula.decode_time_latex(line, lang="en")
    assert r"\text{18.42 GB}" in shown and r"\text{2.3 GB}" not in shown
    assert_shown_formula_evaluates_to_the_number_shown(line, shown, formula.traffic_number, "en")


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("decimal", [False, True])
@pytest.mark.parametrize("model_id", FAMILIES)
def test_the_kv_terms_and_the_total_evaluate_to_the_sizes_shown(model_id, decimal, lang):
    model = MODELS[model_id]
    terms = formula.formula_terms(model, context_tokens=32768, concurrency=4, bytes_per_value=2.0, lang=lang)
    for term in terms:
        shown = term.substituted + " " + formula.result_latex(term.kv_bytes, lang, decimal=decimal)
        assert_shown_formula_evaluates_to_the_number_shown(term.step, shown, formula.plain_number, lang)
    weights = kvcore.model_weights_bytes(model, bytes_per_param=2.0)
    kv = sum(term.kv_bytes for term in terms)
    line = worked.memory_total(
        weights_bytes=weights, kv_bytes=kv, overhead_bytes=2**30, total_bytes=weights + kv + 2**30
    )
    shown = formula.total_latex(line, lang=lang, decimal=decimal)

    def number(quantity: Quantity, lang: str) -> str:
        return formula.memory_number(quantity, lang, decimal=decimal)

    assert_shown_formula_evaluates_to_the_number_shown(line, shown, number, lang)


# ---------------------------------------------------------------- the pages show the worked steps' numbers


def page_formulas(app) -> list[str]:
    """The LaTeX of every st.latex on the page, without the $$ … $$ Streamlit wraps it in."""
    return [element.value.strip().removeprefix("$$").removesuffix("$$").strip() for element in app.latex]


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("changed", [{}, {"pd_prompt": 8192}, {"pd_batch": 64}])
def test_the_prefill_decode_page_shows_the_worked_roofline_steps(app, lang, changed):
    open_page(app, "lessons/prefill_decode.py", lang=lang)
    for key, value in changed.items():
        app.slider(key=key).set_value(value).run()
    prompt, output = app.slider(key="pd_prompt").value, app.slider(key="pd_output").value
    context = float(kvcore.mean_decode_context_tokens(prompt_tokens=prompt, output_tokens=output))
    phases, ridge = roofline_lines(
        MODELS["llama-3.1-8b"], GPUS["rtx-4090"], prompt=prompt, context=context, batch=app.slider(key="pd_batch").value
    )
    shown = page_formulas(app)
    for name, lines in phases.items():
        assert formula.roofline_latex(lines, name=name, lang=lang) in shown, name
        for line in lines:
            block = next(text for text in shown if name in text and r"\begin{aligned}" in text)
            for quantity in line.quantities:
                assert formula.roofline_number(quantity, lang) in block
    assert formula.ridge_latex(ridge, lang=lang) in shown


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize(
    ("params", "changed"),
    [({}, {}), ({}, {"ds_batch": 16}), ({"model": "deepseek-v3", "gpu": "b200", "ds_tp": "8"}, {})],
)
def test_the_decode_page_shows_the_worked_decode_step(app, lang, params, changed):
    open_page(app, "lessons/decode_speed.py", lang=lang, **params)
    for key, value in changed.items():
        app.slider(key=key).set_value(value).run()
    model = MODELS[params.get("model", "llama-3.1-8b")]
    line = decode_line(
        model,
        GPUS[params.get("gpu", "rtx-4090")],
        context=app.slider(key="ds_context").value,
        batch=app.slider(key="ds_batch").value,
        tp=int(params.get("ds_tp", 1)),
        mbu=app.slider(key="ds_mbu").value,
    )
    expected = formula.decode_time_latex(line, lang=lang)
    assert expected in page_formulas(app)
    assert_shown_formula_evaluates_to_the_number_shown(line, expected, formula.traffic_number, lang)


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize(("params", "changed"), [({}, {}), ({}, {"context": 32768}), ({"model": "gemma-3-27b"}, {})])
def test_the_memory_page_shows_the_worked_kv_terms_and_a_total_that_adds_up(app, lang, params, changed):
    open_page(app, lang=lang, **params)
    for key, value in changed.items():
        app.slider(key=key).set_value(value).run()
    model = MODELS[params.get("model", "llama-3.1-8b")]
    terms = formula.formula_terms(
        model,
        context_tokens=app.slider(key="context").value,
        concurrency=app.slider(key="concurrency").value,
        bytes_per_value=2.0,
        lang=lang,
    )
    shown = page_formulas(app)
    for term in terms:
        [block] = [text for text in shown if text.startswith(term.substituted + "=")]
        assert_shown_formula_evaluates_to_the_number_shown(term.step, block, formula.plain_number, lang)
    # The total: the parts as shown add up to the total shown (each rounded to 2 decimals).
    [total] = [text for text in shown if text.count(" + ") == 2 and r"\mathbf" in text]
    parts, result = total.rsplit(" = ", 1)
    read = [read_shown(part, lang) for part in parts.split(" + ")]
    value, half = read_shown(result, lang)
    assert abs(sum(v for v, _ in read) - value) <= sum(h for _, h in read) + half
