"""kvcore.vllm_pool: the budget from GPU memory to vLLM's KV pool and the lines it logs."""

from __future__ import annotations

import numpy as np
import pytest

from kvcore import GiB, MiB, load_models, model_weights_bytes
from kvcore.budget import kv_pool_bytes
from kvcore.vllm_pool import (
    activation_peak_bytes,
    pool_curve,
    pool_log,
    pool_tokens_curve,
    pp_partition,
    stage_bytes_per_token,
    stage_layers,
    startup_log_lines,
)


@pytest.fixture(scope="module")
def models():
    return load_models()


def issue_10517(models, **knobs):
    # vLLM issue #10517: Llama 3.1 8B (16.06 GB of BF16 weights) on a 24 GiB card, u = 0.90,
    # max_model_len = max_num_batched_tokens = 20,000, 0.5 GiB non-torch + 0.5 GiB CUDA graphs.
    model = models["llama-3.1-8b"]
    settings = {
        "memory_bytes": 24 * GiB,
        "utilization": 0.90,
        "weights_bytes": model_weights_bytes(model),
        "max_model_len": 20_000,
        "max_num_batched_tokens": 20_000,
        "non_torch_bytes": 0.5 * GiB,
        "cuda_graph_bytes": 0.5 * GiB,
    }
    return pool_log(model, **{**settings, **knobs})


def test_the_activation_peak_is_tokens_times_hidden_times_bytes_times_twelve(models):
    # 8,192 · 4,096 · 2 · 12 = 805,306,368 bytes = 768 MiB (Llama 3.1 8B, BF16 activations).
    peak = activation_peak_bytes(models["llama-3.1-8b"], max_num_batched_tokens=8192)
    assert float(peak) == 805_306_368 == 768 * MiB


def test_the_activation_peak_grows_linearly_with_the_batch(models):
    peaks = activation_peak_bytes(models["llama-3.1-8b"], max_num_batched_tokens=np.array([1024, 2048, 4096]))
    assert np.allclose(peaks / peaks[0], [1, 2, 4])


def test_the_pool_is_memory_times_u_minus_everything_else():
    # 80 GiB · 0.9 − 40 − 2 − 0.5 − 0.5 = 29 GiB.
    pool = kv_pool_bytes(
        memory_bytes=80 * GiB,
        utilization=0.9,
        weights_bytes=40 * GiB,
        activation_bytes=2 * GiB,
        non_torch_bytes=0.5 * GiB,
        cuda_graph_bytes=0.5 * GiB,
    )
    assert float(pool) == pytest.approx(29 * GiB)


def test_a_utilization_above_one_is_refused():
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        kv_pool_bytes(memory_bytes=GiB, utilization=1.2, weights_bytes=0, activation_bytes=0)


def test_the_issue_10517_budget_lands_within_one_block_of_the_log(models):
    # 21.6 GiB − 14.957 (weights) − 1.831 (20,000 · 4,096 · 2 · 12 B) − 1.0 = 3.8119 GiB → ⌊3.8119 · 512⌋ = 1,951
    # blocks of 2 MiB (16 · 128 KiB); the issue logged 1,952 blocks, 31,232 tokens and 1.56×.
    log = issue_10517(models)
    assert (log.num_blocks, log.tokens) == (1951, 31_216)
    assert round(log.max_concurrency, 2) == 1.56
    assert startup_log_lines(log) == [
        "Available KV cache memory: 3.81 GiB",
        "GPU KV cache size: 31,216 tokens",
        "Maximum concurrency for 20,000 tokens per request: 1.56x",
    ]


def test_the_budget_parts_add_up_to_the_gpu(models):
    log = issue_10517(models)
    parts = (
        log.held_back_bytes
        + log.weights_bytes
        + log.activation_bytes
        + log.non_torch_bytes
        + log.cuda_graph_bytes
        + log.kv_pool_bytes
    )
    assert parts == pytest.approx(log.memory_bytes)


