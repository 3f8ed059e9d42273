"""Reading and checking what a student typed: numbers, units, and the slips a teacher recognises.

Two steps, both pure and total: ``parse_answer`` turns a string into readings
(value + unit) or a status saying why it could not; ``check_answer`` compares a
reading with the expected quantity and returns a ``Verdict`` made of codes and
numbers only (the app words them in Portuguese or English).

Dimensions and units (canonical unit ids; spelling is case- and accent-insensitive)
-------------------------------------------------------------------------------
* ``memory`` — B, KB, MB, GB, TB (decimal, 10**3 steps; "kB" = "KB"), KiB, MiB,
  GiB, TiB (binary, 2**10 steps), and bits: bit, Kbit, Mbit, Gbit, Tbit (÷ 8).
  "Gb", "Mb", "Kib" (capital prefix, small b) are read as bytes, because the lessons
  never ask for bits and students write them this way; the flag ``b_read_as_byte``
  lets the app remind them that b is a bit. A prefix without B ("16G", "128k",
  "1M") is ``ambiguous`` between the decimal and the binary unit; "16Gi" is GiB.
* ``time`` — s (sec, seg, segundos), ms, us (µs, μs), ns, min, h. A lone "m" is unknown.
* ``token_rate`` — tokens/s (tok/s, t/s, tps, "tokens por segundo").
* ``bandwidth`` — B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s.
* ``flops`` (a count) — FLOP, GFLOP, TFLOP, PFLOP; a trailing s is the plural, so
  "TFLOPs"/"TFLOPS" is a count here. ``flop_rate`` — FLOP/s … PFLOP/s, where
  "TFLOPS" is a rate. The asked dimension decides which reading wins.
* ``count`` — users, gpus, tokens, sequences (pt and en nouns). Nouns do not convert
  into each other: "12 tokens" for a question about users is ``wrong_dimension``.
  In counts and token rates, k/K = 1,000, M = 1,000,000, "mil" = 1,000, "mi",
  "milhão"/"million" = 1,000,000: "128k" is 128,000, never 131,072 (the binary
  "128K context" slip is caught by ``check_answer`` as an ``off_by_factor`` 1.024).
* ``ratio`` — x, ×, times, vezes. ``choice`` — a choice id or its pt/en name
  (``CHOICE_WORDS``).

A number without a unit is read in the unit the question asked for (flag ``assumed_unit``).

Numbers
-------
Digits 0-9 only (no spelled numbers: "doze" is ``not_a_number``), an optional
sign (negative values are rejected: no asked quantity is negative), an optional
exponent ("1.2e3"), and simple fractions of two such numbers ("1/2 GiB" = 0.5 GiB,
"3/4" = 0.75; a zero denominator or "1/2/3" is ``not_a_number``). Separators, by rule:

1. Spaces (also no-break and thin spaces) group thousands: "1 234" = 1234, "1 234,5" = 1234.5.
2. Both "." and "," present: the last one is the decimal mark, the other groups
   thousands: "1.234,5" = "1,234.5" = 1234.5 on either page.
3. The same mark twice or more groups thousands: "1,234,567" = "1.234.567" = 1234567.
4. One mark alone is a decimal mark when it cannot group thousands (not exactly
   three digits after it, or an integer part of 0 or of more than three digits):
   "12,5" = "12.5" = 12.5 on either page (flag ``decimal_comma`` on the English page,
   ``decimal_point`` on the Portuguese one).
5. One mark followed by exactly three digits: the page's decimal mark (pt ",", en ".")
   is a decimal mark ("1,234" on the pt page = 1.234; "1.234" on the en page = 1.234).
   The page's thousands mark is ``ambiguous``: "1,234" on the en page is 1234 in
   English but 1.234 to a Portuguese reader; both readings are returned, the
   page's own first, and ``check_answer`` decides only if both agree.

Invalid groupings ("1,23,456", "1.2.3") are ``not_a_number``; "1e400" overflows
and is ``not_finite``. ``parse_answer`` never raises on any string.

Parse statuses (``ParsedAnswer.status``)
----------------------------------------
``ok`` (one reading), ``ambiguous`` (two or more readings), ``empty`` (blank),
``not_a_number``, ``not_finite`` (overflow), ``negative``, ``unknown_unit``,
``wrong_dimension`` (a known unit of another dimension; the reading is kept),
``not_a_choice`` (a word that names no choice).

Verdict codes (``Verdict.code``)
--------------------------------
* ``right`` — within ``tolerance_rel`` of the expected value, in the asked unit (or none).
* ``right_in_other_unit`` — the right quantity in another unit of the same
  dimension (16.06 GB when 14.96 GiB was asked). A demanding teacher gives the
  point and says which unit was asked: ``accepted`` is True, ``given_in_expected_unit``
  holds the conversion, ``other_unit`` the unit typed.
* ``right_value_wrong_unit_name`` — the number is the expected quantity expressed in
  another unit, but it is labelled with the wrong one: "14.96 GB" (the GiB figure
  called GB), "16.06 GiB" (the GB figure called GiB), "97.8 s" for 97.8 ms, or a
  bare "16.06" when GiB was asked. Not accepted; ``other_unit`` is the unit the number
  belongs to and ``expected_in_other_unit`` the expected value in it, so the app can show both.
* ``off_by_factor`` — wrong, but given / expected is (within tolerance, at least 2 %)
  a recognisable factor or its inverse: the exercise's own factors (GQA group,
  batch, GPUs), then 2 (K and V), 8 (bits per byte), 1000 (a prefix), 1.024,
  1.024², 1.024³, 1.024⁴ (1000 vs 1024); ratios get only their exercise's factors.
  A factor within twice the tolerance of 1, or a whole count within one of the
  expected count, is noise and not recognised. ``factor`` is given / expected
  rounded to that factor (0.5: half), ``factor_name`` its name.
* ``known_mistake`` — wrong, but within tolerance (at least 2 %) of what a named slip gives:
  ``check_answer``'s `mistakes` ({"no_kv_read": 15.93}, in the expected unit; ``course.mistakes``
  works them out with kvcore). ``mistake`` is its name, ``mistake_value`` its answer. A mistake
  and a factor compete: the one closer to the answer wins (the exercise's own factors, then the
  mistakes, then the common factors on a tie).
* ``wrong`` — anything else; ``ratio`` = given / expected (None when 0 was expected).
* ``unparseable`` — no number could be read (``parse_status`` says why).
* ``empty`` — nothing typed. ``wrong_dimension`` — a quantity of another kind (a
  time for a memory question, tokens for users).
* ``ambiguous`` — the readings of an ambiguous answer get different codes (one
  right, one wrong): the app should ask which was meant (``alternatives`` holds one
  verdict per reading). When they all agree, that code is returned with the
  alternatives attached.

Tolerance is relative and inclusive (plus 1e-9 for conversion round-off), so it
must stay below the gap between the units a student confuses: KiB/KB 2.4 %,
MiB/MB 4.9 %, GiB/GB 7.4 %, TiB/TB 10 %. 1 % for KiB answers and 3 % for GiB is safe.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

MEMORY = "memory"
TIME = "time"
TOKEN_RATE = "token_rate"
BANDWIDTH = "bandwidth"
FLOPS = "flops"
FLOP_RATE = "flop_rate"
COUNT = "count"
RATIO = "ratio"
CHOICE = "choice"
DIMENSIONS = (MEMORY, TIME, TOKEN_RATE, BANDWIDTH, FLOPS, FLOP_RATE, COUNT, RATIO, CHOICE)
LANGS = ("pt", "en")
PARSE_STATUSES = (
    "ok",
    "ambiguous",
    "empty",
    "not_a_number",
    "not_finite",
    "negative",
    "unknown_unit",
    "wrong_dimension",
    "not_a_choice",
)
VERDICT_CODES = (
    "right",
    "right_in_other_unit",
    "right_value_wrong_unit_name",
    "off_by_factor",
    "known_mistake",
    "wrong",
    "unparseable",
    "empty",
    "wrong_dimension",
    "ambiguous",
)

#: Smallest relative tolerance used to recognise a factor (a count checked exactly still shows "half").
FACTOR_TOLERANCE = 0.02

#: Factors any answer may be off by: (name, factor). Exercises add their own first.
COMMON_FACTORS: tuple[tuple[str, float], ...] = (
    ("kv_pair", 2.0),
    ("bits_per_byte", 8.0),
    ("thousand", 1000.0),
    ("kilo_vs_kibi", 1.024),
    ("mega_vs_mebi", 1.024**2),
    ("giga_vs_gibi", 1.024**3),
    ("tera_vs_tebi", 1.024**4),
)


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit: its id, its dimension, its size in the dimension's base unit, and how people spell it."""

    id: str
    dimension: str
    factor: float
    spellings: tuple[str, ...] = ()


