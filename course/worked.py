"""Worked formulas: the substituted steps a lesson's formula block and an exercise's worked answer both show.

A ``WorkedStep`` is one line of a worked computation: a plain-ASCII ``formula`` over
symbols (``prefill_flops / (P * MFU)``), the ``quantities`` that stand for those symbols
(numbers kept as numbers, in kvcore's units: FLOP, bytes, seconds, FLOP/s, bytes/s),
and the ``value`` kvcore computes for it (never re-derived here). ``substituted`` puts
the numbers in (``1.6e13 / (9.894e14 * 0.5)``), so the line can be evaluated back
(:func:`evaluate`, a small parser: numbers, names, + - * / ^, parentheses, min, max,
floor, ceil, >=; no ``eval``) and checked against its value. The lessons render the
same steps as LaTeX in the learner's language (``ui.formula.worked_latex``); the
exercises turn them into their ``Step`` records (``course.exercises``).

Formulas (each function below names its source):

* roofline: t_compute = FLOPs / (n_gpu · P · MFU), t_memory = bytes / (n_gpu · BW · MBU), t = max(both);
* ridge point = P / BW;
* decode step bytes = weights read + B · KV per sequence (every GPU);
* KV cache per layer kind: 2 · L · H_kv · d_head · s · B · b (sliding: min(s, W); MLA: L · (r_kv + d_rope) ·
  s · B · b; linear: L · S_state · B · b_state), and bytes per token the same without s;
* what one GPU holds: weights + KV + overhead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvcore import (
    DecodeBytes,
    ModelSpec,
    PhaseTimes,
    Rates,
    compute_time_s,
    kv_bytes_per_token,
    kv_cache_bytes_by_kind,
    kv_heads_per_gpu,
    layer_values_per_token,
    memory_time_s,
    phase_times,
    ridge_point,
    sequence_kv_bytes,
)
from kvcore.errors import KvError

__all__ = [
    "Call",
    "Group",
    "Name",
    "Node",
    "Number",
    "Operation",
    "Quantity",
    "WorkedStep",
    "compute_term",
    "decode_memory_time",
    "decode_step_bytes",
    "evaluate",
    "heads_steps",
    "inline",
    "kv_per_token_steps",
    "kv_sequence_steps",
    "kv_terms",
    "memory_term",
    "memory_total",
    "parse",
    "plain",
    "ridge",
    "roofline",
    "step",
]

#: kvcore's default state dtype for linear-attention layers: BF16, 2 bytes per value.
STATE_BYTES_PER_VALUE = 2.0


# ---------------------------------------------------------------- numbers and steps


def plain(value: float, digits: int = 6) -> str:
    """A number in plain form: whole numbers in full (from 1e9 as 8.03e9 if `digits` say it all), else `digits` digits.

    Floors get 12 digits, so that the count they give is the answer's.

    >>> plain(131072), plain(2621440), plain(8.03e9), plain(3.35e12), plain(14.957040548), plain(0.9), plain(1e-5)
    ('131072', '2621440', '8.03e9', '3.35e12', '14.957', '0.9', '1e-5')
    """
    number = float(value)
    short = f"{number:.{digits}g}".replace("e+", "e").replace("e-0", "e-").replace("e0", "e")
    if number.is_integer() and abs(number) < 1e15 and (abs(number) < 1e9 or float(short) != number):
        return str(int(number))
    return short


@dataclass(frozen=True, slots=True, kw_only=True)
class Quantity:
    """A number a formula is worked with: the symbol it stands for, its value in kvcore's units, that unit.

    ``unit`` is one of '' (a pure number or count), 'FLOP', 'FLOP/s', 'B', 'B/s', 's', 'GiB', 'ms'; a page
    formats the number by it. ``digits``: significant digits of the plain-ASCII form (12 under a floor).
    """

    symbol: str
    value: float
    unit: str = ""
    digits: int = 6


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkedStep:
    """One line of a worked computation: name = formula (symbols) = substituted (numbers) = value unit."""

    name: str
    formula: str
    quantities: tuple[Quantity, ...]
    value: float
    unit: str

    @property
    def symbolic(self) -> str:
        """The formula over symbols, plain ASCII: 'prefill_flops / P * 1000'."""
        return self.formula

    @property
    def substituted(self) -> str:
        """The formula with every quantity's number put in, plain ASCII: '1.6e13 / 9.894e14 * 1000'."""
        return _TOKEN.sub(lambda match: self._number_for(match.group(0)), self.formula)

    def quantity(self, symbol: str) -> Quantity:
        """The quantity that stands for `symbol` (KvError 'worked_symbol' when there is none)."""
        for quantity in self.quantities:
            if quantity.symbol == symbol:
                return quantity
        raise KvError("worked_symbol", f"{self.name} has no quantity {symbol!r}", step=self.name, symbol=symbol)

    def values(self) -> dict[str, float]:
        """{symbol: value}: what :func:`evaluate` needs to evaluate ``formula`` itself."""
        return {quantity.symbol: quantity.value for quantity in self.quantities}

    def _number_for(self, token: str) -> str:
        for quantity in self.quantities:
            if quantity.symbol == token:
                return plain(quantity.value, quantity.digits)
        return token


