"""Golden tests: every real llama.cpp start-up log of data/llamacpp_logs reproduced by kvcore.

Each file names its source (a public issue), the model (an id of data/models.csv) and the
build; every KV number it printed must agree with kvcore.reconcile_llamacpp to the printed
precision (0.01 MiB, whole cells).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kvcore

LOGS = sorted((Path(__file__).resolve().parents[2] / "data" / "llamacpp_logs").glob("*.log"))


def _header(path: Path) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        header[key.strip()] = value.strip()
    return header


def test_there_are_golden_logs():
    assert len(LOGS) >= 3


@pytest.mark.parametrize("path", LOGS, ids=[path.stem for path in LOGS])
def test_golden_log_names_its_source_model_and_release(path):
    header = _header(path)
    for key in ("source", "release", "release-evidence", "model", "hf-model", "gpu", "flags", "outcome"):
        assert header.get(key), f"{path.name}: header '# {key}:' missing"
    assert header["source"].startswith("https://github.com/")
    assert header["model"] in kvcore.load_models()


@pytest.mark.parametrize("path", LOGS, ids=[path.stem for path in LOGS])
def test_golden_log_is_reproduced_exactly(path):
    header = _header(path)
    model = kvcore.load_models()[header["model"]]
    log = kvcore.parse_llamacpp_log(path.read_text(encoding="utf-8"))
    checks = kvcore.reconcile_llamacpp(log, model)
    assert checks, path.name
    differing = [check for check in checks if check.status != "agree"]
    assert not differing, f"{path.name}: {differing}"


def test_q8_0_log_reproduces_each_number():
    # Qwen2.5-Coder-32B, 32768 cells, q8_0: 64 layers · 32768 · (1024 · 34 / 32 bytes) = 2176 MiB for K, same for V.
    path = next(p for p in LOGS if "_11200_" in p.name)
    log = kvcore.parse_llamacpp_log(path.read_text(encoding="utf-8"))
    kinds = {check.kind: check for check in kvcore.reconcile_llamacpp(log, kvcore.load_models()["qwen2.5-32b"])}
    assert kinds["k_bytes"].expected == 2176 * 2**20
    assert kinds["kv_size"].logged == 32768
    assert kinds["kv_buffer_bytes"].logged == (2788 + 1564) * 2**20


_SUMMARY = ("KV self size", ": size =", "KV cache, size =")


def _summary_lines(lines):
    """The cache summaries of a log, without log prefixes (timestamps, levels): the part from the function name."""
    found = []
    for line in lines:
        if any(marker in line for marker in _SUMMARY):
            start = line.find("llama_")
            found.append(line[start:].rstrip() if start >= 0 else line.strip())
    return found


@pytest.mark.parametrize("path", LOGS, ids=[path.stem for path in LOGS])
def test_kvcore_prints_the_summary_lines_of_the_logged_build(path):
    # Where the log names its build, kvcore's own lines for the same settings repeat the log's cache
    # summaries character for character (the 'KV buffer size' lines differ only by device names).
    header = _header(path)
    if not header["release-evidence"].startswith("printed in the log"):
        pytest.skip("the build is inferred, not printed")
    text = path.read_text(encoding="utf-8")
    model = kvcore.load_models()[header["model"]]
    startup = kvcore.llamacpp_startup_from_log(kvcore.parse_llamacpp_log(text), model)
    logged = _summary_lines(line for line in text.splitlines() if not line.startswith("#"))
    assert logged, path.name
    assert _summary_lines(startup.lines()) == logged
