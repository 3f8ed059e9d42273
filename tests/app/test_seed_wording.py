"""The app says things in its own words: no text copies a run of words from a course text (issue 15).

The course texts (../shared/seeds/*.txt, beside the repository) are what the lessons teach
from, not what they quote. A catalogue string may quote a figure or a phrase of a text
inside quotation marks (“…”, "…", «…»); outside them it must not share a run of
NGRAM or more consecutive words with any text, once case, accents, punctuation and
LaTeX commands (notation, not wording) are set aside. The texts are not part of the
repository: without them (CI) the test skips.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from i18n import LANGUAGES, catalogue

SEEDS_DIR = Path(__file__).resolve().parents[3] / "shared" / "seeds"
NGRAM = 8

#: LaTeX commands (\cdot, \frac): notation, not wording. A formula is no sentence to copy.
LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
#: Quoted spans a text may take word for word from a course text: “…”, "…" and «…».
QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|«[^»]*»")


def words(text: str) -> list[str]:
    """Lower-case words without accents or punctuation: 'Você é, às vezes…' → ['voce', 'e', 'as', 'vezes']."""
    decomposed = unicodedata.normalize("NFKD", LATEX_COMMAND.sub(" ", text).casefold())
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return re.sub(r"[^\w\s]|_", " ", bare).split()


def ngrams(tokens: list[str], n: int = NGRAM) -> Iterator[tuple[str, ...]]:
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def unquoted(text: str) -> str:
    return QUOTED.sub(" ", text)


@pytest.fixture(scope="module")
def seed_ngrams() -> set[tuple[str, ...]]:
    paths = sorted(SEEDS_DIR.glob("*.txt"))
    if not paths:
        pytest.skip(f"the course texts are not here ({SEEDS_DIR})")
    return {gram for path in paths for gram in ngrams(words(path.read_text(encoding="utf-8")))}


def test_words_set_aside_case_accents_and_punctuation():
    assert words("A Atenção, **de novo**: K/V!") == ["a", "atencao", "de", "novo", "k", "v"]


def test_quoted_spans_are_set_aside():
    text = 'o texto diz "dois usuários" e «três» e “quatro”, mais nada'
    assert words(unquoted(text)) == ["o", "texto", "diz", "e", "e", "mais", "nada"]


def test_a_shared_run_of_words_is_found():
    seed = set(ngrams(words("um dois três quatro cinco seis sete oito nove")))
    assert set(ngrams(words("Zero, um dois TRÊS quatro cinco seis sete oito."))) & seed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_shares_a_run_of_words_with_a_course_text(lang, seed_ngrams):
    copied = {
        key: " ".join(shared[0])
        for key, text in catalogue(lang).items()
        if (shared := [gram for gram in ngrams(words(unquoted(text))) if gram in seed_ngrams])
    }
    assert copied == {}
