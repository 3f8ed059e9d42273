"""A ModelSpec in a short, URL-safe, readable code (so a shared link can carry "my model").

The code holds the numbers every kvcore formula reads, nothing else::

    kv1~L32_h32_k8_d128_H4096_c131072_P8030261248_A8030261248~Llama_203.1_208B

``kv1`` is the format version; then ``_``-separated fields, each a letter and a value:

====  =========================  ====  ==============================
L     num_hidden_layers          r     kv_lora_rank
h     num_attention_heads        q     qk_rope_head_dim
k     num_key_value_heads        s     linear_state_values
d     head_dim                   c     max_position_embeddings
H     hidden_size                P     total_params
p     layer pattern (compact)    A     active_params
w     sliding_window             E     num_experts
t     weights dtype              e     num_experts_per_tok
====  =========================  ====  ==============================

Fields at their default (0, none, ``full``, ``bf16``) are left out. The layer pattern
is written with one letter per kind and a count (``f`` full, ``s`` sliding, ``m``
mla, ``l`` linear): ``sliding*5,full`` → ``s5f``. After the last ``~`` comes the
name (cut to 60 characters): letters, digits, ``.`` and ``-`` as they are, any
other byte of its UTF-8 as ``_`` + two hex digits (a space is ``_20``). Only
letters, digits and ``-_.~`` appear, so the code needs no escaping in a URL.
Decoding never raises anything but KvError (a ValueError) with a code ``model_code_*``
(or ``pattern_not_codable`` when encoding), its fields and a message that says what is wrong.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Any

from .dtypes import BYTES_PER_VALUE, dtype_name
from .errors import KvError
from .model import ModelSpec

__all__ = [
    "model_from_code",
    "model_to_code",
]

VERSION = "kv1"
MAX_CODE_CHARS = 1000
MAX_NAME_CHARS = 60
MAX_CYCLE_LAYERS = 10_000

_KIND_LETTERS = MappingProxyType({"full": "f", "sliding": "s", "mla": "m", "linear": "l"})
_LETTER_KINDS = MappingProxyType({letter: kind for kind, letter in _KIND_LETTERS.items()})
_ALLOWED = re.compile(r"^[A-Za-z0-9._~-]*$")
_NAME_SAFE = re.compile(r"[A-Za-z0-9.-]")
_RUN = re.compile(r"([fsml])(\d*)")
_INT_FIELDS = MappingProxyType(
    {
        "L": ("num_hidden_layers", 1, 10_000),
        "h": ("num_attention_heads", 1, 65_536),
        "k": ("num_key_value_heads", 1, 65_536),
        "d": ("head_dim", 1, 65_536),
        "H": ("hidden_size", 1, 1 << 20),
        "w": ("sliding_window", 1, 1 << 31),
        "r": ("kv_lora_rank", 1, 65_536),
        "q": ("qk_rope_head_dim", 1, 65_536),
        "s": ("linear_state_values", 1, 1 << 40),
        "c": ("max_position_embeddings", 1, 1 << 31),
        "E": ("num_experts", 1, 100_000),
        "e": ("num_experts_per_tok", 1, 100_000),
    }
)
_FLOAT_FIELDS = MappingProxyType({"P": "total_params", "A": "active_params"})
_REQUIRED = ("L", "h", "k", "d")
_MAX_PARAMS = 1e16


def model_to_code(model: ModelSpec) -> str:
    """The model's code (see the module docstring).

    >>> from kvcore.model import uniform_model
    >>> model_to_code(uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128,
    ...                             num_attention_heads=32, name="Llama 3.1 8B"))
    'kv1~L32_h32_k8_d128~Llama_203.1_208B'
    """
    values = {
        "L": model.num_hidden_layers,
        "h": model.num_attention_heads,
        "k": model.num_key_value_heads,
        "d": model.head_dim,
        "H": model.hidden_size,
        "p": "" if model.layer_pattern == "full" else pattern_code(model.layer_pattern),
        "w": model.sliding_window or 0,
        "r": model.kv_lora_rank,
        "q": model.qk_rope_head_dim,
        "s": model.linear_state_values,
        "c": model.max_position_embeddings,
        "P": model.total_params,
        "A": model.active_params,
        "E": model.num_experts,
        "e": model.num_experts_per_tok,
        "t": "" if dtype_name(model.weights_dtype) == "bf16" else dtype_name(model.weights_dtype),
    }
    fields = [f"{key}{_number(value)}" for key, value in values.items() if value not in (0, None, "")]
    return f"{VERSION}~{'_'.join(fields)}~{_name_code(model.name)}"


def model_from_code(text: str) -> ModelSpec:
    """The ModelSpec a code describes; KvError (model_code_*) with a clear message for anything malformed.

    >>> model_from_code("kv1~L24_h64_k8_d64_psf_w128~gpt-oss-20b").layer_pattern
    'sliding,full'
    """
    if not isinstance(text, str):
        raise KvError("model_code_not_text", "a model code is text such as 'kv1~L32_h32_k8_d128~My_20model'")
    if len(text) > MAX_CODE_CHARS:
        raise KvError(
            "model_code_too_long",
            f"the model code is {len(text):,} characters long; a valid one has at most {MAX_CODE_CHARS}",
            length=len(text),
            maximum=MAX_CODE_CHARS,
        )
    if not _ALLOWED.match(text):
        raise KvError(
            "model_code_bad_characters",
            "the model code may hold only letters, digits and - _ . ~ (it was changed on the way?)",
        )
    parts = text.split("~")
    if len(parts) != 3 or parts[0] != VERSION:
        raise KvError(
            "model_code_not_a_code",
            f"not a model code: expected '{VERSION}~fields~name', got {text[:40]!r}",
            expected=f"{VERSION}~fields~name",
            value=text[:40],
        )
    values = _fields(parts[1])
    name = _name_from_code(parts[2])
    try:
        return ModelSpec(id=name, name=name, **values)
    except (ValueError, TypeError, OverflowError) as error:
        raise KvError(
            "model_code_impossible",
            f"the model code describes an impossible model: {error}",
            detail=str(error),
            cause=error if isinstance(error, KvError) else None,
        ) from None


def pattern_code(pattern: str) -> str:
    """A ModelSpec layer pattern in letters, counts kept as written: 'sliding*5,full' → 's5f'.

    Each run is a letter (f full, s sliding, m mla, l linear) and its count if one
    was written, so every pattern of ``kind`` / ``kind*N`` items comes back unchanged.

    >>> pattern_code("linear*3,full")
    'l3f'
    """
    runs = []
    for item in pattern.split(","):
        kind, star, count = item.partition("*")
        if kind not in _KIND_LETTERS or (star and not (count.isascii() and count.isdigit())):
            raise KvError(
                "pattern_not_codable",
                f"pattern {pattern!r} cannot be coded: use items such as 'sliding*5' or 'full'",
                pattern=pattern,
            )
        runs.append(_KIND_LETTERS[kind] + count)
    return "".join(runs)


def pattern_from_code(code: str) -> str:
    """The ModelSpec pattern a letter pattern stands for ('s5f' → 'sliding*5,full'); at most 10,000 layers a cycle."""
    items = []
    total = 0
    position = 0
    while position < len(code):
        match = _RUN.match(code, position)
        if not match:
            raise KvError(
                "model_code_bad_pattern",
                f"bad layer pattern {code[:30]!r}: use f, s, m, l with counts, e.g. 's5f'",
                pattern=code[:30],
            )
        digits = match.group(2)
        if len(digits) > 6 or (digits and int(digits) < 1):
            raise KvError("model_code_bad_count", f"bad count in the layer pattern {code[:30]!r}", pattern=code[:30])
        total += int(digits) if digits else 1
        if total > MAX_CYCLE_LAYERS:
            raise KvError(
                "model_code_too_many_layers",
                f"the layer pattern {code[:30]!r} describes more than {MAX_CYCLE_LAYERS:,} layers",
                pattern=code[:30],
                maximum=MAX_CYCLE_LAYERS,
            )
        kind = _LETTER_KINDS[match.group(1)]
        items.append(f"{kind}*{digits}" if digits else kind)
        position = match.end()
    if not items:
        raise KvError("model_code_empty_pattern", "the layer pattern in the model code is empty")
    return ",".join(items)


def _fields(text: str) -> dict[str, Any]:
    """ModelSpec keyword arguments from the fields part of a code."""
    values: dict[str, Any] = {}
    seen: set[str] = set()
    for token in text.split("_") if text else []:
        if len(token) < 2:
            raise KvError("model_code_empty_field", f"empty field {token!r} in the model code", field=token)
        key, value = token[0], token[1:]
        if key in seen:
            raise KvError("model_code_repeated_field", f"field {key!r} appears twice in the model code", field=key)
        seen.add(key)
        if key in _INT_FIELDS:
            name, low, high = _INT_FIELDS[key]
            values[name] = _whole(name, value, low, high)
        elif key in _FLOAT_FIELDS:
            values[_FLOAT_FIELDS[key]] = _params(_FLOAT_FIELDS[key], value)
        elif key == "p":
            values["layer_pattern"] = value
        elif key == "t":
            if value.lower() not in BYTES_PER_VALUE:
                raise KvError(
                    "model_code_unknown_format",
                    f"unknown weights format {value!r}: use one of {', '.join(BYTES_PER_VALUE)}",
                    value=value,
                    known=", ".join(BYTES_PER_VALUE),
                )
            values["weights_dtype"] = dtype_name(value)
        else:
            raise KvError("model_code_unknown_field", f"unknown field {key!r} in the model code", field=key)
    missing = [key for key in _REQUIRED if _INT_FIELDS[key][0] not in values]
    if missing:
        lacking = ", ".join(_INT_FIELDS[key][0] for key in missing)
        raise KvError("model_code_missing_fields", f"the model code lacks {lacking}", missing=lacking)
    if "layer_pattern" in values:
        values["layer_pattern"] = pattern_from_code(str(values["layer_pattern"]))
    return values


def _whole(name: str, text: str, low: int, high: int) -> int:
    if not text.isdigit() or len(text) > 15:
        raise KvError(
            "model_code_not_whole",
            f"{name} must be a whole number in the model code, got {text[:20]!r}",
            name=name,
            value=text[:20],
        )
    number = int(text)
    if not low <= number <= high:
        raise KvError(
            "model_code_out_of_range",
            f"{name} must be between {low:,} and {high:,}, got {number:,}",
            name=name,
            value=number,
            minimum=low,
            maximum=high,
        )
    return number


def _params(name: str, text: str) -> float:
    if not re.fullmatch(r"\d+(\.\d+)?(e-?\d+)?", text) or len(text) > 30:
        raise KvError(
            "model_code_not_a_number",
            f"{name} must be a number in the model code, got {text[:20]!r}",
            name=name,
            value=text[:20],
        )
    value = float(text)
    if not math.isfinite(value) or value <= 0 or value > _MAX_PARAMS:
        raise KvError(
            "model_code_out_of_range",
            f"{name} must be between 0 and 1e16, got {text[:20]!r}",
            name=name,
            value=text[:20],
            minimum=0,
            maximum=_MAX_PARAMS,
        )
    return value


def _number(value: object) -> str:
    """Integers as digits; other floats as Python's shortest round-trip text without '+'."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return repr(value).replace("+", "")
    return str(value)


