"""Errors kvcore raises for input it cannot use: a stable code, the fields it is about, a sentence.

A ``KvError`` is a ``ValueError`` (so ``except ValueError`` keeps working) that also
carries ``code`` — a stable identifier such as ``"not_positive"`` or
``"params_unknown"`` — and ``fields``: the quantity it is about (``name``, the
library's own word for it, e.g. ``"context tokens"``) and the values that make the
message (``value``, ``minimum``, …). The English sentence is for logs and tests; the
CLI rewords it with its flag names and the app translates it by ``code`` (see
``kvcore.cli`` and ``ui``). No message names a CLI flag: a student in the app never
has one to give.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["KvError"]


class KvError(ValueError):
    """An input kvcore cannot use. ``code`` is stable; ``fields`` are the values the message speaks of.

    >>> error = KvError("not_positive", "batch must be a finite number greater than zero, got 0", name="batch", value=0)
    >>> error.code, error.fields["name"], isinstance(error, ValueError)
    ('not_positive', 'batch', True)
    """

    def __init__(self, code: str, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.fields: Mapping[str, Any] = MappingProxyType(dict(fields))