def step(name: str, formula: str, quantities: Sequence[Quantity], value: Any, unit: str) -> WorkedStep:
    """A WorkedStep whose every symbol (a name that is not a function) has a quantity, else KvError 'worked_symbol'."""
    known = {quantity.symbol for quantity in quantities}
    for token in _TOKEN.findall(formula):
        if (token[0].isalpha() or token[0] == "_") and token not in _FUNCTIONS and token not in known:
            raise KvError("worked_symbol", f"{name}: no quantity for {token!r}", step=name, symbol=token)
    return WorkedStep(name=name, formula=formula, quantities=tuple(quantities), value=float(value), unit=unit)


def inline(outer: WorkedStep, inner: WorkedStep) -> WorkedStep:
    """`outer` with the symbol ``inner.name`` replaced by ``(inner.formula)``: one line instead of two.

    t = step_bytes / BW and step_bytes = W + B · KV give t = (W + B · KV) / BW. The value is outer's.
    """
    formula = _TOKEN.sub(lambda m: f"({inner.formula})" if m.group(0) == inner.name else m.group(0), outer.formula)
    kept = [quantity for quantity in outer.quantities if quantity.symbol != inner.name]
    return step(outer.name, formula, [*inner.quantities, *kept], outer.value, outer.unit)


# ---------------------------------------------------------------- the time model (kvcore.timing)


def _denominator(
    rate: Quantity, efficiency: Quantity, rates: Rates, efficiencies: bool, gpus: bool | None
) -> tuple[str, list[Quantity]]:
    """n_gpu · rate · efficiency, the factors shown: n_gpu when `gpus` (None: when more than one), the efficiency
    when `efficiencies`; parenthesised when there is more than one."""
    show_gpus = rates.gpus > 1 if gpus is None else gpus
    factors = [*([Quantity(symbol="n_gpu", value=rates.gpus)] if show_gpus else []), rate]
    factors += [efficiency] if efficiencies else []
    text = " * ".join(factor.symbol for factor in factors)
    return (f"({text})" if len(factors) > 1 else text), factors


def _time_unit(unit: str) -> tuple[float, str]:
    """Seconds, or milliseconds (× 1000, written at the end of the formula)."""
    if unit not in ("s", "ms"):
        raise KvError("worked_unit", f"a time is worked in s or ms, not {unit!r}", unit=unit)
    return (1e3, " * 1000") if unit == "ms" else (1.0, "")


