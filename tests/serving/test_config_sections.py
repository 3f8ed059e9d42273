"""The launcher's index of config sections answers as Streamlit's walk over every option (scripts/serve_app.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit import config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import serve_app

SECTIONS = ("theme", "theme.light", "theme.dark.sidebar", "server", "client", "runner")


@pytest.fixture
def walk(monkeypatch):
    """Streamlit's own function; the launcher's replaces it in `config` for the test only."""
    original = config.get_options_for_section
    monkeypatch.setattr(config, "get_options_for_section", original)
    assert serve_app.index_config_sections()
    assert config.get_options_for_section is not original
    return original


def test_every_section_reads_as_streamlits_walk(walk):
    for section in SECTIONS:
        assert config.get_options_for_section(section) == walk(section), section


def test_a_value_set_after_the_index_was_made_is_read(walk):
    config.get_options_for_section("theme")  # indexes the section
    option = config.get_config_options()["theme.primaryColor"]
    before = option.value, option.where_defined
    option.set_value("#123456")  # what config.set_option does
    try:
        assert config.get_options_for_section("theme")["primaryColor"] == "#123456" == walk("theme")["primaryColor"]
    finally:
        option.set_value(*before)


def test_a_new_parse_of_the_config_makes_a_new_index(walk, monkeypatch):
    config.get_options_for_section("server")
    fresh = {name: option for name, option in config.get_config_options().items() if not name.startswith("server.")}
    monkeypatch.setattr(config, "_config_options", fresh)  # what a re-read of config.toml does: a new dict
    assert config.get_options_for_section("server") == {} == walk("server")


def test_the_pinned_streamlit_still_has_the_function():
    module, name = serve_app.SECTIONS_PATCHED
    assert callable(getattr(config, name)) and config.__name__ == module