def _name_code(name: str) -> str:
    cut = name[:MAX_NAME_CHARS]
    return "".join(char if _NAME_SAFE.match(char) else "".join(f"_{b:02X}" for b in char.encode()) for char in cut)


def _name_from_code(text: str) -> str:
    data = bytearray()
    position = 0
    while position < len(text):
        char = text[position]
        if char == "_":
            pair = text[position + 1 : position + 3]
            if len(pair) != 2 or not re.fullmatch(r"[0-9A-F]{2}", pair):
                raise KvError(
                    "model_code_bad_escape",
                    "bad escape in the model name: '_' must be followed by two upper-case hex digits",
                )
            data.append(int(pair, 16))
            position += 3
        elif _NAME_SAFE.match(char):
            data.extend(char.encode())
            position += 1
        else:
            raise KvError(
                "model_code_bad_name_character",
                f"character {char!r} cannot appear in the model name part of a code",
                character=char,
            )
    try:
        name = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KvError("model_code_name_not_utf8", "the model name in the code is not valid UTF-8") from None
    if len(name) > MAX_NAME_CHARS:
        raise KvError(
            "model_code_name_too_long",
            f"the model name in the code is longer than {MAX_NAME_CHARS} characters",
            maximum=MAX_NAME_CHARS,
        )
    return name
