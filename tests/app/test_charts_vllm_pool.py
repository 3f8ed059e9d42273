"""The vLLM pool charts: trace values are kvcore's, axis titles carry units."""

from __future__ import annotations

import numpy as np
import pytest

from charts.vllm_pool import UTILIZATION_LABELS, WATERFALL_LABELS, pool_waterfall_figure, utilization_figure
from kvcore import GiB, model_weights_bytes
from kvcore.vllm_pool import pool_log, pool_tokens_curve


@pytest.fixture
def setting(models):
    model = models["llama-3.1-8b"]
    knobs = {
        "memory_bytes": 24 * GiB,
        "weights_bytes": model_weights_bytes(model),
        "non_torch_bytes": 0.5 * GiB,
        "cuda_graph_bytes": 0.5 * GiB,
    }
    return model, knobs


def test_the_waterfall_total_is_kvcores_pool(setting):
    model, knobs = setting
    log = pool_log(model, utilization=0.9, max_model_len=8192, **knobs)
    labels = {key: key for key in WATERFALL_LABELS} | {"y_title": "Memory (GiB)"}
    figure = pool_waterfall_figure(log=log, labels=labels)
    trace = figure.data[0]
    assert trace.customdata[-1] == pytest.approx(log.kv_pool_bytes / GiB)
    assert sum(trace.y) == pytest.approx(log.kv_pool_bytes / GiB)
    assert "GiB" in figure.layout.yaxis.title.text


def test_the_utilization_curve_carries_kvcores_tokens(setting):
    model, knobs = setting
    u = np.round(np.arange(0.5, 0.981, 0.01), 2)
    blocks, tokens = pool_tokens_curve(model, utilization=u, **knobs)
    log = pool_log(model, utilization=0.9, max_model_len=8192, **knobs)
    labels = {key: key for key in UTILIZATION_LABELS} | {"x_title": "u (fraction)", "y_title": "Size (tokens)"}
    figure = utilization_figure(utilization=u, blocks=blocks, tokens=tokens, current=log, labels=labels)
    assert list(figure.data[0].y) == list(tokens)
    assert figure.data[2].y[0] == log.tokens
    assert "tokens" in figure.layout.yaxis.title.text
    assert "%{customdata" in figure.data[0].hovertemplate
