"""Seed 004's ledger, computed; and the attention-mass measurement that decides eviction or quantization."""

import numpy as np
import pytest

import kvcore as kv
from course import seeds
from kvcore import agent
from kvcore.units import GB, GiB, KiB, MiB


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kv.load_gpus()


@pytest.fixture(scope="module")
def seed_ledger(models, gpus):
    """Seed 004's scenario: Llama 3.1 70B, 1,000,000 tokens, BF16 cache and weights, H100 SXM, 8 GPUs."""
    return agent.ledger(models["llama-3.1-70b"], gpus["h100-sxm"], context_tokens=1_000_000, shards=8)


# ---------------------------------------------------------------- seed 004, line by line


def test_one_70b_token_is_327_680_bytes_which_is_320_kib(seed_ledger):
    # seed 004: 2 × 80 × 8 × 128 × 2 = 327,680 bytes "≈ 320 KB" (it is 320 KiB = 327.68 kB)
    assert seed_ledger.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2 == 320 * KiB


def test_without_gqa_a_70b_token_would_be_2_5_mib(seed_ledger):
    # seed 004: "cerca de 2,6 MB por token": 2 × 80 × 64 × 128 × 2 = 2,621,440 B = 2.5 MiB = 2.62 MB
    assert seed_ledger.mha_bytes_per_token == 2_621_440 == 2.5 * MiB


def test_gqa_cut_the_70b_cache_8_times(seed_ledger):
    # seed 004: "O GQA já cortou essa conta em 8 vezes": 64 query heads / 8 KV heads
    assert seed_ledger.gqa_factor == 8


def test_a_million_tokens_is_327_68_gb_or_305_gib(seed_ledger):
    # seed 004: "na ordem de 320 GB"; 1,000,000 × 327,680 B = 327.68 GB = 305.18 GiB
    assert seed_ledger.cache_bytes == 327.68 * GB
    assert seed_ledger.cache_bytes / GiB == pytest.approx(305.18, abs=0.005)


def test_the_seeds_320_gb_is_exact_for_2_to_the_20_tokens_in_gib(models):
    # 1,048,576 × 320 KiB = 320 GiB exactly: the seed's figure mixes a binary million with decimal GB
    assert float(kv.kv_cache_bytes(models["llama-3.1-70b"], context_tokens=2**20)) == 320 * GiB


def test_the_70b_weights_are_141_gb_in_bf16(seed_ledger):
    # seed 004: "~140 GB dos pesos em fp16"; data/models.csv: 70.55e9 params × 2 B
    assert seed_ledger.weights_bytes == pytest.approx(141.1 * GB)


def test_weights_and_cache_need_6_h100s_and_a_tensor_parallel_group_of_8(seed_ledger):
    # seed 004: "de 6 a 8 GPUs só para caber": (141.1 + 327.68) GB / 80 GiB = 5.46 → 6; 6 does not split 8 KV heads → 8
    assert (seed_ledger.gpus_to_fit, seed_ledger.tensor_parallel_group) == (6, 8)


def test_with_90_percent_of_each_h100_usable_it_takes_7(seed_ledger, gpus):
    need = seed_ledger.weights_bytes + seed_ledger.cache_bytes
    assert float(kv.gpus_needed(total_bytes=need, memory_bytes=gpus["h100-sxm"].memory_bytes, utilization=0.9)) == 7


def test_streaming_the_cache_takes_97_8_ms_per_token_and_139_9_with_the_weights(seed_ledger):
    # seed 004: "~95 ms por token": 327.68 GB / 3.35 TB/s = 97.81 ms; + 141.1 GB of weights = 139.93 ms
    assert seed_ledger.kv_token_s == pytest.approx(0.09781, abs=1e-5)
    assert seed_ledger.token_s == pytest.approx(0.13993, abs=1e-5)


def test_the_seeds_95_ms_is_its_rounded_320_gb_over_3_35_tb_s(gpus):
    # seed 004's own arithmetic: 320e9 / 3.35e12 = 95.5 ms
    seconds = kv.stream_time_s(seeds.SEED_004.cache_bytes, bandwidth_bytes_per_s=gpus["h100-sxm"].bandwidth_bytes_per_s)
    assert float(seconds) == pytest.approx(0.0955, abs=1e-4)


def test_the_best_case_is_about_10_tokens_per_second(seed_ledger):
    # seed 004: "cerca de 10 tokens por segundo no melhor caso teórico": 1 / 97.81 ms = 10.22
    assert seed_ledger.kv_tokens_per_s == pytest.approx(10.22, abs=0.01)


def test_a_1000_token_answer_streams_97_8_s_of_kv_and_a_little_more_as_the_cache_grows(seed_ledger):
    # seed 004: "~95 segundos de streaming puro de KV"; 1,000 × 97.81 ms; the cache grows 0.1 % meanwhile
    assert seed_ledger.kv_answer_s == pytest.approx(97.81, abs=0.01)
    assert seed_ledger.kv_answer_s < seed_ledger.kv_answer_growing_s < 1.001 * seed_ledger.kv_answer_s
    assert seed_ledger.answer_s == pytest.approx(139.98, abs=0.01)


