"""Shared fixtures for the AppTest and chart tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit.config
from streamlit.testing.v1 import AppTest

import kvcore

# .streamlit/config.toml hides error details from users; tests need the real messages.
streamlit.config.set_option("client.showErrorDetails", "full")

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30


@pytest.fixture
def app():
    """A fresh app session (not yet run), starting from app.py as the browser does."""
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S)


@pytest.fixture(scope="session")
def models() -> dict[str, kvcore.ModelSpec]:
    return kvcore.load_models()


@pytest.fixture(scope="session")
def gpus() -> dict[str, kvcore.GpuSpec]:
    return kvcore.load_gpus()
