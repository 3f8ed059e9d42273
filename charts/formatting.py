"""Numbers as a learner reads them, in either language: the one home for formatting above kvcore.

kvcore formats in English (``kvcore.units``: '74,079.5 GiB', '8,192'); this module adds
what a page or a chart needs on top — percentages, factors, money, sizes in the unit
family the sidebar chose, counts, and the same numbers as LaTeX — each with an explicit
precision, and with the decimal mark and thousands separator of the reader's language.

The language travels as ``separators``: decimal mark then thousands separator, Plotly's
``layout.separators`` form (``i18n.NUMBER_SEPARATORS[lang]``, ``ui.separators()``). Every
function defaults to English marks, so a page may also format in English and localise
once with ``ui.num``.

It lives in charts/ because the chart builders need it and cannot import streamlit
(``ui`` does, on import); ``ui`` and the lessons import it from here, so the layers
still import one way: kvcore ← charts ← ui, lessons. No streamlit, no plotly.
"""

from __future__ import annotations

import math
from typing import Any

from kvcore.units import format_bytes, format_bytes_decimal, format_bytes_many, format_gb, format_gib, format_tokens

__all__ = [
    "ENGLISH",
    "count",
    "latex",
    "latex_number",
    "latex_quantity",
    "localized",
    "memory",
    "money",
    "number",
    "percent",
    "plain",
    "significant",
    "size",
    "times",
]

#: kvcore's marks: '.' before decimals, ',' between thousands.
ENGLISH = ".,"


def localized(text: str, separators: str) -> str:
    """English-formatted text with `separators` (decimal mark, thousands) instead: '12,345.67' → '12.345,67'.

    Only the two marks change, so units and words stay as they are.

    >>> localized("74,079.5 GiB", ",.")
    '74.079,5 GiB'
    """
    return text.translate(str.maketrans(".,", separators))


def number(value: float, separators: str = ENGLISH, *, decimals: int = 2) -> str:
    """A number with `decimals` decimals and thousands separators.

    >>> number(12345.678), number(12345.678, ",.", decimals=1)
    ('12,345.68', '12.345,7')
    """
    return localized(f"{value:,.{decimals}f}", separators)


def count(value: float, separators: str = ENGLISH) -> str:
    """A whole count with thousands separators (rounded): 74079 → '74,079' ('74.079' in Portuguese).

    >>> count(74079), count(74079, ",.")
    ('74,079', '74.079')
    """
    return localized(format_tokens(value), separators)


def plain(value: float, separators: str = ENGLISH) -> str:
    """A number as short as it is exact: a whole one as a count ('8,192'), another as Python's ``g`` writes it ('0.5').

    >>> plain(8192), plain(0.5, ",.")
    ('8,192', '0,5')
    """
    text = format_tokens(value) if float(value).is_integer() else f"{value:g}"
    return localized(text, separators)


def significant(value: float, separators: str = ENGLISH, *, digits: int = 3) -> str:
    """A number to `digits` significant digits, never in exponent form: the count of billions in '1,030 billion'.

    Whole parts keep every digit, with thousands separators (1,030.4 → '1,030'; Python's ``g``
    would write '1.03e+03'); a smaller number keeps `digits` significant digits ('8.03', '0.5').

    >>> significant(1030.4), significant(1030.4, ",."), significant(8.0301), significant(0.5), significant(72.71)
    ('1,030', '1.030', '8.03', '0.5', '72.7')
    """
    number = float(value)
    if number == 0 or not math.isfinite(number):
        return localized(f"{number:g}", separators)
    whole_digits = math.floor(math.log10(abs(number))) + 1
    decimals = max(digits - whole_digits, 0)
    text = f"{round(number, decimals):,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return localized(text, separators)


def percent(
    fraction: float, separators: str = ENGLISH, *, decimals: int, trim_zeros: bool = False, spaced: bool = False
) -> str:
    """A fraction as a percentage with `decimals` decimals: 0.96875 → '96.88%'.

    ``trim_zeros`` drops trailing zeros ('75.0%' → '75%', so `decimals` is a maximum);
    ``spaced`` puts a space before the sign ('3 %').

    >>> percent(0.96875, decimals=2), percent(0.75, decimals=3, trim_zeros=True), percent(0.03, decimals=1, spaced=True)
    ('96.88%', '75%', '3.0 %')
    """
    text = f"{fraction:.{decimals}%}"[:-1]
    if trim_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    return localized(text + (" %" if spaced else "%"), separators)