def _memory_units(suffix: str, dimension: str) -> tuple[Unit, ...]:
    """B … TiB (or B/s … TiB/s with suffix '/s'), spellings in key form (casefolded)."""
    decimal = [(p, 1000.0**i) for i, p in enumerate(("", "K", "M", "G", "T"))]
    binary = [(p + "i", 1024.0**i) for i, p in enumerate(("K", "M", "G", "T"), start=1)]
    words = {"": "", "K": "kilo", "M": "mega", "G": "giga", "T": "tera", "Ki": "kibi", "Mi": "mebi", "Gi": "gibi"}
    units = []
    for prefix, size in decimal + binary:
        unit_id = f"{prefix}B{suffix}"
        spellings = {unit_id.casefold(), f"{prefix}byte{suffix}".casefold(), f"{prefix}bytes{suffix}".casefold()}
        if prefix in words and prefix:
            spellings |= {f"{words[prefix]}byte{suffix}", f"{words[prefix]}bytes{suffix}"}
        units.append(Unit(unit_id, dimension, size, tuple(sorted(spellings))))
    return tuple(units)


_BITS = tuple(
    Unit(f"{prefix}bit", MEMORY, 1000.0**i / 8, (f"{prefix}bit".casefold(), f"{prefix}bits".casefold()))
    for i, prefix in enumerate(("", "K", "M", "G", "T"))
)
_FLOP_PREFIXES = (("", 1.0), ("G", 1e9), ("T", 1e12), ("P", 1e15))