def _compute_line(
    flops: Quantity, *, seconds: float, rates: Rates, efficiencies: bool, gpus: bool | None, unit: str
) -> WorkedStep:
    """compute_time = FLOPs / (n_gpu · P · MFU) [s or ms], worth kvcore's `seconds` (× 1000 for ms)."""
    scale, suffix = _time_unit(unit)
    peak = Quantity(symbol="P", value=rates.peak_flop_per_s, unit="FLOP/s")
    mfu = Quantity(symbol="MFU", value=rates.mfu)
    text, factors = _denominator(peak, mfu, rates, efficiencies, gpus)
    return step("compute_time", f"{flops.symbol} / {text}{suffix}", [flops, *factors], scale * seconds, unit)


def _memory_line(
    moved: Quantity, *, seconds: float, rates: Rates, efficiencies: bool, gpus: bool | None, unit: str
) -> WorkedStep:
    """memory_time = bytes / (n_gpu · BW · MBU) [s or ms], worth kvcore's `seconds` (× 1000 for ms)."""
    scale, suffix = _time_unit(unit)
    bandwidth = Quantity(symbol="BW", value=rates.bandwidth_bytes_per_s, unit="B/s")
    mbu = Quantity(symbol="MBU", value=rates.mbu)
    text, factors = _denominator(bandwidth, mbu, rates, efficiencies, gpus)
    return step("memory_time", f"{moved.symbol} / {text}{suffix}", [moved, *factors], scale * seconds, unit)


def compute_term(
    flops: Quantity, *, rates: Rates, efficiencies: bool = False, gpus: bool | None = None, unit: str = "s"
) -> WorkedStep:
    """compute_time = FLOPs / (n_gpu · P · MFU) [s or ms] (``kvcore.compute_time_s``)."""
    seconds = float(compute_time_s(flops.value, peak_flop_per_s=rates.peak_flop_per_s, mfu=rates.mfu, gpus=rates.gpus))
    return _compute_line(flops, seconds=seconds, rates=rates, efficiencies=efficiencies, gpus=gpus, unit=unit)


def memory_term(
    moved: Quantity, *, rates: Rates, efficiencies: bool = False, gpus: bool | None = None, unit: str = "s"
) -> WorkedStep:
    """memory_time = bytes / (n_gpu · BW · MBU) [s or ms] (``kvcore.memory_time_s``)."""
    seconds = float(
        memory_time_s(moved.value, bandwidth_bytes_per_s=rates.bandwidth_bytes_per_s, mbu=rates.mbu, gpus=rates.gpus)
    )
    return _memory_line(moved, seconds=seconds, rates=rates, efficiencies=efficiencies, gpus=gpus, unit=unit)


def roofline(
    name: str,
    *,
    flops: Quantity,
    moved: Quantity,
    rates: Rates,
    times: PhaseTimes | None = None,
    efficiencies: bool = False,
    gpus: bool | None = None,
    unit: str = "s",
) -> tuple[WorkedStep, WorkedStep, WorkedStep]:
    """A phase on the roofline, three lines: compute_time, memory_time and `name` = their maximum.

    compute_time = FLOPs / (n_gpu · P · MFU), memory_time = bytes / (n_gpu · BW · MBU), `name` =
    max(compute_time, memory_time) [s, or ms with ``unit='ms'``: × 1000]. The values are kvcore's
    two terms, `times` when the caller has them (``kvcore.prefill_times``, ``decode_step_times``
    of the same FLOPs and bytes), else ``kvcore.phase_times(flops, moved)`` (Williams et al. 2009).
    `efficiencies` shows MFU and MBU; `gpus` shows n_gpu (None: when there is more than one).
    """
    scale, _ = _time_unit(unit)
    terms = phase_times(flops.value, moved.value, rates=rates) if times is None else times
    compute = _compute_line(
        flops, seconds=float(terms.compute_s), rates=rates, efficiencies=efficiencies, gpus=gpus, unit=unit
    )
    memory = _memory_line(
        moved, seconds=float(terms.memory_s), rates=rates, efficiencies=efficiencies, gpus=gpus, unit=unit
    )
    both = [
        Quantity(symbol="compute_time", value=compute.value, unit=unit),
        Quantity(symbol="memory_time", value=memory.value, unit=unit),
    ]
    return compute, memory, step(name, "max(compute_time, memory_time)", both, scale * float(terms.time_s), unit)


