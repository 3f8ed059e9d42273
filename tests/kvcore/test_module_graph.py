"""kvcore's modules import one another without a cycle, at module level or inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import kvcore

KVCORE = Path(kvcore.__file__).resolve().parent
#: The package's own files: __init__ re-exports every module, __main__ runs the CLI.
NOT_MODULES = {"__init__", "__main__"}


def imported_modules(path: Path) -> set[str]:
    """The kvcore modules a file imports anywhere in it (``from .x import``, ``from . import x``, ``kvcore.x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("kvcore."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("kvcore.")}
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {path.stem for path in KVCORE.glob("*.py")} - NOT_MODULES
    return {name: imported_modules(KVCORE / f"{name}.py") & modules for name in sorted(modules)}


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as [a, b, …, a], or [] (depth-first search, colouring the modules on the current path)."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        for imported in sorted(graph[name]):
            cycle = visit(imported, [*path, name])
            if cycle:
                return cycle
        done.add(name)
        return []

    for name in graph:
        cycle = visit(name, [])
        if cycle:
            return cycle
    return []


def test_the_scan_sees_the_imports():
    graph = import_graph()
    assert {"config_fields", "params", "model"} <= graph["hf_config"]
    assert "config_fields" in graph["params"] and "errors" in graph["checks"]


def test_the_cycle_finder_finds_a_cycle():
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) == []


def test_kvcore_has_no_import_cycle():
    assert a_cycle(import_graph()) == []


def test_config_reading_and_parameter_counting_share_a_reader_instead_of_importing_each_other():
    graph = import_graph()
    assert "hf_config" not in graph["params"] and "hf_config" not in graph["config_fields"]
