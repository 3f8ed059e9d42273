"""kvcore.budget: one memory budget, M · u − Σ terms, and its two views (the seed's rule, vLLM's start-up)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore
from kvcore.budget import (
    DEFAULT_ASSUMPTIONS,
    BudgetTerm,
    kv_budget_bytes,
    kv_pool_bytes,
    memory_budget,
    seed_budget,
)
from kvcore.units import GiB, MiB
from kvcore.vllm_pool import pool_log, vllm_budget

MODELS = kvcore.load_models()
LLAMA_8B = MODELS["llama-3.1-8b"]

gib = st.floats(0.0, 64.0, allow_nan=False)
fractions = st.floats(0.05, 1.0, allow_nan=False)


def test_the_seed_rule_on_a_worked_example():
    # 80 GiB · 0.9 = 72 GiB; − 16 GiB of weights − 2 GiB of overhead = 54 GiB (seed 000).
    budget = seed_budget(memory_bytes=80 * GiB, utilization=0.9, weights_bytes=16 * GiB, overhead_bytes=2 * GiB)
    assert budget.kv_pool_bytes == pytest.approx(54 * GiB)
    assert [part.name for part in budget.parts] == ["utilization", "weights", "overhead", "kv_pool"]


def test_the_defaults_are_vllms_utilization_and_one_gib_of_overhead():
    assert (DEFAULT_ASSUMPTIONS.utilization, DEFAULT_ASSUMPTIONS.overhead_bytes) == (0.9, GiB)
    assert kvcore.DEFAULT_UTILIZATION == 0.9
    assert kvcore.DEFAULT_OVERHEAD_BYTES == 2**30


def test_the_sidebars_default_leaves_5_64_gib_on_an_rtx_4090():
    # Llama 3.1 8B in BF16 (16.06 GB = 14.957 GiB) on 24 GiB: 21.6 − 14.957 − 1 = 5.643 GiB with the defaults.
    weights = kvcore.model_weights_bytes(LLAMA_8B)
    budget = seed_budget(
        memory_bytes=24 * GiB,
        utilization=kvcore.DEFAULT_UTILIZATION,
        weights_bytes=weights,
        overhead_bytes=kvcore.DEFAULT_OVERHEAD_BYTES,
    )
    assert round(budget.kv_pool_bytes / GiB, 2) == 5.64


@settings(deadline=None)
@given(st.floats(1.0, 192.0), fractions, st.lists(gib, max_size=6))
def test_the_parts_add_up_to_the_gpu_whatever_the_terms(memory_gib, u, terms_gib):
    terms = [BudgetTerm(name=f"term_{i}", bytes=value * GiB) for i, value in enumerate(terms_gib)]
    budget = memory_budget(memory_bytes=memory_gib * GiB, utilization=u, terms=terms)
    assert sum(part.bytes for part in budget.parts) == pytest.approx(budget.memory_bytes, rel=1e-12, abs=1.0)
    assert budget.as_dict()["total_memory"] == budget.memory_bytes


def test_a_negative_pool_means_it_does_not_fit_and_the_parts_still_add_up():
    budget = seed_budget(memory_bytes=12 * GiB, utilization=0.9, weights_bytes=16 * GiB)
    assert budget.kv_pool_bytes < 0 and not budget.has_pool
    assert sum(part.bytes for part in budget.parts) == pytest.approx(12 * GiB)


@settings(deadline=None)
@given(st.floats(8.0, 192.0), fractions, gib, st.integers(512, 65536), gib, gib)
def test_the_seed_rule_and_vllms_view_leave_the_same_pool_for_the_same_terms(
    memory_gib, u, weights_gib, batched, non_torch_gib, graphs_gib
):
    vllm = vllm_budget(
        LLAMA_8B,
        memory_bytes=memory_gib * GiB,
        utilization=u,
        weights_bytes=weights_gib * GiB,
        max_num_batched_tokens=batched,
        non_torch_bytes=non_torch_gib * GiB,
        cuda_graph_bytes=graphs_gib * GiB,
    )
    # The same terms, handed to the generic budget, give the very same pool...
    same = memory_budget(memory_bytes=memory_gib * GiB, utilization=u, terms=vllm.terms)
    assert same.kv_pool_bytes == vllm.kv_pool_bytes
    # ...and the seed's rule, with the three non-weight terms as its one overhead, the same pool up to rounding.
    others = vllm.taken_bytes - vllm.term_bytes("weights")
    seed = seed_budget(
        memory_bytes=memory_gib * GiB, utilization=u, weights_bytes=weights_gib * GiB, overhead_bytes=others
    )
    assert seed.kv_pool_bytes == pytest.approx(vllm.kv_pool_bytes, abs=1e-3)


def test_the_seed_rule_and_vllms_view_give_the_same_blocks_for_issue_10517():
    # vLLM issue #10517's budget (see tests/kvcore/test_vllm_pool.py): 1,951 blocks either way.
    weights = kvcore.model_weights_bytes(LLAMA_8B)
    log = pool_log(
        LLAMA_8B,
        memory_bytes=24 * GiB,
        utilization=0.9,
        weights_bytes=weights,
        max_model_len=20_000,
        max_num_batched_tokens=20_000,
        non_torch_bytes=0.5 * GiB,
        cuda_graph_bytes=0.5 * GiB,
    )
    overhead = log.activation_bytes + log.non_torch_bytes + log.cuda_graph_bytes
    pool = kv_budget_bytes(memory_bytes=24 * GiB, utilization=0.9, weights_bytes=weights, overhead_bytes=overhead)
    report = kvcore.pool_report(LLAMA_8B, kv_pool_bytes=pool, max_model_len=20_000, max_num_batched_tokens=20_000)
    assert (report.num_blocks, report.tokens) == (log.num_blocks, log.tokens) == (1951, 31_216)


def test_the_vectorised_pool_is_the_budgets_pool_at_every_utilization():
    weights = kvcore.model_weights_bytes(LLAMA_8B)
    curve = kv_pool_bytes(
        memory_bytes=24 * GiB, utilization=[0.8, 0.9], weights_bytes=weights, overhead_bytes=GiB
    ).tolist()
    expected = [
        kv_budget_bytes(memory_bytes=24 * GiB, utilization=u, weights_bytes=weights, overhead_bytes=GiB)
        for u in (0.8, 0.9)
    ]
    assert curve == expected


def test_a_term_is_added_or_replaced_by_name():
    budget = seed_budget(memory_bytes=24 * GiB, utilization=0.9, weights_bytes=15 * GiB)
    graphs = budget.with_term(BudgetTerm(name="cuda_graphs", bytes=512 * MiB, source="measured"))
    assert graphs.kv_pool_bytes == pytest.approx(budget.kv_pool_bytes - 512 * MiB)
    assert [term.name for term in graphs.terms] == ["weights", "overhead", "cuda_graphs"]
    lighter = graphs.with_term(BudgetTerm(name="weights", bytes=14 * GiB))
    assert [term.name for term in lighter.terms] == ["weights", "overhead", "cuda_graphs"]
    assert lighter.kv_pool_bytes == pytest.approx(graphs.kv_pool_bytes + GiB)


def test_every_term_has_a_name_and_a_source():
    budget = vllm_budget(LLAMA_8B, memory_bytes=24 * GiB, utilization=0.9, weights_bytes=15 * GiB)
    assert [term.name for term in budget.terms] == ["weights", "activation_peak", "non_torch", "cuda_graphs"]
    assert all(term.source for term in budget.parts)


def test_a_negative_term_or_a_repeated_name_is_refused():
    with pytest.raises(ValueError, match="overhead"):
        seed_budget(memory_bytes=24 * GiB, weights_bytes=GiB, overhead_bytes=-1.0)
    with pytest.raises(ValueError, match="once"):
        memory_budget(memory_bytes=GiB, utilization=0.9, terms=[BudgetTerm(name="a", bytes=1.0)] * 2)


def test_a_utilization_above_one_is_refused():
    with pytest.raises(ValueError, match="utilization"):
        seed_budget(memory_bytes=24 * GiB, utilization=1.2, weights_bytes=GiB)


def test_the_whole_card_budget_leaves_memory_minus_weights_and_the_default_one_keeps_vllms_margin():
    # RTX 4090: 24 GiB; Llama 3.1 8B in BF16: 16.06 GB = 14.96 GiB. Whole card: 24 − 14.96 = 9.04 GiB;
    # u = 0.9 and 1 GiB of overhead: 21.6 − 14.96 − 1 = 5.64 GiB (the issue's two figures).
    weights = 16.06e9
    whole = kvcore.assumed_budget(memory_bytes=24 * kvcore.GiB, weights_bytes=weights, assumptions=kvcore.WHOLE_CARD)
    served = kvcore.assumed_budget(memory_bytes=24 * kvcore.GiB, weights_bytes=weights)
    assert whole.kv_pool_bytes == pytest.approx(24 * kvcore.GiB - weights)
    assert served.kv_pool_bytes == pytest.approx(0.9 * 24 * kvcore.GiB - weights - kvcore.GiB)
    assert (round(whole.kv_pool_bytes / kvcore.GiB, 2), round(served.kv_pool_bytes / kvcore.GiB, 2)) == (9.04, 5.64)