def ridge(*, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> WorkedStep:
    """The ridge point: P / BW [FLOP/byte] (kvcore's ``ridge_point``; H100 SXM ≈ 295, seed 004: "about 300")."""
    return step(
        "ridge_point",
        "P / BW",
        [
            Quantity(symbol="P", value=peak_flop_per_s, unit="FLOP/s"),
            Quantity(symbol="BW", value=bandwidth_bytes_per_s, unit="B/s"),
        ],
        ridge_point(peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s),
        "FLOP/byte",
    )


def decode_step_bytes(read: DecodeBytes, *, batch: int) -> WorkedStep:
    """Bytes one decode step reads: weights_read + batch · kv_sequence [B] (``kvcore.decode_bytes_per_step``).

    `read` is kvcore's ``DecodeBytes`` over every GPU; kv_sequence = kv_bytes / batch is one
    sequence's cache as every GPU reads it (KV heads that tensor parallelism replicates, and
    MLA's latent, are read on each rank that holds them). The value is kvcore's total.
    """
    return step(
        "step_bytes",
        "weights_read + batch * kv_sequence",
        [
            Quantity(symbol="weights_read", value=float(read.weights_bytes), unit="B"),
            Quantity(symbol="batch", value=batch),
            Quantity(symbol="kv_sequence", value=float(read.kv_bytes) / batch, unit="B"),
        ],
        float(read.total),
        "B",
    )


def decode_memory_time(read: DecodeBytes, *, batch: int, rates: Rates) -> WorkedStep:
    """A decode step's bytes term, its bytes written out: (weights_read + batch · kv_sequence) / (n_gpu · BW · MBU) [s].

    :func:`decode_step_bytes` inlined into :func:`memory_term` (n_gpu and MBU always shown); the value is
    ``kvcore.memory_time_s`` of kvcore's step bytes. Source: seed 004 (bandwidth-limited decode).
    """
    step_bytes = decode_step_bytes(read, batch=batch)
    moved = Quantity(symbol=step_bytes.name, value=step_bytes.value, unit="B")
    return inline(memory_term(moved, rates=rates, efficiencies=True, gpus=True), step_bytes)


# ---------------------------------------------------------------- the KV cache (kvcore.kv)


def _kinds(model: ModelSpec) -> dict[str, tuple[Any, int]]:
    """Layer kind → (its LayerSpec, how many layers), in order of first appearance."""
    return {layer.kind: (layer, n) for layer, n in model.layer_counts().items()}


def heads_steps(model: ModelSpec, tp: int) -> list[WorkedStep]:
    """KV heads one GPU keeps, when tensor parallelism splits them: max(floor(H_kv / n_gpu), 1) (vLLM)."""
    if tp == 1 or not set(_kinds(model)) & {"full", "sliding"}:
        return []
    heads = kv_heads_per_gpu(model.num_key_value_heads, tp)
    quantities = [Quantity(symbol="H_kv", value=model.num_key_value_heads), Quantity(symbol="n_gpu", value=tp)]
    return [step("kv_heads_per_gpu", "max(floor(H_kv / n_gpu), 1)", quantities, heads, "heads")]


def kv_terms(
    model: ModelSpec,
    *,
    context_tokens: int,
    bytes_per_value: float,
    concurrency: int | None = None,
    tp: int = 1,
    state_bytes_per_value: float = STATE_BYTES_PER_VALUE,
) -> list[WorkedStep]:
    """The cache of `concurrency` sequences of `context_tokens` on one GPU, one step per layer kind ('kv_<kind>').

    full: 2 · L · H_kv · d_head · s · B · b; sliding: 2 · L · H_kv · d_head · min(s, W) · B · b; MLA:
    L · (r_kv + d_rope) · s · B · b; linear: L · S_state · B · b_state [/ n_gpu] (bytes). Values:
    ``kvcore.kv_cache_bytes_by_kind``. B is left out when `concurrency` is None (one sequence); L is
    L_<kind> when the model has several kinds.
    """
    kinds = _kinds(model)
    sequences = 1 if concurrency is None else concurrency
    parts = kv_cache_bytes_by_kind(
        model,
        context_tokens=context_tokens,
        concurrency=sequences,
        bytes_per_value=bytes_per_value,
        tp=tp,
        state_bytes_per_value=state_bytes_per_value,
    )
    batch = [] if concurrency is None else [_factor(Quantity(symbol="B", value=concurrency))]
    b = Quantity(symbol="b", value=bytes_per_value)
    s = Quantity(symbol="s", value=context_tokens)
    terms = []
    for kind, (layer, n) in kinds.items():
        L = _factor(Quantity(symbol="L" if len(kinds) == 1 else f"L_{kind}", value=n))
        if kind == "mla":
            factors = [L, _latent(layer), _factor(s), *batch, _factor(b)]
        elif kind == "linear":
            state = Quantity(symbol="b_state", value=state_bytes_per_value)
            factors = [L, _factor(Quantity(symbol="S_state", value=layer.linear_state_values)), *batch, _factor(state)]
        else:
            heads = Quantity(
                symbol="H_kv" if tp == 1 else "H_kv_gpu", value=kv_heads_per_gpu(layer.num_key_value_heads, tp)
            )
            tokens = _factor(s)
            if kind == "sliding":
                tokens = ("min(s, W)", [s, Quantity(symbol="W", value=layer.sliding_window)])
            factors = [("2", []), L, _factor(heads), _factor(Quantity(symbol="d_head", value=layer.head_dim))]
            factors += [tokens, *batch, _factor(b)]
        formula, quantities = _product(factors)
        if kind == "linear" and tp > 1:
            formula, quantities = formula + " / n_gpu", [*quantities, Quantity(symbol="n_gpu", value=tp)]
        terms.append(step(f"kv_{kind}", formula, quantities, float(parts[kind]), "B"))
    return terms


def kv_sequence_steps(
    model: ModelSpec, *, context_tokens: int, bytes_per_value: float, tp: int = 1
) -> list[WorkedStep]:
    """One sequence's cache on one GPU, kind by kind (:func:`kv_terms`), then their sum 'kv_sequence' (the last step).

    The sum is ``kvcore.sequence_kv_bytes`` [B]; seed 000.
    """
    terms = kv_terms(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value, tp=tp)
    total = float(sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value, tp=tp))
    steps = heads_steps(model, tp)
    if len(terms) == 1:
        [only] = terms
        return [*steps, step("kv_sequence", only.formula, only.quantities, total, "B")]
    return [*steps, *terms, _sum("kv_sequence", terms, total, "B")]