UNITS: tuple[Unit, ...] = (
    *_memory_units("", MEMORY),
    *_BITS,
    *_memory_units("/s", BANDWIDTH),
    Unit("s", TIME, 1.0, ("s", "sec", "secs", "seg", "second", "seconds", "segundo", "segundos")),
    Unit("ms", TIME, 1e-3, ("ms", "msec", "millisecond", "milliseconds", "milissegundo", "milissegundos")),
    Unit("us", TIME, 1e-6, ("us", "usec", "microsecond", "microseconds", "microssegundo", "microssegundos")),
    Unit("ns", TIME, 1e-9, ("ns", "nanosecond", "nanoseconds", "nanossegundo", "nanossegundos")),
    Unit("min", TIME, 60.0, ("min", "mins", "minute", "minutes", "minuto", "minutos")),
    Unit("h", TIME, 3600.0, ("h", "hr", "hrs", "hour", "hours", "hora", "horas")),
    Unit("tokens/s", TOKEN_RATE, 1.0, ("tokens/s", "token/s", "tok/s", "toks/s", "t/s", "tps")),
    *(Unit(f"{p}FLOP", FLOPS, size, (f"{p}flop".casefold(), f"{p}flops".casefold())) for p, size in _FLOP_PREFIXES),
    *(
        Unit(f"{p}FLOP/s", FLOP_RATE, size, (f"{p}flop/s".casefold(), f"{p}flops".casefold()))
        for p, size in _FLOP_PREFIXES
    ),
    Unit("users", COUNT, 1.0, ("users", "user", "usuarios", "usuario", "usuarias", "usuaria", "pessoas", "people")),
    Unit("gpus", COUNT, 1.0, ("gpus", "gpu", "placas", "placa", "cards", "card")),
    Unit("tokens", COUNT, 1.0, ("tokens", "token", "tok", "toks")),
    Unit(
        "sequences",
        COUNT,
        1.0,
        ("sequences", "sequence", "sequencias", "sequencia", "requests", "request", "requisicoes", "requisicao"),
    ),
    Unit("x", RATIO, 1.0, ("x", "times", "vezes", "vez", "fold")),
)
UNIT_BY_ID: dict[str, Unit] = {unit.id: unit for unit in UNITS}