def test_a_request_that_does_not_fit_prints_vllms_error_with_the_estimate(models):
    log = issue_10517(models, max_model_len=65_536)
    assert not log.fits
    assert log.estimated_max_model_len == log.tokens  # full attention: every block of the pool, one request
    [available, error] = startup_log_lines(log)
    assert available.startswith("Available KV cache memory:")
    assert error.startswith("ValueError: To serve at least one request with the models's max seq len (65536)")
    assert f"the estimated maximum model length is {log.estimated_max_model_len}." in error


def test_weights_bigger_than_the_gpu_leave_no_pool(models):
    log = issue_10517(models, memory_bytes=12 * GiB)
    assert not log.has_pool and log.num_blocks == 0
    assert startup_log_lines(log)[0].startswith("ValueError: No available memory for the cache blocks.")


def test_tensor_parallelism_splits_heads_and_weights(models):
    # Llama 3.1 70B: 8 KV heads; TP=4 → 2 heads per GPU; per token: 80 layers · 2 (K, V) · 2 heads · 128 · 2 B = 80 KiB.
    model = models["llama-3.1-70b"]
    assert stage_bytes_per_token(model, tp=4) == 80 * 2 * 2 * 128 * 2


def test_an_mla_latent_is_replicated_on_every_rank(models):
    model = models["deepseek-v3"]
    assert stage_bytes_per_token(model, tp=8) == stage_bytes_per_token(model, tp=1)


def test_the_fullest_pipeline_stage_sets_the_count():
    # 61 layers (DeepSeek-V3) over 4 stages: ceil(61 / 4) = 16 layers on the fullest.
    assert stage_layers(61, 4) == 16
    with pytest.raises(ValueError):
        stage_layers(2, 4)


@pytest.mark.parametrize(
    ("layers", "pp", "current", "before_0_8"),
    [
        (27, 2, (14, 13), (13, 14)),  # DeepSeek-V2-Lite: vLLM PR #20665's log, 14 layers on ranks 0-1
        (61, 4, (15, 15, 16, 15), (15, 15, 15, 16)),  # DeepSeek-V3: the one left over on the third stage
        (62, 4, (15, 16, 16, 15), (15, 15, 15, 17)),  # two left over: the middle stages (get_pp_indices)
        (80, 4, (20, 20, 20, 20), (20, 20, 20, 20)),
        (7, 7, (1,) * 7, (1,) * 7),
    ],
)
def test_pipeline_stages_are_cut_as_vllms_get_pp_indices_cuts_them(layers, pp, current, before_0_8):
    # vllm/distributed/utils.py get_pp_indices: 0.8.0 on, the layers left over go to the stages before the
    # last, from the second-to-last backwards; 0.7.3 and before, all to the last stage.
    assert pp_partition(layers, pp) == current
    assert pp_partition(layers, pp, remainder_on_last=True) == before_0_8
    assert sum(current) == sum(before_0_8) == layers
    assert stage_layers(layers, pp) == max(current)


def test_context_parallelism_multiplies_the_tokens_and_divides_the_request(models):
    one = issue_10517(models)
    two = issue_10517(models, cp=2)
    assert two.tokens == 2 * one.tokens
    assert two.max_concurrency == pytest.approx(one.num_blocks / 625)  # ceil(10,000 / 16) = 625 blocks per rank


def test_the_curve_matches_the_log_at_every_utilization(models):
    model = models["llama-3.1-8b"]
    u = np.array([0.8, 0.9])
    blocks, tokens = pool_tokens_curve(
        model,
        memory_bytes=24 * GiB,
        utilization=u,
        weights_bytes=model_weights_bytes(model),
        max_num_batched_tokens=20_000,
        non_torch_bytes=0.5 * GiB,
        cuda_graph_bytes=0.5 * GiB,
    )
    assert tokens[1] == issue_10517(models).tokens
    assert blocks[0] == issue_10517(models, utilization=0.8).num_blocks


@pytest.mark.parametrize("knobs", [{}, {"tp": 2, "pp": 2, "cp": 2}, {"block_size": 32, "utilization": 0.8}])
def test_a_logs_curve_passes_through_the_log_at_its_own_utilization(models, knobs):
    log = issue_10517(models, **knobs)
    blocks, tokens = pool_curve(log, utilization=np.array([0.6, log.utilization]))
    assert (blocks[1], tokens[1]) == (log.num_blocks, log.tokens)
    assert blocks[0] < blocks[1]
