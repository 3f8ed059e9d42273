"""Computed facts in words: the numbers of ``course.facts``, written in the session's language and memory units.

The quiz and the glossary both call ``shown(name)``: the fact is computed by kvcore
(through ``course.facts``) from this session's catalogues, and each ``Number`` is
written by the one formatter of its kind. Names pass through as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import ui
from charts import formatting
from course import facts
from course.facts import Kind, Number
from i18n import NUMBER_SEPARATORS, localize_number
from kvcore.units import (
    format_bandwidth,
    format_bytes_decimal,
    format_flops,
    format_gb,
    format_gib,
    format_quantity,
    format_seconds,
    format_tokens,
    format_tokens_per_s,
)
from ui import lesson


def shown(name: str | None) -> dict[str, str]:
    """The placeholders of the fact called `name`, as text ({} for no fact)."""
    if name is None:
        return {}
    values = facts.fact(name, models=ui.models(), gpus=ui.gpus())
    return {key: written(value) for key, value in values.items()}


def written(value: str | Number) -> str:
    """One placeholder as text: a name as it is, a number by the formatter of its kind (this session's language
    and memory unit)."""
    if isinstance(value, str):
        return value
    return number_formats(ui.language(), lesson.memory_unit())[value.kind](value)


def number_formats(lang: str, unit: str) -> Mapping[Kind, Callable[[Number], str]]:
    """How each kind of number is written in language `lang` with memory in `unit` ("GiB" or "GB").

    Pure (no session): the quiz's option-length test reads the options exactly as the page shows them.
    """
    marks = NUMBER_SEPARATORS[lang]

    def local(text: str) -> str:
        return localize_number(text, lang)

    return MappingProxyType(
        {
            "integer": lambda n: str(round(n.value)),
            "count": lambda n: local(format_tokens(n.value)),
            "quantity": lambda n: local(format_quantity(n.value)),
            "ratio": lambda n: local(f"{n.value:g}"),
            # '96.875%', '75%': at most `decimals` decimals, trailing zeros dropped
            "percent": lambda n: formatting.percent(n.value, marks, decimals=n.decimals, trim_zeros=True),
            "billions": lambda n: local(format_quantity(n.value / 1e9)),
            "size": lambda n: formatting.size(n.value, marks, unit=unit),
            "memory": lambda n: formatting.memory(n.value, marks, unit=unit),
            "gib": lambda n: local(format_gib(n.value)),
            "gb": lambda n: local(format_gb(n.value)),
            "decimal_size": lambda n: local(format_bytes_decimal(n.value)),
            "seconds": lambda n: local(format_seconds(n.value)),
            "bandwidth": lambda n: local(format_bandwidth(n.value)),
            "flop_per_s": lambda n: local(format_flops(n.value)),
            "tokens_per_s": lambda n: local(format_tokens_per_s(n.value, unit=False)),
        }
    )
