"""The preemption lesson's presets are what course/scheduler_presets.py says they are (figures of its docstring)."""

import numpy as np
import pytest

from course.scheduler_presets import PRESETS, preset
from kvcore.errors import KvError
from kvcore.scheduler import generate_requests, simulate, summarize


@pytest.fixture(scope="module")
def runs():
    return {name: simulate(generate_requests(preset(name)[0]), preset(name)[1]) for name in PRESETS}


def test_every_preset_serves_the_same_trace():
    workloads = {preset(name)[0] for name in PRESETS}
    assert len(workloads) == 1


def test_the_right_sized_pool_holds_64_longest_requests(runs):
    # longest request 2,209 tokens: 64 · ceil(2,209 / 16) = 64 · 139 = 8,896 blocks
    trace = generate_requests(preset("right-sized")[0])
    assert (trace.prompt_tokens + trace.output_tokens).max() == 2209
    assert preset("right-sized")[1].num_blocks == 64 * 139 == 8896
    assert summarize(runs["right-sized"]).preemptions == 0


def test_the_too_small_pool_is_about_the_average_load(runs):
    timeline = runs["right-sized"].timeline
    step_s = np.diff(timeline.time_s, prepend=0.0)
    assert np.average(timeline.used_blocks, weights=step_s) == pytest.approx(1811, abs=1)
    assert np.average(timeline.running, weights=step_s) == pytest.approx(42, abs=0.5)
    assert preset("too-small")[1].num_blocks == 2000


def test_the_too_small_pool_preempts_327_times_and_its_queue_waits_seconds(runs):
    summary = summarize(runs["too-small"])
    assert summary.preemptions == 327
    assert summary.p99_ttft_s == pytest.approx(5.9, abs=0.05)


def test_the_swap_preset_is_the_too_small_pool_preempting_by_swap(runs):
    small, swap = preset("too-small")[1], preset("too-small-swap")[1]
    assert (swap.num_blocks, swap.preemption_mode) == (small.num_blocks, "swap")
    assert summarize(runs["too-small-swap"]).preemptions > 0
    assert runs["too-small-swap"].requests.recomputed_tokens.sum() == 0


def test_an_unknown_preset_is_refused_with_a_code():
    with pytest.raises(KvError) as error:
        preset("huge")
    assert error.value.code == "unknown_preset"