def kv_per_token_steps(model: ModelSpec, *, bytes_per_value: float, tp: int = 1) -> list[WorkedStep]:
    """Bytes one token adds to one GPU's cache, kind by kind, then their sum 'bytes_per_token' (the last step).

    full and sliding: 2 · L · H_kv · d_head · b; MLA: L · (r_kv + d_rope) · b (linear layers add nothing
    per token). The sum is ``kvcore.kv_bytes_per_token`` [B/token]; seed 000.
    """
    kinds = _kinds(model)
    b = Quantity(symbol="b", value=bytes_per_value)
    terms = []
    for kind, (layer, n) in kinds.items():
        if kind == "linear":
            continue
        L = _factor(Quantity(symbol="L" if len(kinds) == 1 else f"L_{kind}", value=n))
        value = float(layer_values_per_token(layer, tp=tp) * n * bytes_per_value)
        if kind == "mla":
            factors = [L, _latent(layer), _factor(b)]
        else:
            heads = Quantity(
                symbol="H_kv" if tp == 1 else "H_kv_gpu", value=kv_heads_per_gpu(layer.num_key_value_heads, tp)
            )
            factors = [
                ("2", []),
                L,
                _factor(heads),
                _factor(Quantity(symbol="d_head", value=layer.head_dim)),
                _factor(b),
            ]
        formula, quantities = _product(factors)
        terms.append(step(f"bytes_per_token_{kind}", formula, quantities, value, "B/token"))
    total = kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    steps = heads_steps(model, tp)
    if len(terms) == 1:
        [only] = terms
        return [*steps, step("bytes_per_token", only.formula, only.quantities, total, "B/token")]
    return [*steps, *terms, _sum("bytes_per_token", terms, total, "B/token")]