#: Words naming the choices of exercises (pt and en, accents and case ignored) → choice id.
CHOICE_WORDS: dict[str, str] = {
    "prefill": "prefill",
    "pre-fill": "prefill",
    "preenchimento": "prefill",
    "pre-preenchimento": "prefill",
    "decode": "decode",
    "decoding": "decode",
    "decodificacao": "decode",
    "geracao": "decode",
    "generation": "decode",
    "both": "both",
    "ambos": "both",
    "ambas": "both",
    "as duas": "both",
    "os dois": "both",
    "prefill and decode": "both",
    "prefill e decode": "both",
    "neither": "neither",
    "none": "neither",
    "nenhum": "neither",
    "nenhuma": "neither",
    "nenhuma das duas": "neither",
}

#: Words that multiply a count or a token rate: "128k tokens", "1,5 mi", "2 milhões de tokens".
_MULTIPLIERS = {
    "k": 1e3,
    "mil": 1e3,
    "thousand": 1e3,
    "thousands": 1e3,
    "m": 1e6,
    "mi": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "milhao": 1e6,
    "milhoes": 1e6,
}
_PREFIX_ONLY = {"k": ("KB", "KiB"), "m": ("MB", "MiB"), "g": ("GB", "GiB"), "t": ("TB", "TiB")}

