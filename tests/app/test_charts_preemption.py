"""Preemption charts: trace values are kvcore's simulation, axes carry units, long timelines are thinned."""

from __future__ import annotations

import numpy as np
import pytest

from charts.preemption import (
    LATENCY_LABELS,
    MAX_POINTS,
    OCCUPANCY_LABELS,
    QUEUE_LABELS,
    bucket_max,
    latency_figure,
    occupancy_figure,
    queue_figure,
)
from kvcore.scheduler import ServerConfig, Workload, generate_requests, simulate
from tests.app.figures import one_line

TRACE = generate_requests(
    Workload(num_requests=150, arrival_rate_per_s=40.0, prompt_mean_tokens=300, output_mean_tokens=120, seed=7)
)


def labels(keys, **units: str) -> dict[str, str]:
    return {key: units.get(key, key) for key in keys}


@pytest.fixture(scope="module")
def tight():
    return simulate(TRACE, ServerConfig(num_blocks=400, max_num_seqs=64))


@pytest.fixture(scope="module")
def roomy():
    return simulate(TRACE, ServerConfig(num_blocks=20_000, max_num_seqs=64))


def test_the_occupancy_line_is_used_blocks_over_the_pool(tight):
    assert tight.timeline.time_s.size <= MAX_POINTS
    figure = occupancy_figure(tight, labels=labels(OCCUPANCY_LABELS, y_title="Blocks in use (%)"))
    line = figure.data[0]
    assert np.allclose(line.y, tight.timeline.used_blocks / tight.num_blocks * 100)
    assert np.array_equal(line.x, tight.timeline.time_s)
    assert "%" in figure.layout.yaxis.title.text


def test_every_preemption_is_marked(tight):
    figure = occupancy_figure(tight, labels=labels(OCCUPANCY_LABELS))
    marks = figure.data[1]
    assert int(np.sum(marks.customdata)) == int(tight.requests.preemptions.sum()) > 0


def test_a_pool_that_never_fills_has_no_marks(roomy):
    figure = occupancy_figure(roomy, labels=labels(OCCUPANCY_LABELS))
    assert len(figure.data) == 1


def test_the_queue_chart_draws_running_and_waiting(tight):
    figure = queue_figure(tight, labels=labels(QUEUE_LABELS))
    assert np.array_equal(figure.data[0].y, tight.timeline.running)
    assert np.array_equal(figure.data[1].y, tight.timeline.waiting)


def test_latency_points_are_each_requests_ttft_and_tpot(tight):
    figure = latency_figure(tight, labels=labels(LATENCY_LABELS, ttft_title="TTFT (s)", tpot_title="TPOT (ms)"))
    preempted = tight.requests.preemptions > 0
    ttft_smooth, tpot_smooth, ttft_hit, tpot_hit = figure.data
    assert np.allclose(ttft_smooth.y, tight.requests.ttft_s[~preempted])
    assert np.allclose(tpot_hit.y, tight.requests.tpot_s[preempted] * 1e3, equal_nan=True)
    assert len(ttft_hit.x) == int(preempted.sum()) == len(tpot_hit.x)
    assert len(tpot_smooth.x) == int((~preempted).sum())
    assert one_line(figure.layout.yaxis.title.text) == "TTFT (s)"
    assert figure.layout.yaxis2.title.text == "TPOT (ms)"


def test_a_long_timeline_is_thinned_keeping_its_peaks():
    time_s = np.arange(10_000, dtype=float)
    values = np.zeros(10_000, dtype=int)
    values[4321] = 99
    shown_time, shown = bucket_max(time_s, values, max_points=500)
    assert shown.size == 500 and shown_time.size == 500
    assert shown.max() == 99
    assert np.all(np.diff(shown_time) > 0)


def test_the_separators_reach_the_layout(tight):
    figure = occupancy_figure(tight, labels=labels(OCCUPANCY_LABELS), separators=",.")
    assert figure.layout.separators == ",."