def memory_total(*, weights_bytes: float, kv_bytes: float, overhead_bytes: float, total_bytes: float) -> WorkedStep:
    """What one GPU holds: weights + KV + overhead [B]; the total is kvcore's (``total_memory_bytes``), passed in."""
    quantities = [
        Quantity(symbol="weights", value=weights_bytes, unit="B"),
        Quantity(symbol="KV", value=kv_bytes, unit="B"),
        Quantity(symbol="overhead", value=overhead_bytes, unit="B"),
    ]
    return step("total_memory", "weights + KV + overhead", quantities, total_bytes, "B")


def _product(factors: Sequence[tuple[str, Sequence[Quantity]]]) -> tuple[str, list[Quantity]]:
    """Factors (each its text and the quantities in it) joined by ' * ', and all their quantities in order."""
    return " * ".join(text for text, _ in factors), [quantity for _, quantities in factors for quantity in quantities]


def _factor(quantity: Quantity) -> tuple[str, list[Quantity]]:
    return quantity.symbol, [quantity]


def _latent(layer: Any) -> tuple[str, list[Quantity]]:
    """MLA's cached width per token: (r_kv + d_rope)."""
    rank = Quantity(symbol="r_kv", value=layer.kv_lora_rank)
    rope = Quantity(symbol="d_rope", value=layer.qk_rope_head_dim)
    return "(r_kv + d_rope)", [rank, rope]


def _sum(name: str, terms: Sequence[WorkedStep], total: float, unit: str) -> WorkedStep:
    """name = term_1 + term_2 + … with each term's value as its quantity."""
    quantities = [Quantity(symbol=term.name, value=term.value, unit=term.unit) for term in terms]
    return step(name, " + ".join(term.name for term in terms), quantities, total, unit)


# ---------------------------------------------------------------- a safe evaluator


_TOKEN = re.compile(r"\d+(?:\.\d*)?(?:e-?\d+)?|[A-Za-z_]\w*")
_LEXEME = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:e-?\d+)?)|([A-Za-z_]\w*)|(>=|[-+*/^(),]))")
_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max, "floor": math.floor, "ceil": math.ceil}


@dataclass(frozen=True, slots=True)
class Number:
    """A literal number of a formula, with its text ('8.03e9')."""

    value: float
    text: str


@dataclass(frozen=True, slots=True)
class Name:
    """A symbol of a formula ('P', 'prefill_flops')."""

    name: str


@dataclass(frozen=True, slots=True)
class Group:
    """A parenthesised part of a formula (kept: a renderer writes the parentheses where the formula has them)."""

    inner: Node


@dataclass(frozen=True, slots=True)
class Operation:
    """left op right, op one of + - * / ^ >=; or a negation (op 'neg', left None)."""

    op: str
    left: Node | None
    right: Node


@dataclass(frozen=True, slots=True)
class Call:
    """min(…), max(…), floor(…), ceil(…)."""

    function: str
    args: tuple[Node, ...]