def times(factor: float, separators: str = ENGLISH, *, decimals: int, trim_zeros: bool = False) -> str:
    """A factor with `decimals` decimals and a '×': 85.333 → '85.3×'; ``trim_zeros``: 4.0 → '4×'.

    >>> times(85.333, decimals=1), times(4.0, decimals=1, trim_zeros=True), times(1234.5, ",.", decimals=0)
    ('85.3×', '4×', '1.234×')
    """
    text = f"{factor:,.{decimals}f}"
    if trim_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    return localized(text + "×", separators)


def money(amount: float, separators: str = ENGLISH) -> str:
    """An amount of money, without its currency (the translated text adds it): 3 decimals below 1, else 2.

    >>> money(0.0421), money(1234.5, ",.")
    ('0.042', '1.234,50')
    """
    return number(amount, separators, decimals=3 if amount < 1 else 2)


def memory(num_bytes: float, separators: str = ENGLISH, *, unit: str = "GiB", decimals: int = 2) -> str:
    """A memory figure in GiB, or decimal GB when `unit` is 'GB', whatever its size: figures compare at a glance.

    >>> memory(16 * 2**30), memory(16 * 2**30, ",.", unit="GB")
    ('16 GiB', '17,18 GB')
    """
    formatted = format_gib if unit == "GiB" else format_gb
    return localized(formatted(num_bytes, decimals=decimals), separators)


def size(num_bytes: float, separators: str = ENGLISH, *, unit: str = "GiB", decimals: int = 2) -> str:
    """Any size scaled to read well: binary units (KiB … TiB), or decimal ones (kB … TB) when `unit` is 'GB'.

    >>> size(16384), size(16384, ",.", unit="GB")
    ('16 KiB', '16,38 kB')
    """
    formatted = format_bytes if unit == "GiB" else format_bytes_decimal
    return localized(formatted(num_bytes, decimals=decimals), separators)


def sizes(num_bytes: Any, separators: str = ENGLISH, *, unit: str = "GiB", decimals: int = 2) -> list[str]:
    """``size`` of every value of `num_bytes`: the same texts, the units chosen in one numpy pass and the
    language's marks set once for all (``kvcore.units.format_bytes_many``; a chart's hover texts).

    >>> sizes([16384, 2**31], ",.")
    ['16 KiB', '2 GiB']
    """
    texts = format_bytes_many(num_bytes, decimal=unit != "GiB", decimals=decimals)
    return localized("\n".join(texts), separators).split("\n") if texts else []


# ---------------------------------------------------------------- LaTeX


def latex(text: str) -> str:
    """A formatted number made safe in LaTeX math: '8,192' → '8{,}192'.

    A bare comma in LaTeX math is punctuation followed by a space, hence the braces.
    """
    return text.replace(",", "{,}")


def latex_number(value: float, separators: str = ENGLISH) -> str:
    """``plain`` as LaTeX: 8192 → '8{,}192' in English, '8.192' in Portuguese; 0.5 → '0.5' / '0{,}5'.

    >>> latex_number(8192), latex_number(8192, ",."), latex_number(0.5, ",.")
    ('8{,}192', '8.192', '0{,}5')
    """
    return latex(plain(value, separators))


def latex_quantity(text: str, *, bold: bool = False) -> str:
    """A formatted 'number unit' as LaTeX: '14,96 GiB' → '14{,}96\\ \\text{GiB}'; `bold` sets the number in bold.

    >>> latex_quantity("14,96 GiB"), latex_quantity("2 GB", bold=True)
    ('14{,}96\\\\ \\\\text{GiB}', '\\\\mathbf{2}\\\\ \\\\text{GB}')
    """
    figure, unit = text.rsplit(" ", 1)
    shown = r"\mathbf{" + latex(figure) + "}" if bold else latex(figure)
    return shown + r"\ \text{" + unit + "}"
