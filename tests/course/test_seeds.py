"""The seed's figures are its rounded words: each is near what kvcore computes for the seed's own scenario."""

from __future__ import annotations

import pytest

import kvcore
from course import seeds
from course.seeds import SEED_004, SHAREGPT_ON_OPT
from kvcore.units import GB

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
LEDGER = kvcore.ledger(
    MODELS[seeds.SEED_MODEL_ID],
    GPUS[seeds.SEED_GPU_ID],
    context_tokens=seeds.SEED_CONTEXT_TOKENS,
    shards=seeds.SEED_SHARDS,
    answer_tokens=seeds.SEED_ANSWER_TOKENS,
)


@pytest.mark.parametrize(
    ("said", "computed", "within"),
    [
        # seed 004 rounds 327,680 B to "320 KB" and 327.68 GB to "320 GB": 2.4 % below
        (SEED_004.kv_bytes_per_token, LEDGER.kv_bytes_per_token, 0.03),
        (SEED_004.cache_bytes, LEDGER.cache_bytes, 0.03),
        (SEED_004.mha_bytes_per_token, LEDGER.mha_bytes_per_token, 0.03),  # 2,621,440 B, "2,6 MB"
        (SEED_004.gqa_factor, LEDGER.gqa_factor, 0),  # 64 / 8
        (SEED_004.weights_bytes, LEDGER.weights_bytes, 0.01),  # 70.55 B params · 2 = 141.1 GB, "~140 GB"
        (SEED_004.bandwidth_bytes_per_s, LEDGER.bandwidth_bytes_per_s, 0),  # "~3,35 TB/s"
        (SEED_004.token_s, LEDGER.kv_token_s, 0.03),  # 97.8 ms, "~95 ms"
        (SEED_004.tokens_per_s, LEDGER.kv_tokens_per_s, 0.03),  # 10.2, "cerca de 10"
        (SEED_004.answer_s, LEDGER.kv_answer_s, 0.03),  # 97.8 s, "~95 segundos"
        (SEED_004.ridge_flop_per_byte, LEDGER.ridge_flop_per_byte, 0.02),  # 295, "cerca de 300"
    ],
)
def test_each_figure_of_seed_004_is_its_rounding_of_the_ledger(said, computed, within):
    assert said == pytest.approx(computed, rel=within)


def test_the_seed_sharded_floor_is_the_ledgers_over_its_8_gpus():
    # 97.8 ms / 8 = 12.2 ms, "~12 ms"
    assert SEED_004.sharded_token_s == pytest.approx(LEDGER.sharded_kv_token_s, rel=0.03)


def test_the_seeds_6_to_8_gpus_are_the_fit_and_the_tensor_parallel_group():
    # 468.8 GB on 80 GiB cards needs 6; 6 does not split 8 KV heads, so the group is 8
    assert (SEED_004.gpus_to_fit_low, SEED_004.gpus_to_fit_high) == (LEDGER.gpus_to_fit, LEDGER.tensor_parallel_group)


def test_fp8_halves_the_seeds_bytes_per_token():
    assert SEED_004.fp8_bytes_per_token == SEED_004.kv_bytes_per_token / 2
    assert SEED_004.gpu_memory_bytes == 80 * GB


def test_the_sharegpt_preset_is_the_vllm_papers_setting():
    # Kwon et al. 2023, Fig. 11: 161.31 + 337.99 ≈ 499 tokens per request on OPT (max_model_len 2,048)
    assert (SHAREGPT_ON_OPT.mean_tokens, SHAREGPT_ON_OPT.max_model_len) == (499.0, 2048)
    assert SHAREGPT_ON_OPT.block_size == kvcore.DEFAULT_BLOCK_SIZE
