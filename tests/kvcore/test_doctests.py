"""The examples in kvcore's docstrings are true."""

import doctest
import importlib

import pytest

MODULES = ["attention", "dtypes", "kv", "memory", "model", "speed", "units", "vllm", "hf_config", "data", "hardware"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(f"kvcore.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
