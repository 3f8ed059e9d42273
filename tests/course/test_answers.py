"""Reading what a student typed (numbers by language, units) and checking it like a demanding teacher."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import answers
from course.answers import check_answer, parse_answer

#: Llama 3.1 8B's weights in BF16: 8.03e9 · 2 = 16.06 GB = 14.957 GiB (seed 004 rounds to "~16 GB").
WEIGHTS_GB = 16.06
WEIGHTS_GIB = 16.06e9 / 2**30

#: A unit each dimension can be checked against (for the fuzz tests).
EXPECTED_UNIT = {
    "memory": "GiB",
    "time": "ms",
    "token_rate": "tokens/s",
    "bandwidth": "GB/s",
    "flops": "TFLOP",
    "flop_rate": "TFLOP/s",
    "count": "users",
    "ratio": "x",
    "choice": "prefill",
}


def parse(text, dimension="memory", lang="en"):
    return parse_answer(text, dimension=dimension, lang=lang)


def values(text, dimension="count", lang="en"):
    return [reading.value for reading in parse(text, dimension, lang).readings]


def verdict(text, expected=WEIGHTS_GIB, unit="GiB", *, dimension="memory", lang="en", tolerance=0.03, factors=None):
    return check_answer(
        parse(text, dimension, lang),
        expected_value=expected,
        expected_unit=unit,
        tolerance_rel=tolerance,
        factors=factors,
    )


# ---------------------------------------------------------------- numbers


def test_a_decimal_comma_is_read_on_the_portuguese_page():
    parsed = parse("12,5 GiB", lang="pt")
    assert parsed.status == "ok"
    assert (parsed.value, parsed.unit) == (12.5, "GiB")
    assert parsed.flags == ()


def test_a_decimal_comma_on_the_english_page_is_accepted_and_flagged():
    # "12,5" cannot group thousands (one digit after the comma), so it can only be a decimal.
    parsed = parse("12,5 GiB", lang="en")
    assert (parsed.status, parsed.value) == ("ok", 12.5)
    assert "decimal_comma" in parsed.flags


def test_a_decimal_point_on_the_portuguese_page_is_accepted_and_flagged():
    parsed = parse("12.5", lang="pt")
    assert (parsed.status, parsed.value) == ("ok", 12.5)
    assert "decimal_point" in parsed.flags


def test_one_comma_and_three_digits_on_the_english_page_is_ambiguous_with_both_readings():
    parsed = parse("1,234", "count", "en")
    assert parsed.status == "ambiguous"
    assert [r.value for r in parsed.readings] == [1234.0, 1.234]  # the page's own reading first


def test_one_comma_and_three_digits_on_the_portuguese_page_is_a_decimal():
    assert parse("1,234", "count", "pt").status == "ok"
    assert values("1,234", lang="pt") == [1.234]


def test_one_point_and_three_digits_on_the_portuguese_page_is_ambiguous():
    assert values("1.234", lang="pt") == [1234.0, 1.234]


def test_one_point_and_three_digits_on_the_english_page_is_a_decimal():
    assert values("1.234", lang="en") == [1.234]


@pytest.mark.parametrize("lang", ["pt", "en"])
@pytest.mark.parametrize("text", ["1.234,5", "1,234.5", "1 234,5", "1 234.5", "1\u00a0234,5", "1\u202f234.5"])
def test_both_marks_or_spaces_leave_no_doubt_on_either_page(text, lang):
    assert values(text, lang=lang) == [1234.5]


@pytest.mark.parametrize("text", ["1,234,567", "1.234.567", "1 234 567"])
def test_a_repeated_mark_groups_thousands(text):
    assert values(text) == [1234567.0]


@pytest.mark.parametrize("text", ["0,125", "1234,567", ",5"])
def test_a_mark_that_cannot_group_thousands_is_a_decimal(text):
    assert len(values(text)) == 1


def test_an_exponent_is_read():
    assert values("1.2e3", "time") == [1200.0]
    assert values("1,2e3", "time", "pt") == [1200.0]


@pytest.mark.parametrize("text", ["1,23,456", "1.2.3", "12,34.5", "1 234.567,8", "doze", "--5", "NaN", "inf", "GiB"])
def test_malformed_numbers_are_not_a_number(text):
    assert parse(text).status == "not_a_number"


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_blank_answers_are_empty(text):
    assert parse(text).status == "empty"


def test_an_overflowing_number_is_not_finite():
    assert parse("1e400").status == "not_finite"


def test_a_negative_quantity_is_rejected():
    assert parse("-5 GiB").status == "negative"
    assert parse("\u22125 GiB").status == "negative"  # the typographic minus sign


def test_an_unknown_word_after_the_number_is_an_unknown_unit():
    assert parse("12 potatoes", "count").status == "unknown_unit"


def test_a_bare_number_takes_the_asked_unit():
    parsed = parse("14,96", lang="pt")
    assert (parsed.value, parsed.unit) == (14.96, None)
    assert "assumed_unit" in parsed.flags


def test_an_unknown_dimension_or_language_is_a_programming_error():
    with pytest.raises(ValueError, match="dimension"):
        parse_answer("12", dimension="furlongs", lang="en")
    with pytest.raises(ValueError, match="language"):
        parse_answer("12", dimension="count", lang="fr")


# ---------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("16 GiB", "GiB"),
        ("16 gib", "GiB"),
        ("16GB", "GB"),
        ("16 gigabytes", "GB"),
        ("16 kB", "KB"),
        ("16 KiB", "KiB"),
        ("16 B", "B"),
        ("16 Gbit", "Gbit"),
        ("16Gi", "GiB"),
    ],
)
def test_memory_units_in_their_common_spellings(text, unit):
    assert parse(text).unit == unit


def test_capital_prefix_with_small_b_is_read_as_bytes_and_flagged():
    parsed = parse("16 Gb")
    assert parsed.unit == "GB"
    assert "b_read_as_byte" in parsed.flags


def test_a_prefix_without_b_is_ambiguous_between_decimal_and_binary():
    parsed = parse("16G")
    assert parsed.status == "ambiguous"
    assert [r.unit for r in parsed.readings] == ["GB", "GiB"]


@pytest.mark.parametrize(
    ("text", "unit"), [("97,8 µs", "us"), ("97,8 μs", "us"), ("2 min", "min"), ("3 segundos", "s")]
)
def test_time_units_in_both_languages(text, unit):
    assert parse(text, "time", "pt").unit == unit


@pytest.mark.parametrize("text", ["58 tokens/s", "58 tok/s", "58 tokens por segundo", "58 tokens per second", "58 t/s"])
def test_token_rates(text):
    assert parse(text, "token_rate").unit == "tokens/s"


def test_tflops_is_a_count_where_a_count_is_asked_and_a_rate_where_a_rate_is():
    assert parse("3 TFLOPS", "flops").unit == "TFLOP"
    assert parse("3 TFLOPS", "flop_rate").unit == "TFLOP/s"


def test_bandwidth_units():
    assert parse("3,35 TB/s", "bandwidth", "pt").readings == (answers.Reading(value=3.35, unit="TB/s"),)


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("128k", 128_000.0, None),
        ("128K tokens", 128_000.0, "tokens"),
        ("1M", 1_000_000.0, None),
        ("2 milhões de tokens", 2_000_000.0, "tokens"),
        ("128 mil tokens", 128_000.0, "tokens"),
        ("12 usuários", 12.0, "users"),
        ("3 GPUs", 3.0, "gpus"),
    ],
)
def test_counts_take_k_as_a_thousand_and_m_as_a_million(text, value, unit):
    parsed = parse(text, "count", "pt")
    assert (parsed.value, parsed.unit) == (value, unit)


def test_a_unit_of_another_dimension_is_the_wrong_dimension():
    parsed = parse("12 ms")
    assert parsed.status == "wrong_dimension"
    assert parsed.unit_dimension == "time"


@pytest.mark.parametrize(("text", "choice"), [("Prefill", "prefill"), ("decodificação", "decode"), ("ambos", "both")])
def test_choices_are_read_in_both_languages(text, choice):
    assert parse(text, "choice", "pt").choice == choice


def test_a_word_that_names_no_choice_is_not_a_choice():
    assert parse("talvez", "choice", "pt").status == "not_a_choice"


def test_convert_refuses_units_of_different_dimensions():
    with pytest.raises(ValueError, match="cannot convert"):
        answers.convert(1.0, "GiB", "ms")


# ---------------------------------------------------------------- verdicts


def test_the_gib_figure_in_gib_is_right():
    result = verdict("14.96 GiB")
    assert result.code == "right"
    assert result.accepted


def test_the_tolerance_edge_is_inclusive():
    assert verdict("103", expected=100.0, unit="ms", dimension="time").code == "right"
    assert verdict("97", expected=100.0, unit="ms", dimension="time").code == "right"


def test_just_past_the_tolerance_is_not_right():
    assert verdict("103.01", expected=100.0, unit="ms", dimension="time").code == "wrong"
    assert verdict("96.99", expected=100.0, unit="ms", dimension="time").code == "wrong"


def test_a_tolerance_of_zero_asks_for_the_exact_count():
    assert verdict("12", expected=12.0, unit="users", dimension="count", tolerance=0.0).code == "right"
    assert verdict("13", expected=12.0, unit="users", dimension="count", tolerance=0.0).code == "wrong"


def test_a_3_percent_tolerance_tells_gib_from_gb():
    # 1 GiB = 1.0737 GB: 7.4 % apart, more than twice the tolerance.
    assert not verdict(f"{WEIGHTS_GIB} GB").accepted


def test_the_gib_figure_labelled_gb_is_recognised_as_a_unit_name_slip():
    result = verdict("14.96 GB")
    assert result.code == "right_value_wrong_unit_name"
    assert result.other_unit == "GiB"
    assert result.expected_in_other_unit == pytest.approx(WEIGHTS_GIB)
    assert result.given_in_expected_unit == pytest.approx(14.96e9 / 2**30)
    assert not result.accepted


def test_the_gb_figure_labelled_gib_is_recognised_as_a_unit_name_slip():
    result = verdict("16.06 GiB")
    assert result.code == "right_value_wrong_unit_name"
    assert (result.other_unit, result.expected_in_other_unit) == ("GB", pytest.approx(WEIGHTS_GB))


def test_a_bare_gb_figure_for_a_gib_question_is_a_unit_slip():
    result = verdict("16,06", lang="pt")
    assert (result.code, result.other_unit) == ("right_value_wrong_unit_name", "GB")


def test_the_right_quantity_in_gb_when_gib_was_asked_counts_but_is_flagged():
    result = verdict("16.06 GB")
    assert result.code == "right_in_other_unit"
    assert result.accepted
    assert result.other_unit == "GB"
    assert result.given_in_expected_unit == pytest.approx(WEIGHTS_GIB)


def test_a_time_in_seconds_with_the_milliseconds_number_is_a_unit_slip():
    result = verdict("97.8 s", expected=97.8, unit="ms", dimension="time")
    assert (result.code, result.other_unit) == ("right_value_wrong_unit_name", "ms")


def test_the_right_time_in_seconds_is_converted():
    result = verdict("0.0978 s", expected=97.8, unit="ms", dimension="time")
    assert result.code == "right_in_other_unit"
    assert result.given_in_expected_unit == pytest.approx(97.8)


def test_forgetting_the_factor_2_of_k_and_v_is_recognised():
    result = verdict("64 KiB", expected=128.0, unit="KiB", tolerance=0.01)
    assert (result.code, result.factor_name, result.factor) == ("off_by_factor", "kv_pair", 0.5)


def test_an_exercise_factor_is_preferred_to_a_common_one():
    # MHA instead of GQA (8 KV heads of 32): 4 × the real cache.
    result = verdict("512 KiB", expected=128.0, unit="KiB", tolerance=0.01, factors={"gqa_group": 4.0})
    assert (result.code, result.factor_name, result.factor) == ("off_by_factor", "gqa_group", 4.0)


def test_128k_for_131072_tokens_is_off_by_1024_over_1000():
    result = verdict("128k", expected=131_072.0, unit="tokens", dimension="count", tolerance=0.01)
    assert (result.code, result.factor_name) == ("off_by_factor", "kilo_vs_kibi")


def test_bits_for_bytes_is_off_by_8():
    result = verdict("1024", expected=128.0, unit="KiB", tolerance=0.01)
    assert (result.code, result.factor_name, result.factor) == ("off_by_factor", "bits_per_byte", 8.0)


def test_a_plain_wrong_answer_carries_its_ratio():
    result = verdict("20 GiB")
    assert result.code == "wrong"
    assert result.ratio == pytest.approx(20 / WEIGHTS_GIB)


def test_zero_expected_is_right_only_for_zero():
    assert verdict("0", expected=0.0, unit="users", dimension="count", tolerance=0.0).code == "right"
    result = verdict("1", expected=0.0, unit="users", dimension="count", tolerance=0.0)
    assert (result.code, result.ratio) == ("wrong", None)


@pytest.mark.parametrize(
    ("text", "code", "status"),
    [
        ("", "empty", "empty"),
        ("   ", "empty", "empty"),
        ("doze", "unparseable", "not_a_number"),
        ("12 potatoes", "unparseable", "unknown_unit"),
        ("--5", "unparseable", "not_a_number"),
        ("1e400", "unparseable", "not_finite"),
        ("-5", "unparseable", "negative"),
        ("12 ms", "wrong_dimension", "wrong_dimension"),
    ],
)
def test_answers_that_cannot_be_checked_say_why(text, code, status):
    result = verdict(text)
    assert (result.code, result.parse_status) == (code, status)


def test_tokens_for_a_question_about_users_is_the_wrong_dimension():
    assert verdict("12 tokens", expected=12.0, unit="users", dimension="count", tolerance=0.0).code == "wrong_dimension"


def test_an_ambiguous_answer_right_in_one_reading_only_is_ambiguous():
    result = verdict("1,234", expected=1.234, unit="x", dimension="ratio", lang="en")
    assert result.code == "ambiguous"
    assert [v.code for v in result.alternatives] == ["wrong", "right"]


def test_an_off_by_one_count_is_not_taken_for_a_binary_prefix_slip():
    # 13 / 12 = 1.083 is near 1.024³ = 1.074, but a factor that moves 12 users by less than one is noise.
    assert verdict("13", expected=12.0, unit="users", dimension="count", tolerance=0.0).code == "wrong"


def test_a_factor_inside_the_tolerance_noise_is_not_recognised():
    # 1.024 is within twice a 3 % tolerance of 1: 96.99 for 100 is just wrong.
    assert verdict("96.99", expected=100.0, unit="ms", dimension="time").code == "wrong"


def test_an_ambiguous_answer_whose_readings_agree_gets_their_code():
    result = verdict("1,234", expected=7.0, unit="x", dimension="ratio", lang="en")
    assert result.code == "wrong"
    assert len(result.alternatives) == 2


def test_a_prefix_without_b_right_in_one_reading_is_ambiguous():
    assert verdict("15G").code == "ambiguous"


def test_choices_are_right_or_wrong():
    assert verdict("ambos", expected=3.0, unit="both", dimension="choice", lang="pt").code == "right"
    wrong = verdict("decode", expected=1.0, unit="prefill", dimension="choice")
    assert (wrong.code, wrong.given_choice) == ("wrong", "decode")


def test_a_negative_tolerance_is_refused():
    with pytest.raises(ValueError, match="tolerance_rel"):
        verdict("1", tolerance=-0.1)


# ---------------------------------------------------------------- fuzz

dimensions = st.sampled_from(answers.DIMENSIONS)
langs = st.sampled_from(answers.LANGS)
numberish = st.from_regex(r"\A[ ~+\-−]{0,2}[0-9., \u00a0]{0,12}([eE][+-]?[0-9]{1,4})?[ a-zA-Zµ/×%]{0,12}\Z")


@settings(max_examples=300, deadline=None)
@given(st.text(), dimensions, langs)
def test_parse_and_check_never_raise_on_any_text(text, dimension, lang):
    parsed = parse_answer(text, dimension=dimension, lang=lang)
    assert parsed.status in answers.PARSE_STATUSES
    check_answer(parsed, expected_value=12.5, expected_unit=EXPECTED_UNIT[dimension], tolerance_rel=0.03)


@settings(max_examples=300, deadline=None)
@given(numberish, dimensions, langs)
def test_parse_and_check_never_raise_on_number_like_text(text, dimension, lang):
    parsed = parse_answer(text, dimension=dimension, lang=lang)
    result = check_answer(parsed, expected_value=12.5, expected_unit=EXPECTED_UNIT[dimension], tolerance_rel=0.03)
    assert result.code in answers.VERDICT_CODES
    assert all(reading.value >= 0 for reading in parsed.readings)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e15, allow_nan=False), langs)
def test_a_number_printed_plainly_reads_back(number, lang):
    # On the pt page "123.456" also reads as 123456 (ambiguous): the plain reading is always among them.
    assert any(reading.value == pytest.approx(number) for reading in parse(repr(number), "time", lang).readings)
