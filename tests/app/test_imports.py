"""The layers import one way: kvcore ← charts ← app, ui and lessons (STYLE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module `path` imports (relative imports excluded)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "kvcore").glob("*.py")), ids=lambda path: path.name)
def test_kvcore_never_imports_streamlit_plotly_or_pandas(path):
    assert not imported_modules(path) & {"streamlit", "plotly", "pandas"}


@pytest.mark.parametrize("path", sorted((ROOT / "charts").glob("*.py")), ids=lambda path: path.name)
def test_charts_never_import_streamlit(path):
    assert "streamlit" not in imported_modules(path)


def test_the_import_scanner_sees_from_imports():
    # ui/figure_cache.py: import kvcore, import numpy, from plotly.basedatatypes import BaseFigure.
    assert imported_modules(ROOT / "ui" / "figure_cache.py") >= {"kvcore", "plotly", "numpy"}


@pytest.mark.parametrize("path", sorted((ROOT / "course").rglob("*.py")), ids=lambda path: path.name)
def test_course_never_imports_streamlit_plotly_or_pandas(path):
    assert not imported_modules(path) & {"streamlit", "plotly", "pandas", "charts", "ui"}


@pytest.mark.parametrize("path", sorted((ROOT / "kvcore").glob("*.py")), ids=lambda path: path.name)
def test_kvcore_never_imports_the_course(path):
    assert "course" not in imported_modules(path)
