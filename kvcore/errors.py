"""Errors kvcore raises for input it cannot use: a stable code, the fields it is about, a sentence.

A ``KvError`` is a ``ValueError`` (so ``except ValueError`` keeps working) that also
carries ``code`` — a stable identifier such as ``"not_positive"`` or
``"params_unknown"`` — and ``fields``: the quantity it is about (``name``, the
library's own word for it, e.g. ``"context tokens"``) and the values that make the
message (``value``, ``minimum``, …). The English sentence is for logs and tests; the
CLI rewords it with its flag names and the app translates it by ``code`` (see
``kvcore.cli`` and ``ui.errors``). No message names a CLI flag: a student in the app never
has one to give.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["ConfigError", "KvError"]


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

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from code, message and fields (the default would call cls(message) and fail).
        return _rebuilt, (type(self), self.code, str(self), dict(self.fields))


class ConfigError(KvError):
    """A config.json that cannot be read: ``code`` (stable id), ``field`` (the config field or "").

    Its codes are listed in :mod:`kvcore.hf_config`'s docstring; ``fields["field"]`` is
    ``field`` too, so the app translates it like any other KvError.

    >>> error = ConfigError("missing_field", "the config lacks 'vocab_size'", field="vocab_size")
    >>> error.code, error.field, error.fields["field"], isinstance(error, KvError)
    ('missing_field', 'vocab_size', 'vocab_size', True)
    """

    def __init__(self, code: str, message: str, *, field: str = "", **fields: Any) -> None:
        super().__init__(code, message, field=field, **fields)
        self.field = field


def _rebuilt(cls: type[KvError], code: str, message: str, fields: dict[str, Any]) -> KvError:
    """The error `cls` with these code, message and fields (how a KvError is copied and pickled)."""
    return cls(code, message, **fields)