Node = Number | Name | Group | Operation | Call


def parse(text: str) -> Node:
    """The tree of a plain-ASCII formula: numbers, names, + - * / ^ (right-associative), parentheses, >=, and
    min/max/floor/ceil. KvError 'worked_formula' on anything else.

    >>> isinstance(parse("2 * (3 + 4)").right, Group), evaluate(parse("2 ^ 3 ^ 2"))  # ^ is right-associative
    (True, 512.0)
    """
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _LEXEME.match(text, position)
        if match is None:
            raise KvError("worked_formula", f"cannot read {text[position:]!r} in {text!r}", formula=text)
        number, name, symbol = match.groups()
        tokens.append(("number", number) if number else ("name", name) if name else ("symbol", symbol))
        position = match.end()
    parser = _Parser(tokens, text)
    tree = parser.comparison()
    if parser.position != len(tokens):
        raise KvError("worked_formula", f"unexpected {tokens[parser.position][1]!r} in {text!r}", formula=text)
    return tree


class _Parser:
    """Recursive descent over the tokens of one formula (comparison > sum > product > unary > power > atom)."""

    def __init__(self, tokens: list[tuple[str, str]], text: str) -> None:
        self.tokens, self.text, self.position = tokens, text, 0

    def _peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self.position >= len(self.tokens) or (expected is not None and self.tokens[self.position][1] != expected):
            raise KvError("worked_formula", f"expected {expected or 'more'} in {self.text!r}", formula=self.text)
        self.position += 1
        return self.tokens[self.position - 1]

    def comparison(self) -> Node:
        left = self.sum()
        if self._peek() == ">=":
            self._take()
            return Operation(">=", left, self.sum())
        return left

    def sum(self) -> Node:
        node = self.product()
        while self._peek() in ("+", "-"):
            op = self._take()[1]
            node = Operation(op, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while self._peek() in ("*", "/"):
            op = self._take()[1]
            node = Operation(op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self._peek() == "-":
            self._take()
            return Operation("neg", None, self.unary())
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self._peek() == "^":
            self._take()
            return Operation("^", base, self.unary())
        return base

    def atom(self) -> Node:
        kind, token = self._take()
        if kind == "number":
            return Number(float(token), token)
        if kind == "name":
            if self._peek() == "(" and token in _FUNCTIONS:
                self._take("(")
                args = [self.comparison()]
                while self._peek() == ",":
                    self._take()
                    args.append(self.comparison())
                self._take(")")
                return Call(token, tuple(args))
            return Name(token)
        if token == "(":
            inner = self.comparison()
            self._take(")")
            return Group(inner)
        raise KvError("worked_formula", f"unexpected {token!r} in {self.text!r}", formula=self.text)


def evaluate(formula: str | Node, values: Mapping[str, float] | None = None) -> float:
    """The value of a formula (text or tree); names take their number from `values` (KvError 'worked_symbol' if absent).

    >>> evaluate("max(2 * 3, 2^3) / 4"), evaluate("L * s", {"L": 32, "s": 8192})
    (2.0, 262144.0)
    """
    node = parse(formula) if isinstance(formula, str) else formula
    known = values or {}

    def value(node: Node) -> float:
        if isinstance(node, Number):
            return node.value
        if isinstance(node, Name):
            if node.name not in known:
                raise KvError("worked_symbol", f"no number for {node.name!r}", symbol=node.name)
            return float(known[node.name])
        if isinstance(node, Group):
            return value(node.inner)
        if isinstance(node, Call):
            return float(_FUNCTIONS[node.function](*(value(arg) for arg in node.args)))
        right = value(node.right)
        if node.op == "neg" or node.left is None:
            return -right
        left = value(node.left)
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        if node.op == "/":
            return left / right
        if node.op == "^":
            return float(left**right)
        return float(left >= right)

    return value(node)
