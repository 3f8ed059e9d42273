"""The examples in the course package's docstrings are true (every module, found by walking the package)."""

import doctest
import importlib
import pkgutil

import pytest

import course

MODULES = sorted(info.name for info in pkgutil.iter_modules(course.__path__) if not info.name.startswith("_"))


def test_the_walk_finds_the_course_modules():
    assert {"answers", "exercises", "mistakes"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_course_docstring_examples_hold(name):
    module = importlib.import_module(f"course.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
