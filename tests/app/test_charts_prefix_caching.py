"""The prefix-caching charts draw kvcore.paging's memory and price, with units on their axes."""

from __future__ import annotations

import numpy as np

from charts.prefix_caching import cost_figure, interval_axis, prefix_axis, prefix_memory_figure
from kvcore.paging import prefix_memory, prompt_cache_cost

MEMORY_LABELS = {
    "title": "T",
    "subtitle": "S",
    "x_title": "Shared prefix (tokens)",
    "y_title": "KV memory (GiB)",
    "without": "without",
    "with": "with",
    "current": "current",
    "tokens": "tokens",
}
COST_LABELS = {
    "title": "T",
    "subtitle": "S",
    "x_title": "Time between requests (s)",
    "y_title": "Input cost (USD)",
    "without": "without",
    "with": "with",
    "ttl": "TTL",
    "current": "current",
}
PRICE = {"input_usd_per_mtok": 3.0, "ttl_s": 300.0, "cache_write_multiplier": 1.25, "cache_read_multiplier": 0.1}


def test_the_memory_curves_are_kvcores_in_gib():
    figure = prefix_memory_figure(
        prefix_tokens=2000,
        suffix_tokens=200,
        requests=100,
        block_size=16,
        bytes_per_token=2**17,
        labels=MEMORY_LABELS,
    )
    prefix = prefix_axis(2000, 16)
    memory = prefix_memory(prefix_tokens=prefix, suffix_tokens=200, requests=100, block_size=16, bytes_per_token=2**17)
    assert np.allclose(figure.data[0].y, memory.blocks_without * memory.block_bytes / 2**30)
    assert np.allclose(figure.data[1].y, memory.blocks_with * memory.block_bytes / 2**30)
    assert "GiB" in figure.layout.yaxis.title.text and "tokens" in figure.layout.xaxis.title.text


def test_the_saving_moves_in_whole_blocks():
    prefix = prefix_axis(100, 16)
    memory = prefix_memory(prefix_tokens=prefix, suffix_tokens=10, requests=5, block_size=16)
    steps = np.unique(np.diff(memory.saved_blocks))
    assert set(steps.tolist()) <= {0.0, 4.0}


def test_the_cost_curve_jumps_at_the_ttl():
    figure = cost_figure(
        prefix_tokens=2000, suffix_tokens=200, requests=100, interval_s=10, labels=COST_LABELS, **PRICE
    )
    interval = interval_axis(10, 300)
    cost = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=100, interval_s=interval, **PRICE)
    assert np.allclose(figure.data[1].y, cost.cost_with_usd)
    with_cache = np.asarray(figure.data[1].y)
    assert with_cache[interval <= 300].max() < with_cache[interval > 300].min()
    assert "USD" in figure.layout.yaxis.title.text and "(s)" in figure.layout.xaxis.title.text