_NUMBER = re.compile(
    r"""
    (?P<sign>[+-])?
    (?P<mantissa>
        [0-9]{1,3}(?:\ [0-9]{3}(?![0-9]))+(?:[.,][0-9]+)*   # thousands grouped by spaces
      | [0-9]+(?:[.,][0-9]+)*
      | [.,][0-9]+
    )
    (?P<exponent>[eE][+-]?[0-9]+)?
    """,
    re.VERBOSE | re.ASCII,
)
#: The denominator of a simple fraction, right after the numerator: "/2", " / 4".
_FRACTION = re.compile(r"\s*/\s*(?P<mantissa>[0-9]+(?:[.,][0-9]+)?)(?P<exponent>[eE][+-]?[0-9]+)?(?![0-9.,])", re.ASCII)
_SPACES = re.compile(r"\s+")
_BITS_SPELLING = re.compile(r"(^b$)|[KMGTP]i?b")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """One way to read an answer: a value in `unit` (a unit id; None when no unit was typed)."""

    value: float
    unit: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedAnswer:
    """What a student typed, read: a status, the readings, and notes for the app (see the module docstring)."""

    status: str
    dimension: str
    readings: tuple[Reading, ...] = ()
    flags: tuple[str, ...] = ()
    unit_dimension: str | None = None
    choice: str | None = None

    @property
    def value(self) -> float | None:
        """The value when there is exactly one reading, else None."""
        return self.readings[0].value if len(self.readings) == 1 else None

    @property
    def unit(self) -> str | None:
        """The unit typed when there is exactly one reading, else None."""
        return self.readings[0].unit if len(self.readings) == 1 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The check of one answer: a code and numbers only (codes in the module docstring)."""

    code: str
    expected_value: float
    expected_unit: str
    given_value: float | None = None
    given_unit: str | None = None
    given_in_expected_unit: float | None = None
    ratio: float | None = None
    factor: float | None = None
    factor_name: str | None = None
    mistake: str | None = None
    mistake_value: float | None = None
    other_unit: str | None = None
    expected_in_other_unit: float | None = None
    given_choice: str | None = None
    parse_status: str = "ok"
    flags: tuple[str, ...] = ()
    alternatives: tuple[Verdict, ...] = field(default=())

    @property
    def accepted(self) -> bool:
        """True when the answer earns the point: right, or the right quantity in another unit."""
        return self.code in ("right", "right_in_other_unit")


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """`value` in `from_unit` expressed in `to_unit` (same dimension): value · factor_from / factor_to.

    >>> convert(16.06, "GB", "GiB")  # doctest: +ELLIPSIS
    14.957...
    """
    source, target = _unit(from_unit), _unit(to_unit)
    if source.dimension != target.dimension:
        raise ValueError(f"cannot convert {from_unit} ({source.dimension}) to {to_unit} ({target.dimension})")
    return float(value) * source.factor / target.factor


def parse_answer(text: str, *, dimension: str, lang: str) -> ParsedAnswer:
    """Read a typed answer for a question of `dimension` on the `lang` page ('pt' or 'en').

    Never raises on any string (an unknown `dimension` or `lang` is a programming
    error and raises ValueError). Rules in the module docstring.

    >>> parse_answer("12,5 GiB", dimension="memory", lang="pt").readings
    (Reading(value=12.5, unit='GiB'),)
    >>> [r.value for r in parse_answer("1,234", dimension="count", lang="en").readings]
    [1234.0, 1.234]
    """
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}: use one of {', '.join(DIMENSIONS)}")
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use 'pt' or 'en'")
    cleaned = _SPACES.sub(" ", str(text).replace("\u2212", "-")).strip()
    if not cleaned:
        return ParsedAnswer(status="empty", dimension=dimension)
    if dimension == CHOICE:
        choice = CHOICE_WORDS.get(_key(cleaned).strip(" .!"))
        if choice is None:
            return ParsedAnswer(status="not_a_choice", dimension=dimension)
        return ParsedAnswer(status="ok", dimension=dimension, choice=choice)
    cleaned = cleaned.lstrip("~≈ ")
    match = _NUMBER.match(cleaned)
    if match is None:
        return ParsedAnswer(status="not_a_number", dimension=dimension)
    numbers = _number_readings(match.group("mantissa"), lang)
    if numbers is None:
        return ParsedAnswer(status="not_a_number", dimension=dimension)
    texts, flags = numbers
    exponent = match.group("exponent") or ""
    values = [float(number + exponent) for number in texts]
    end = match.end()
    fraction = _FRACTION.match(cleaned, end)
    if fraction is not None:  # "1/2 GiB": a simple fraction of two numbers
        denominator = _number_readings(fraction.group("mantissa"), lang)
        if denominator is None or len(denominator[0]) * len(texts) != 1 or cleaned[fraction.end() :].startswith("/"):
            return ParsedAnswer(status="not_a_number", dimension=dimension)
        below = float(denominator[0][0] + (fraction.group("exponent") or ""))
        if below == 0:
            return ParsedAnswer(status="not_a_number", dimension=dimension)
        values, flags, end = [values[0] / below], flags + denominator[1], fraction.end()
    unit_text = cleaned[end:].strip().rstrip(".!").strip()
    units = _read_units(unit_text, dimension)
    if units is None:
        return ParsedAnswer(status="unknown_unit", dimension=dimension, flags=flags)
    multiplier, unit_ids, unit_flags = units
    flags = flags + unit_flags
    readings = tuple(Reading(value=v * multiplier, unit=u) for v in values for u in unit_ids)
    if not all(math.isfinite(r.value) for r in readings):
        return ParsedAnswer(status="not_finite", dimension=dimension, flags=flags)
    if match.group("sign") == "-" and any(r.value > 0 for r in readings):
        return ParsedAnswer(status="negative", dimension=dimension, readings=readings, flags=flags)
    unit_dimension = _unit(unit_ids[0]).dimension if unit_ids[0] is not None else dimension
    if unit_dimension != dimension:
        return ParsedAnswer(
            status="wrong_dimension", dimension=dimension, readings=readings, flags=flags, unit_dimension=unit_dimension
        )
    status = "ambiguous" if len(readings) > 1 else "ok"
    return ParsedAnswer(status=status, dimension=dimension, readings=readings, flags=flags, unit_dimension=dimension)


def check_answer(
    parsed: ParsedAnswer,
    *,
    expected_value: float,
    expected_unit: str,
    tolerance_rel: float,
    factors: Mapping[str, float] | None = None,
    mistakes: Mapping[str, float] | None = None,
) -> Verdict:
    """Compare a parsed answer with the expected quantity (`expected_value` in `expected_unit`).

    `expected_unit` is a unit id, or the right choice id for a choice question.
    `factors` names the exercise's own recognisable slips ({"gqa_group": 4.0}); `mistakes`
    the answers named slips give, in `expected_unit` ({"no_kv_read": 15.93}).
    Codes and their numbers in the module docstring.

    >>> check_answer(parse_answer("16.06 GiB", dimension="memory", lang="en"),
    ...              expected_value=14.957, expected_unit="GiB", tolerance_rel=0.03).code
    'right_value_wrong_unit_name'
    """
    if not (math.isfinite(tolerance_rel) and tolerance_rel >= 0):
        raise ValueError(f"tolerance_rel must be a finite fraction ≥ 0 (e.g. 0.03), got {tolerance_rel}")
    base = Verdict(
        code="empty",
        expected_value=float(expected_value),
        expected_unit=expected_unit,
        parse_status=parsed.status,
        flags=parsed.flags,
    )
    if parsed.status == "empty":
        return base
    if parsed.dimension == CHOICE:
        if parsed.choice is None:
            return replace(base, code="unparseable")
        return replace(base, code="right" if parsed.choice == expected_unit else "wrong", given_choice=parsed.choice)
    if parsed.status == "wrong_dimension":
        reading = parsed.readings[0]
        return replace(base, code="wrong_dimension", given_value=reading.value, given_unit=reading.unit)
    if parsed.status not in ("ok", "ambiguous"):
        return replace(base, code="unparseable")
    _unit(expected_unit)
    extra = tuple((factors or {}).items())
    slips = tuple((mistakes or {}).items())
    verdicts = tuple(_check_reading(reading, base, tolerance_rel, extra, slips) for reading in parsed.readings)
    if len(verdicts) == 1:
        return verdicts[0]
    codes = {verdict.code for verdict in verdicts}
    if len(codes) == 1:
        return replace(verdicts[0], alternatives=verdicts)
    return replace(base, code="ambiguous", alternatives=verdicts)


def _check_reading(
    reading: Reading,
    base: Verdict,
    tolerance: float,
    factors: tuple[tuple[str, float], ...],
    mistakes: tuple[tuple[str, float], ...] = (),
) -> Verdict:
    """The verdict for one reading (see ``check_answer``)."""
    expected, expected_unit = base.expected_value, base.expected_unit
    given_unit = reading.unit or expected_unit
    source, target = _unit(given_unit), _unit(expected_unit)
    verdict = replace(base, given_value=reading.value, given_unit=given_unit)
    if source.dimension != target.dimension or (source.dimension == COUNT and source.id != target.id):
        return replace(verdict, code="wrong_dimension")
    given = convert(reading.value, given_unit, expected_unit)
    verdict = replace(verdict, given_in_expected_unit=given)
    if expected == 0:
        return replace(verdict, code="right" if given == 0 else "wrong")
    verdict = replace(verdict, ratio=given / expected)
    if _close(given, expected, tolerance):
        if given_unit == expected_unit:
            return replace(verdict, code="right")
        return replace(
            verdict,
            code="right_in_other_unit",
            other_unit=given_unit,
            expected_in_other_unit=convert(expected, expected_unit, given_unit),
        )
    slip = _unit_name_slip(reading.value, given_unit, expected, expected_unit, tolerance)
    if slip is not None:
        return replace(
            verdict,
            code="right_value_wrong_unit_name",
            other_unit=slip,
            expected_in_other_unit=convert(expected, expected_unit, slip),
        )
    common = () if target.dimension == RATIO else COMMON_FACTORS
    whole = target.dimension == COUNT
    # Each candidate: (how far the answer is from what the slip gives, tie order, verdict).
    candidates = []
    found = _recognised_factor(given, expected, factors, tolerance, whole=whole)
    if found is not None:
        candidates.append((found[2], 0, replace(verdict, code="off_by_factor", factor_name=found[0], factor=found[1])))
    slip_found = _recognised_mistake(given, expected, mistakes, tolerance, whole=whole)
    if slip_found is not None:
        name, value, distance = slip_found
        candidates.append((distance, 1, replace(verdict, code="known_mistake", mistake=name, mistake_value=value)))
    found = _recognised_factor(given, expected, common, tolerance, whole=whole)
    if found is not None:
        candidates.append((found[2], 2, replace(verdict, code="off_by_factor", factor_name=found[0], factor=found[1])))
    if candidates:
        return min(candidates, key=lambda candidate: candidate[:2])[2]
    return replace(verdict, code="wrong")


def _unit_name_slip(
    number: float, typed_unit: str, expected: float, expected_unit: str, tolerance: float
) -> str | None:
    """The unit (≠ the typed one) in which the expected quantity reads as `number`, closest first; None if none."""
    dimension = _unit(expected_unit).dimension
    if dimension in (COUNT, RATIO):
        return None
    matches = []
    for unit in UNITS:
        if unit.dimension != dimension or unit.id == typed_unit:
            continue
        figure = convert(expected, expected_unit, unit.id)
        if _close(number, figure, tolerance):
            matches.append((abs(number / figure - 1.0), unit.id))
    return min(matches)[1] if matches else None


def _recognised_factor(
    given: float, expected: float, factors: tuple[tuple[str, float], ...], tolerance: float, *, whole: bool
) -> tuple[str, float, float] | None:
    """(name, factor, distance) whose factor or inverse is closest to given / expected; None if none fits.

    distance = |ratio / factor − 1|, so that a factor and a mistake can be compared.

    A factor counts only if it stands out of the noise: more than twice the tolerance
    away from 1 and, for whole counts, an answer more than one away from the expected
    count (13 users for 12 is off by one, not "1.074 = GiB vs GB"). It must match within
    max(tolerance, FACTOR_TOLERANCE); the closest wins, the exercise's own factors on ties.
    """
    if whole and abs(given - expected) <= 1:
        return None
    ratio = given / expected
    match_tolerance = max(tolerance, FACTOR_TOLERANCE)
    best: tuple[float, int, str, float] | None = None
    for order, (name, factor) in enumerate(factors):
        if not (math.isfinite(factor) and factor > 0) or abs(factor - 1.0) <= 2 * tolerance:
            continue
        for target in (factor, 1.0 / factor):
            if _close(ratio, target, match_tolerance):
                candidate = (abs(ratio / target - 1.0), order, name, target)
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
    return None if best is None else (best[2], best[3], best[0])


def _recognised_mistake(
    given: float, expected: float, mistakes: tuple[tuple[str, float], ...], tolerance: float, *, whole: bool
) -> tuple[str, float, float] | None:
    """(name, its answer, distance) of the mistake whose answer is closest to `given`; None if none is close.

    The same noise rules as a factor: a mistake whose answer is within twice the tolerance
    of the right one explains nothing, nor does a whole count within one of the expected one;
    it must match within max(tolerance, FACTOR_TOLERANCE): |given / its answer − 1|.
    """
    if whole and abs(given - expected) <= 1:
        return None
    match_tolerance = max(tolerance, FACTOR_TOLERANCE)
    best: tuple[float, int, str, float] | None = None
    for order, (name, value) in enumerate(mistakes):
        if not (math.isfinite(value) and value > 0) or _close(value, expected, 2 * tolerance):
            continue
        if _close(given, value, match_tolerance):
            candidate = (abs(given / value - 1.0), order, name, float(value))
            if best is None or candidate[:2] < best[:2]:
                best = candidate
    return None if best is None else (best[2], best[3], best[0])


def _close(value: float, expected: float, tolerance: float) -> bool:
    """|value − expected| ≤ tolerance · |expected|, inclusive, with 1e-9 for conversion round-off."""
    return abs(value - expected) <= (tolerance + 1e-9) * abs(expected)


def _unit(unit_id: str) -> Unit:
    try:
        return UNIT_BY_ID[unit_id]
    except KeyError:
        raise ValueError(f"unknown unit {unit_id!r}: use one of {', '.join(UNIT_BY_ID)}") from None


def _key(text: str) -> str:
    """Spelling-insensitive form: accents dropped, casefolded, µ → u, × → x, spaces around '/' removed."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    plain = plain.replace("μ", "u").replace("×", "x")
    plain = _SPACES.sub(" ", plain).strip()
    plain = re.sub(r"\s*/\s*", "/", plain)
    plain = re.sub(r" ?(per|por) ?(second|segundo)$", "/s", plain)
    return re.sub(r"/(sec|seg|second|segundo)$", "/s", plain)