def test_over_8_gpus_the_floor_is_12_2_ms_but_the_fleet_still_moves_327_68_gb(seed_ledger):
    # seed 004: "~12 ms por token, mas ... a frota continua movendo 320 GB por token"
    assert seed_ledger.sharded_kv_token_s == pytest.approx(0.012227, abs=1e-6)
    assert seed_ledger.fleet_kv_bytes == 327.68 * GB


def test_the_h100_ridge_point_is_295_flops_per_byte(seed_ledger):
    # seed 004: "cerca de 300 FLOPs ... para cada byte": 989.4 TFLOP/s / 3.35 TB/s
    assert seed_ledger.ridge_flop_per_byte == pytest.approx(295.34, abs=0.01)


def test_fp8_halves_the_bytes_per_token_and_int4_quarters_them(models, gpus):
    # seed 004: fp8 "de 320 KB para 160 KB"; int4 "um quarto"
    fp8 = agent.ledger(models["llama-3.1-70b"], gpus["h100-sxm"], context_tokens=1_000_000, kv_bytes_per_value=1.0)
    int4 = agent.ledger(models["llama-3.1-70b"], gpus["h100-sxm"], context_tokens=1_000_000, kv_bytes_per_value=0.5)
    assert (fp8.kv_bytes_per_token, int4.kv_bytes_per_token) == (163_840, 81_920)


def test_fp8_cuts_the_gpus_needed_from_6_to_4_as_the_weights_do_not_shrink(models, gpus):
    # (141.1 + 163.84) GB / 85.9 GB = 3.55 → 4: fewer, but not half (seed 004 says "pela metade")
    fp8 = agent.ledger(models["llama-3.1-70b"], gpus["h100-sxm"], context_tokens=1_000_000, kv_bytes_per_value=1.0)
    assert fp8.gpus_to_fit == 4


def test_an_answer_of_one_token_is_one_step(models, gpus):
    model, bandwidth = models["llama-3.1-8b"], gpus["h100-sxm"].bandwidth_bytes_per_s
    one = agent.answer_stream_s(model, context_tokens=5000, answer_tokens=1, bandwidth_bytes_per_s=bandwidth)
    step = kv.decode_step_s(kv.decode_bytes_per_step(model, context_tokens=5000).total, bandwidth_bytes_per_s=bandwidth)
    assert one == pytest.approx(float(step))


def test_no_tensor_parallel_group_exists_for_a_prime_head_count_beyond_one(models):
    with pytest.raises(ValueError, match="tensor parallelism"):
        agent.smallest_tensor_parallel(models["falcon-7b"], at_least=2, limit=64)


# ---------------------------------------------------------------- the attention-mass measurement


def test_uniform_attention_puts_1_percent_of_the_mass_on_the_top_1_percent():
    assert float(agent.top_mass_share(np.full(1000, 0.3), top_fraction=0.01)) == pytest.approx(0.01)


def test_one_hot_attention_puts_all_the_mass_on_the_top_block():
    weights = np.zeros(500)
    weights[123] = 1.0
    assert float(agent.top_mass_share(weights, top_fraction=0.01)) == 1.0


def test_the_measurement_gives_one_share_per_layer():
    attention = np.stack([np.ones(400), np.r_[np.full(4, 10.0), np.zeros(396)]])  # flat layer, peaked layer
    np.testing.assert_allclose(agent.top_mass_share(attention, top_fraction=0.01), [0.01, 1.0])


def test_several_fractions_at_once_give_a_column_each():
    shares = agent.top_mass_share(np.ones((3, 200)), top_fraction=np.array([0.01, 0.5, 1.0]))
    np.testing.assert_allclose(shares, np.tile([0.01, 0.5, 1.0], (3, 1)))


def test_the_top_fraction_keeps_at_least_one_block():
    assert float(agent.top_mass_share(np.ones(10), top_fraction=0.001)) == pytest.approx(0.1)


@pytest.mark.parametrize("bad", [np.array([1.0, -0.5]), np.array([np.nan, 1.0]), np.zeros(4), np.array([])])
def test_attention_that_is_negative_empty_or_massless_is_refused(bad):
    with pytest.raises(ValueError):
        agent.top_mass_share(bad)


def test_a_top_fraction_above_one_is_refused():
    with pytest.raises(ValueError, match="at most 1"):
        agent.top_mass_share(np.ones(10), top_fraction=1.5)


def test_the_cumulative_mass_rises_to_one():
    curve = agent.cumulative_mass(agent.synthetic_attention(blocks=300, concentration=1.2))
    assert np.all(np.diff(curve, axis=-1) >= 0)
    np.testing.assert_allclose(curve[:, -1], 1.0)


