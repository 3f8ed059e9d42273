"""Fast-forwarding decode steps decides exactly what step-by-step simulation decides, under V1's rules too.

test_scheduler.py checks it for the recorded model (no V1 rule); here the pool is small enough
to preempt again and again with prefix caching and full-prompt admission on (vLLM 0.33.0's
defaults, as the preemption lesson runs), and with V0's swap. Every decision (who is preempted,
how often, what is recomputed or found in the prefix cache, how many steps run) must be equal;
times agree to float rounding (a run's step times are summed before they join the clock).
"""

import dataclasses

import numpy as np
import pytest

from kvcore import scheduler
from kvcore.scheduler import ServerConfig, Workload, generate_requests, simulate, vllm_rules
from kvcore.vllm_versions import vllm_release

TRACE = generate_requests(
    Workload(num_requests=150, arrival_rate_per_s=30.0, prompt_mean_tokens=300, output_mean_tokens=150, seed=21)
)
V1 = vllm_rules(ServerConfig(num_blocks=250, max_num_seqs=48), vllm_release("0.33.0"))
SERVERS = {
    "v1-defaults": V1,
    "v1-prefix-caching-only": dataclasses.replace(V1, reserve_full_prompt=False),
    "v1-full-prompt-only": dataclasses.replace(V1, prefix_caching=False),
    "v1-chunked-prefill": dataclasses.replace(V1, max_num_batched_tokens=200),
    "v0-swap": ServerConfig(num_blocks=250, max_num_seqs=48, preemption_mode="swap"),
}


@pytest.mark.parametrize("name", SERVERS)
def test_fast_forward_makes_the_same_decisions_as_step_by_step(name):
    server = SERVERS[name]
    fast, slow = simulate(TRACE, server), simulate(TRACE, server, fast_forward=False)
    assert slow.requests.preemptions.sum() > 0  # the case is worth checking
    assert fast.timeline.steps.sum() == slow.timeline.steps.sum() == len(slow.timeline.steps)
    for field in ("preemptions", "recomputed_tokens", "generated_tokens"):
        assert np.array_equal(getattr(fast.requests, field), getattr(slow.requests, field)), field
    assert np.array_equal(fast.reused_tokens, slow.reused_tokens)
    assert np.array_equal(fast.swap_preemptions, slow.swap_preemptions)
    assert fast.timeline.used_blocks.max() == slow.timeline.used_blocks.max()
    assert np.allclose(fast.requests.first_token_s, slow.requests.first_token_s, rtol=0, atol=1e-9)
    assert np.allclose(fast.requests.finish_s, slow.requests.finish_s, rtol=0, atol=1e-9)
    assert np.allclose(fast.requests.itl_max_s, slow.requests.itl_max_s, rtol=0, atol=1e-9, equal_nan=True)


def _same_bits(a, b):
    """Every array of two results equal bit for bit (NaN where the other has NaN)."""
    for part in ("timeline", "requests"):
        for field in dataclasses.fields(getattr(a, part)):
            x, y = getattr(getattr(a, part), field.name), getattr(getattr(b, part), field.name)
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (part, field.name)
    assert np.array_equal(a.reused_tokens, b.reused_tokens)
    assert np.array_equal(a.swap_preemptions, b.swap_preemptions)


@pytest.mark.parametrize("name", SERVERS)
def test_the_all_decoding_flag_only_spares_a_check(name, monkeypatch):
    """``_Engine.all_decoding`` skips the per-request decoding check; without it every bit is the same."""
    server = SERVERS[name]
    with_flag = simulate(TRACE, server)
    find_run = scheduler._Engine._decode_run

    def without_flag(engine):
        engine.all_decoding = False
        return find_run(engine)

    monkeypatch.setattr(scheduler._Engine, "_decode_run", without_flag)
    _same_bits(with_flag, simulate(TRACE, server))
