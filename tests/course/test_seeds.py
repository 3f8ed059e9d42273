"""The seed's figures are its rounded words: each is near what kvcore computes for the seed's own scenario.

And the lessons' one-click scenarios (course.scenarios) are well-formed data that set the seeds' figures.
"""

from __future__ import annotations

import pytest

import kvcore
from course import scenarios, seeds
from course.lessons import LESSON_STEMS
from course.seeds import SEED_004, SHAREGPT_ON_OPT
from kvcore.units import GB, GiB

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


# ---------------------------------------------------------------- seed 000: its figures are exact binary values

SEED_000_MODEL = MODELS[seeds.SEED_000_MODEL_ID]


def test_the_seed_000_model_has_the_shape_the_seed_describes():
    # "32 camadas, 8 cabeças de KV, d_head = 128, em FP16"
    shape = (SEED_000_MODEL.num_hidden_layers, SEED_000_MODEL.num_key_value_heads, SEED_000_MODEL.head_dim)
    assert shape == (32, 8, 128)


@pytest.mark.parametrize("row", seeds.SEED_000_TABLE, ids=lambda row: f"{row.num_key_value_heads}kv-{row.kv_dtype}")
def test_each_row_of_seed_000s_table_is_what_kvcore_computes(row):
    # 2 · 32 · 8 · 128 · 2 = 131,072 B = 128 KiB; · 8,192 tokens = 1 GiB: the seed's binary units are exact
    spec = kvcore.with_changes(SEED_000_MODEL, num_key_value_heads=row.num_key_value_heads)
    b = kvcore.bytes_per_value(row.kv_dtype)
    assert kvcore.kv_bytes_per_token(spec, bytes_per_value=b) == row.per_token_bytes
    computed = [
        float(kvcore.kv_cache_bytes(spec, context_tokens=s, bytes_per_value=b)) for s in seeds.SEED_000_CONTEXT_TOKENS
    ]
    assert computed == list(row.cache_bytes)


def test_the_seed_000_step_is_the_thousandth_token_recomputing_the_999_before_it():
    step = seeds.SEED_000_RECOMPUTE_TOKENS
    assert (
        float(kvcore.projections_at_step(step, cached=False)) - float(kvcore.projections_at_step(step, cached=True))
        == 999
    )


def test_one_pdf_of_the_outage_is_the_seeds_2_5_gib_and_two_overflow_the_room():
    outage = seeds.SEED_000_OUTAGE
    b = kvcore.bytes_per_value(outage.kv_dtype)
    pdf = float(kvcore.sequence_kv_bytes(SEED_000_MODEL, context_tokens=outage.pdf_tokens, bytes_per_value=b))
    assert pdf == outage.pdf_bytes  # 20,480 · 128 KiB = 2.5 GiB
    assert outage.pdf_tokens == pytest.approx(seeds.SEED_000_PDF_TOKENS, rel=0.03)  # "uns 20 mil tokens"
    room = kvcore.kv_budget_bytes(memory_bytes=outage.card_bytes, utilization=1.0, weights_bytes=outage.weights_bytes)
    assert int(kvcore.max_users(kv_pool_bytes=room, sequence_bytes=pdf)) < outage.users  # 3 GiB hold one PDF


def test_the_real_outage_server_spends_the_seeds_9_gb_on_weights_and_overhead():
    server = seeds.SEED_000_OUTAGE_SERVER
    weights = kvcore.model_weights_bytes(
        MODELS[server.model_id], bytes_per_param=kvcore.bytes_per_value(server.weights_dtype)
    )
    # 7.48 GiB of INT8 weights + 1.5 GiB of overhead = 8.98 GiB, the seed's "9 GB"
    assert weights + server.overhead_bytes == pytest.approx(seeds.SEED_000_OUTAGE.weights_bytes, rel=0.01)
    assert GPUS[server.gpu_id].memory_bytes == seeds.SEED_000_OUTAGE.card_bytes  # "uma placa de 12 GB"
    assert 0.85 <= server.utilization <= 0.90  # "tipicamente entre 0,85 e 0,90"


def test_the_dashboards_long_user_takes_half_the_pool():
    dashboard = seeds.SEED_000_DASHBOARD
    assert dashboard.long_user_tokens / dashboard.pool_tokens == 0.5  # "consome metade do servidor inteiro"
    assert dashboard.long_user_tokens == seeds.SEED_000_CONTEXT_TOKENS[-1]  # "128 mil tokens"


# ---------------------------------------------------------------- seed 002


@pytest.mark.parametrize("row", seeds.SEED_002_CACHE_TABLE, ids=lambda row: f"{row.seed_name}-{row.context_tokens}")
def test_each_row_of_seed_002s_table_is_the_mha_cache_in_gib(row):
    # 2 × 32 × 4,096 × 4,096 × 2 = 2 GiB: every head cached in FP16, the seed's "GB" binary
    mha = float(kvcore.memory.mha_cache_bytes(MODELS[row.model_id], context_tokens=row.context_tokens))
    assert mha == row.says_gb * GiB


