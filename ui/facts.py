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
    """One placeholder as text: a name as it is, a number by the formatter of its kind."""
    return value if isinstance(value, str) else _FORMATS[value.kind](value)


_FORMATS: Mapping[Kind, Callable[[Number], str]] = MappingProxyType(
    {
        "integer": lambda n: str(round(n.value)),
        "count": lambda n: ui.num(format_tokens(n.value)),
        "quantity": lambda n: ui.num(format_quantity(n.value)),
        "ratio": lambda n: ui.num(f"{n.value:g}"),
        # '96.875%', '75%': at most `decimals` decimals, trailing zeros dropped
        "percent": lambda n: formatting.percent(n.value, ui.separators(), decimals=n.decimals, trim_zeros=True),
        "billions": lambda n: ui.num(format_quantity(n.value / 1e9)),
        "size": lambda n: lesson.size(n.value),
        "memory": lambda n: lesson.mem(n.value),
        "gib": lambda n: ui.num(format_gib(n.value)),
        "gb": lambda n: ui.num(format_gb(n.value)),
        "decimal_size": lambda n: ui.num(format_bytes_decimal(n.value)),
        "seconds": lambda n: ui.num(format_seconds(n.value)),
        "bandwidth": lambda n: ui.num(format_bandwidth(n.value)),
        "flop_per_s": lambda n: ui.num(format_flops(n.value)),
        "tokens_per_s": lambda n: ui.num(format_tokens_per_s(n.value, unit=False)),
    }
)
