"""The examples in kvcore's docstrings are true (every module, found by walking the package)."""

import doctest
import importlib
import pkgutil

import pytest

import kvcore

MODULES = sorted(info.name for info in pkgutil.iter_modules(kvcore.__path__) if not info.name.startswith("_"))


def test_the_walk_finds_the_modules():
    assert {"kv", "timing", "units"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(f"kvcore.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