def test_seed_002s_story_is_its_weights_plus_its_table_on_six_h100s():
    story = seeds.SEED_002_STORY
    model, gpu = MODELS[story.model_id], GPUS[story.gpu_id]
    b = kvcore.bytes_per_value(story.dtype)
    weights = kvcore.model_weights_bytes(model, bytes_per_param=b)
    mha = float(kvcore.memory.mha_cache_bytes(model, context_tokens=story.context_tokens, bytes_per_value=b))
    assert weights == pytest.approx(story.says_weights_gb * GB, rel=0.01)  # 141.1 GB, "~140 GB"
    assert mha == story.says_cache_gb * GiB  # the table's 320
    assert story.says_total_gb == story.says_weights_gb + story.says_cache_gb
    assert int(kvcore.gpus_needed(total_bytes=weights + mha, memory_bytes=gpu.memory_bytes)) == story.says_gpus


def test_the_thirty_gb_model_weighs_about_30_gb():
    thirty = seeds.SEED_002_THIRTY_GB
    weights = kvcore.model_weights_bytes(
        MODELS[thirty.model_id], bytes_per_param=kvcore.bytes_per_value(thirty.weights_dtype)
    )
    assert weights == pytest.approx(30 * GB, rel=0.1)  # 32.5 B parameters · 1 byte = 32.5 GB


def test_seed_002s_gqa_table_is_the_shape_of_its_model():
    # "Q heads 32 | K/V heads 8": GQA keeps 8 / 32 = 25 % of the cache, "75 %" less
    model = MODELS[seeds.SEED_002_GQA_TABLE_MODEL_ID]
    assert (model.num_attention_heads, model.num_key_value_heads) == (32, 8)
    assert MODELS[seeds.SEED_002_MLA_MODEL_ID].attention_type == "MLA"


def test_the_sram_table_is_an_80_gb_h100_of_about_3_4_tb_s():
    gpu = GPUS[seeds.SEED_002_SRAM_GPU_ID]
    assert gpu.memory_bytes == 80 * GiB  # "80 GB", as the card reports it
    assert gpu.bandwidth_bytes_per_s == pytest.approx(3.4e12, rel=0.02)  # "~3.4 TB/s"


def test_the_prefix_scenario_is_the_seeds_100_requests_of_a_2000_token_prompt():
    scenario = seeds.SEED_002_PREFIX
    assert (scenario.requests, scenario.prefix_tokens) == (100, 2000)
    assert (scenario.ttl_s, scenario.read_price_fraction, scenario.write_price_fraction) == (300, 0.10, 1.0)
    assert scenario.interval_s < scenario.ttl_s  # every request finds the prefix still cached
    assert scenario.block_size == kvcore.DEFAULT_BLOCK_SIZE


# ---------------------------------------------------------------- the one-click scenarios


def test_every_lesson_with_scenarios_is_a_lesson_and_every_scenario_names_a_catalogue_text():
    assert set(scenarios.SCENARIOS) <= set(LESSON_STEMS)
    for stem, row in scenarios.SCENARIOS.items():
        for scenario in row:
            assert scenario.label_key.startswith(f"{stem}.preset_")
            assert scenario.help_key in (None, f"{scenario.label_key}_help")


@pytest.mark.parametrize("stem", sorted(scenarios.SCENARIOS))
def test_every_scenario_picks_a_model_and_a_gpu_of_the_catalogues(stem):
    for scenario in scenarios.SCENARIOS[stem]:
        assert scenario.values.get("model", seeds.SEED_000_MODEL_ID) in MODELS
        assert scenario.values.get("gpu", seeds.SEED_GPU_ID) in GPUS


def test_the_seed_scenarios_set_the_seeds_figures():
    assert scenarios.SIZING_SEED_000_OUTAGE["sz_context"] == seeds.SEED_000_OUTAGE.pdf_tokens
    assert scenarios.SIZING_SEED_000_OUTAGE["sz_overhead"] == 1.5  # GiB, the slider's unit
    assert scenarios.PREFIX_CACHING_SEED_002["pc_prefix"] == 2000
    assert scenarios.PAGED_ATTENTION_SHAREGPT["pa_mean"] == 499
    [pdf] = [s for s in scenarios.SCENARIOS["memory"] if s.label_key == "memory.preset_pdf"]
    assert (pdf.values["context"], pdf.values["concurrency"]) == (20_480, 2)


def test_the_scenarios_cannot_be_changed_by_a_session():
    with pytest.raises(TypeError):
        scenarios.SCENARIOS["why_cache"][0].values["wc_tokens"] = 1  # type: ignore[index]
