"""The translation catalogue: every string a learner sees, in Portuguese and English.

Each language is a folder of flat JSON files (``i18n/pt/*.json``, ``i18n/en/*.json``), one
file per lesson plus ``common.json``, each mapping a key to a text with optional
``str.format`` placeholders. A key may live in only one file. The files are read once
per process and kept read-only, because one Streamlit server shares this module with
every user.

``translate`` is strict: an unknown language or key raises ``KeyError``, so tests
catch a missing text. The UI's ``ui.t`` is forgiving: it shows the key instead of
breaking a lesson (tests/app/test_i18n.py keeps that from ever happening).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

LANGUAGES = ("pt", "en")

#: Decimal mark then thousands separator, per language (Plotly's ``layout.separators`` form).
NUMBER_SEPARATORS = {"pt": ",.", "en": ".,"}
CATALOGUE_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=len(LANGUAGES))
def catalogue(lang: str) -> Mapping[str, str]:
    """Every key → text of one language, read-only."""
    if lang not in LANGUAGES:
        raise KeyError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
    texts: dict[str, str] = {}
    for path in sorted((CATALOGUE_DIR / lang).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        repeated = sorted(set(part) & set(texts))
        if repeated:
            raise ValueError(f"{path.name} repeats keys defined in another {lang} file: {', '.join(repeated)}")
        texts.update(part)
    return MappingProxyType(texts)


def translate(lang: str, key: str, **kwargs: object) -> str:
    """The text for `key` in `lang`, with `kwargs` filled into its placeholders.

    >>> translate("pt", "chart.context_axis")
    'Contexto (tokens)'
    """
    return catalogue(lang)[key].format(**kwargs)


def localize_number(text: str, lang: str) -> str:
    """Rewrite kvcore's English-formatted numbers for `lang`: '74,079.5 GiB' → '74.079,5 GiB' in pt.

    kvcore formats with '.' as decimal mark and ',' between thousands; Portuguese
    swaps the two. Only the two marks change, so units and words stay as they are.

    >>> localize_number("14.96 GiB", "pt")
    '14,96 GiB'
    """
    return text.translate(str.maketrans(".,", NUMBER_SEPARATORS[lang]))