def test_synthetic_attention_is_a_distribution_per_layer_and_reproducible():
    one = agent.synthetic_attention(blocks=256, layers=4, concentration=1.0, seed=7)
    again = agent.synthetic_attention(blocks=256, layers=4, concentration=1.0, seed=7)
    assert one.shape == (4, 256)
    np.testing.assert_allclose(one.sum(axis=-1), 1.0)
    np.testing.assert_array_equal(one, again)


def test_more_concentration_puts_more_mass_on_the_top_blocks():
    shares = [
        float(agent.top_mass_share(agent.synthetic_attention(blocks=2048, concentration=c)).mean())
        for c in (0.0, 0.5, 1.0, 1.5, 2.0)
    ]
    assert shares == sorted(shares) and shares[0] < 0.05 and shares[-1] > 0.9


def test_quantizing_saves_half_or_three_quarters_and_keeps_every_token(models):
    attention = agent.synthetic_attention(blocks=1000, concentration=1.0)
    _evict, fp8, int4 = agent.cache_options(
        models["llama-3.1-70b"], context_tokens=1_000_000, keep_fraction=0.1, attention=attention
    )
    assert (fp8.saved_bytes, int4.saved_bytes) == (327.68 * GB / 2, 327.68 * GB * 3 / 4)
    assert fp8.tokens_kept == int4.tokens_kept == fp8.mass_kept == 1.0


def test_evicting_to_10_percent_saves_90_percent_and_keeps_the_measured_mass(models):
    attention = agent.synthetic_attention(blocks=1000, concentration=1.0)
    evict, *_ = agent.cache_options(
        models["llama-3.1-70b"], context_tokens=1_000_000, keep_fraction=0.1, attention=attention
    )
    assert evict.saved_bytes == pytest.approx(0.9 * 327.68 * GB)
    assert evict.mass_kept == pytest.approx(float(agent.top_mass_share(attention, top_fraction=0.1).mean()))
    assert evict.mass_lost == pytest.approx(1 - evict.mass_kept)


@pytest.mark.parametrize(
    ("share", "words"), [(0.9, "concentrated"), (0.5, "concentrated"), (0.3, "mixed"), (0.02, "flat")]
)
def test_the_verdict_names_how_concentrated_the_mass_is(share, words):
    assert agent.mass_verdict(share) == words


# ---------------------------------------------------------------- every format at once


FORMATS = (2.0, 1.0, 0.5)  # BF16, FP8, INT4 bytes per value
#: (context tokens, shards, answer tokens, usable share, weight bytes per param): short, long and odd contexts,
#: one and several GPUs, the page's shortest and longest answers, the whole card and part of it, BF16 and INT4 weights.
LEDGER_GRID = (
    (1, 1, 100, 1.0, 2.0),
    (1_000, 2, 1_000, 0.9, 2.0),
    (131_072, 1, 10_000, 0.5, 0.5),
    (999_999, 4, 1_000, 1.0, 1.0),
    (1_000_000, 8, 1_000, 1.0, 2.0),
    (2_000_000, 16, 10_000, 0.75, 2.0),
)


def outcome(compute):
    """What a ledger call gives: its ledgers, or the code of the KvError it raises."""
    try:
        return compute()
    except kv.KvError as error:
        return error.code


def test_every_formats_ledger_at_once_equals_each_formats_own_ledger_exactly(models, gpus):
    gpu_list = list(gpus.values())
    compared = 0
    for index, model in enumerate(models.values()):
        gpu = gpu_list[index % len(gpu_list)]
        for context, shards, answer, utilization, weight_bytes in LEDGER_GRID:
            tp = max(size for size in kv.tensor_parallel_sizes(model, max_gpus=16) if size <= shards)
            knobs = {
                "context_tokens": context,
                "weight_bytes_per_param": weight_bytes,
                "shards": tp,
                "answer_tokens": answer,
                "utilization": utilization,
            }
            together = outcome(lambda: agent.ledgers(model, gpu, kv_bytes_per_value=FORMATS, **knobs))  # noqa: B023
            one_by_one = outcome(
                lambda: tuple(agent.ledger(model, gpu, kv_bytes_per_value=b, **knobs) for b in FORMATS)  # noqa: B023
            )
            assert together == one_by_one, (model.id, gpu.id, knobs)  # every field, to the last bit
            compared += isinstance(together, tuple)
    assert compared > 100


def test_one_format_at_once_is_that_formats_ledger(models, gpus):
    model, gpu = models["llama-3.1-70b"], gpus["h100-sxm"]
    (fp8,) = agent.ledgers(model, gpu, context_tokens=1_000_000, kv_bytes_per_value=[1.0], shards=8)
    assert fp8 == agent.ledger(model, gpu, context_tokens=1_000_000, kv_bytes_per_value=1.0, shards=8)


def test_no_format_at_all_is_an_input_error(models, gpus):
    with pytest.raises(kv.KvError) as raised:
        agent.ledgers(models["llama-3.1-70b"], gpus["h100-sxm"], context_tokens=1_000, kv_bytes_per_value=[])
    assert raised.value.code == "no_cache_formats"