def _number_readings(mantissa: str, lang: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The mantissa as one or two plain numbers ('1234.5'), and flags; None if its separators are invalid."""
    spaced = " " in mantissa
    digits = mantissa.replace(" ", "")
    page_decimal = "," if lang == "pt" else "."
    dots, commas = digits.count("."), digits.count(",")
    if not dots and not commas:
        return (digits,), ()
    if dots and commas:
        decimal = "." if digits.rfind(".") > digits.rfind(",") else ","
        thousands = "," if decimal == "." else "."
        whole, _, fraction = digits.rpartition(decimal)
        if spaced or decimal in whole or not _grouped(whole, thousands):
            return None
        return (f"{whole.replace(thousands, '')}.{fraction}",), _decimal_flag(decimal, page_decimal)
    mark = "." if dots else ","
    if dots + commas > 1:
        if spaced or not _grouped(digits, mark):
            return None
        return (digits.replace(mark, ""),), ()
    whole, _, fraction = digits.partition(mark)
    as_decimal = f"{whole or '0'}.{fraction}"
    if spaced or mark == page_decimal or not _grouped(digits, mark):
        return (as_decimal,), _decimal_flag(mark, page_decimal)
    return (whole + fraction, as_decimal), ()


def _grouped(digits: str, mark: str) -> bool:
    """True if `digits` reads as thousands grouped by `mark`: 1-3 digits (no leading 0), then groups of 3."""
    first, *groups = digits.split(mark)
    return 1 <= len(first) <= 3 and not first.startswith("0") and all(len(g) == 3 for g in groups)


def _decimal_flag(mark: str, page_decimal: str) -> tuple[str, ...]:
    if mark == page_decimal:
        return ()
    return ("decimal_comma",) if mark == "," else ("decimal_point",)


def _read_units(text: str, dimension: str) -> tuple[float, tuple[str | None, ...], tuple[str, ...]] | None:
    """(multiplier, candidate unit ids, flags) for the text after the number; None if unknown."""
    flags: tuple[str, ...] = ("b_read_as_byte",) if _BITS_SPELLING.search(text) else ()
    key = _key(text)
    if not key:
        return 1.0, (None,), ("assumed_unit",)
    if dimension == MEMORY and key in _PREFIX_ONLY:
        return 1.0, _PREFIX_ONLY[key], ()
    if dimension == MEMORY and key in ("ki", "mi", "gi", "ti"):
        return 1.0, (key[0].upper() + "iB",), ()
    unit = _lookup(key, dimension)
    if unit is not None:
        return 1.0, (unit.id,), flags if unit.dimension in (MEMORY, BANDWIDTH) and not unit.id.endswith("bit") else ()
    if dimension in (COUNT, TOKEN_RATE):
        head, _, rest = key.partition(" ")
        if head not in _MULTIPLIERS:
            head, rest = _split_glued_multiplier(key)
        if head in _MULTIPLIERS:
            rest = re.sub(r"^(de|of) ", "", rest)
            if not rest:
                return _MULTIPLIERS[head], (None,), ("assumed_unit",)
            unit = _lookup(rest, dimension)
            if unit is not None:
                return _MULTIPLIERS[head], (unit.id,), ()
    return None


def _split_glued_multiplier(key: str) -> tuple[str, str]:
    """'ktokens' → ('k', 'tokens'); anything else → ('', key)."""
    for word in ("k", "m"):
        if key.startswith(word) and _lookup(key[len(word) :], COUNT) is not None:
            return word, key[len(word) :]
    return "", key


def _lookup(key: str, dimension: str) -> Unit | None:
    """The unit spelled `key`, preferring the asked dimension (so 'tflops' is a rate where a rate is asked)."""
    found = [unit for unit in UNITS if key in unit.spellings]
    for unit in found:
        if unit.dimension == dimension:
            return unit
    return found[0] if found else None
