"""Both catalogues hold the same texts, and every text the code asks for exists."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from i18n import LANGUAGES, catalogue, translate
from kvcore.model import LAYER_KINDS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    ROOT / "app.py",
    *sorted((ROOT / "lessons").glob("*.py")),
    *sorted((ROOT / "ui").glob("*.py")),
    *sorted((ROOT / "course").rglob("*.py")),  # course.lessons holds the navigation titles
]
KEY = r"[a-z][a-z0-9_]*\.[a-z0-9_.]+"
#: t("key"…), translate(lang, "key"…), and keys handed to helpers as `…_notice="key"` or `…_key="key"`.
KEY_USE = re.compile(rf"""(?:\bt\(\s*|\btranslate\(\s*[^,()]+,\s*|_notice=|_key=)["']({KEY})["']""")
#: Any string literal shaped like a key: keys kept in tables (option → key) count as used.
KEY_LITERAL = re.compile(rf"""["']({KEY})["']""")

#: plural("stem", n) asks for stem.one or stem.other.
PLURAL_USE = re.compile(rf"""\bplural\(\s*["']({KEY})["']""")


def source_texts() -> list[str]:
    return [path.read_text(encoding="utf-8") for path in SOURCES]


def used_keys() -> set[str]:
    """Keys the code certainly asks for: each must exist in both catalogues."""
    texts = source_texts()
    keys = {match for text in texts for match in KEY_USE.findall(text)}
    keys |= {f"{stem}.{form}" for text in texts for stem in PLURAL_USE.findall(text) for form in ("one", "other")}
    # Built from a layer kind at run time: t(f"kind.{term.kind}", …).
    return keys | {f"kind.{kind}" for kind in LAYER_KINDS}


def mentioned_keys() -> set[str]:
    """Every literal in the code that names a key: a catalogue text no literal names is dead."""
    texts = source_texts()
    return used_keys() | {match for text in texts for match in KEY_LITERAL.findall(text)}


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_both_languages_have_the_same_keys():
    assert set(catalogue("pt")) == set(catalogue("en"))


def test_the_source_scan_finds_the_keys_in_use():
    assert {"nav.memory", "memory.title", "notice.unknown_model"} <= used_keys()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_used_in_the_code_exists(lang):
    assert used_keys() - set(catalogue(lang)) == set()


def test_every_text_in_the_catalogue_is_used_somewhere():
    assert set(catalogue("en")) - mentioned_keys() == set()


def test_placeholders_match_between_languages():
    pt, en = catalogue("pt"), catalogue("en")
    mismatched = {key for key in en if placeholders(en[key]) != placeholders(pt[key])}
    assert mismatched == set()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_is_empty(lang):
    assert [key for key, text in catalogue(lang).items() if not text.strip()] == []


def test_an_unknown_key_raises_key_error():
    with pytest.raises(KeyError):
        translate("en", "no.such_key")


def test_an_unknown_language_raises_key_error():
    with pytest.raises(KeyError):
        translate("fr", "nav.memory")


def test_placeholders_are_filled():
    assert translate("pt", "chart.gpu_memory", gpu="H100") == "Memória da H100"


def test_the_catalogue_is_read_only():
    with pytest.raises(TypeError):
        catalogue("en")["nav.memory"] = "changed"  # type: ignore[index]


def test_portuguese_swaps_the_decimal_mark_and_the_thousands_separator():
    from i18n import localize_number

    assert localize_number("74,079.5 GiB", "pt") == "74.079,5 GiB"
    assert localize_number("74,079.5 GiB", "en") == "74,079.5 GiB"


def test_every_plural_key_has_both_forms_in_both_languages():
    from i18n import catalogue

    for lang in ("pt", "en"):
        keys = set(catalogue(lang))
        stems = {key.rsplit(".", 1)[0] for key in keys if key.endswith((".one", ".other"))}
        assert stems, "plural keys exist"
        for stem in stems:
            assert {f"{stem}.one", f"{stem}.other"} <= keys, (lang, stem)


#: Keys that name swap only as a label (a mode's button, a glossary term's title, a wrong quiz option).
SWAP_LABELS = {
    "glossary.preemption",
    "preemption.preset_swap",
    "preemption.mode_swap",
    "preemption.swapped",
    "preemption.model_note",
    "quiz.mem_consequence_a",
    "quiz.pr_modes",
    "quiz.pr_modes_b",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_swap_to_cpu_is_taught_as_vllm_v0_only(lang):
    """vLLM V1 only recomputes; V0 swapped only multi-sequence groups (issue 15). A text that explains swap says V0."""
    swap = re.compile(r"swap|CPU memory|RAM da CPU|memória da CPU", re.IGNORECASE)
    unqualified = [
        key
        for key, text in catalogue(lang).items()
        if swap.search(text) and "V0" not in text and key not in SWAP_LABELS
    ]
    assert unqualified == []


def test_the_seeds_before_the_third_user_is_not_corrected_where_it_is_right():
    """Seed 000's server broke "before the third user": with two users, as we compute. No false erratum (issue 15)."""
    assert "na verdade" not in catalogue("pt")["sizing.story_text"]
    assert "in fact" not in catalogue("en")["sizing.story_text"]


#: Portuguese texts where K/V heads, a scale, a weight read or a pool are shared, not divided (issue 15).
SHARED_NOT_DIVIDED = (
    "glossary.gqa_text",
    "memory.seed_text",
    "attention_variants.intro",
    "quiz.av_compare_b",
    "prefill_decode.batch_help",
    "kv_quantization.axis_help",
    "kv_quantization.formula_scales",
    "sizing.takeaway",
    "quiz.sz_dashboard_b",
    "quiz.vp_tokens_b",
)


@pytest.mark.parametrize("key", SHARED_NOT_DIVIDED)
def test_portuguese_says_shared_where_heads_or_a_pool_are_shared(key):
    text = catalogue("pt")[key]
    assert "compartilh" in text
    assert not re.search(r"\bdivid(e|em|ir|irem|ido|ida|idos|idas) (uma|um|por|entre)\b", text)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", ["attention_variants.intro", "glossary.mla_text", "quiz.av_mla_a"])
def test_mla_is_taught_as_a_latent_plus_a_rope_key_that_never_rebuilds_k_and_v(lang, key):
    """Absorbed MLA attends inside the latent; its RoPE key part is stored beside it (DeepSeek-V2 §2.1; issue 15)."""
    text = catalogue(lang)[key]
    assert "RoPE" in text
    assert re.search(r"never|nunca|sem reconstruir", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_prompt_cache_prices_are_not_one_rule_for_every_provider(lang):
    """OpenAI's cached input is 0.5×, 0.25× or 0.1× by model; Anthropic reads 0.1×, writes 1.25× or 2× (issue 15)."""
    for key in ("prefix_caching.two_caches", "prefix_caching.read_help", "quiz.pc_vs_prompt_why"):
        text = catalogue(lang)[key]
        assert "OpenAI" in text and "Anthropic" in text, key


#: How the code and its authors call the course texts; a student sees their names instead (issue 15).
COURSE_TEXT_JARGON = re.compile(r"seed 0|texto? 0\d\d|texto do curso|course text\b", re.IGNORECASE)
#: Texts about the random seed of a simulation: the only ones where the word "seed" belongs.
RANDOM_SEED_KEYS = {
    "paged_attention.seed",
    "paged_attention.seed_help",
    "preemption.seed",
    "preemption.seed_help",
    "preemption.chart_subtitle",
}
COURSE_TEXTS = ("course_text.000", "course_text.002", "course_text.004")
#: "o texto «…»" / "the text “…”": where a text names a course text, in each language's quotation marks.
NAMED_TEXT = {"pt": re.compile(r"texto («[^»]*»)"), "en": re.compile(r"text (“[^”]*”)")}


def without_placeholders(text: str) -> str:
    return re.sub(r"\{[^{}]*\}", "", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_calls_a_course_text_by_its_internal_name(lang):
    jargon = {key: match.group() for key, text in catalogue(lang).items() if (match := COURSE_TEXT_JARGON.search(text))}
    assert jargon == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_word_seed_only_means_a_random_seed(lang):
    seeded = [
        key
        for key, text in catalogue(lang).items()
        if re.search(r"\bseeds?\b", without_placeholders(text), re.IGNORECASE) and key not in RANDOM_SEED_KEYS
    ]
    assert seeded == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_named_course_text_goes_by_its_one_name(lang):
    texts = catalogue(lang)
    names = {texts[key] for key in COURSE_TEXTS}
    named = {name for text in texts.values() for name in NAMED_TEXT[lang].findall(text)}
    assert named == names
