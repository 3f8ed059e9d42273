"""Golden values from the seed texts (../shared/seeds/) and public reports, each with its source.

seed 000 = "A métrica de ouro do marketing e a conta que ninguém faz" (KV sizing in production)
seed 002 = "KV Cache: Memória Eficiente" (course module)
seed 004 = "KV cache em agentes de 1 milhão de tokens" (1M-token agents)
"""

import pytest

import kvcore as kv
from kvcore.units import GB, GiB, KiB


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kv.load_gpus()


def seven_b(kv_heads: int):
    """Seed 000's 'typical 7-8B model': 32 layers, d_head 128."""
    return kv.uniform_model(num_hidden_layers=32, num_key_value_heads=kv_heads, head_dim=128, num_attention_heads=32)


def test_gqa_7b_costs_128_kib_per_token_in_fp16():
    # seed 000: 2 · 32 · 8 · 128 · 2 = 131,072 B = 128 KiB
    assert kv.kv_bytes_per_token(seven_b(8), bytes_per_value=2) == 131_072 == 128 * KiB


def test_the_same_model_without_gqa_costs_512_kib_per_token():
    # seed 000, table row "MHA clássico (32 cabeças KV), FP16": 512 KiB
    assert kv.kv_bytes_per_token(seven_b(32), bytes_per_value=2) == 512 * KiB


def test_fp8_kv_halves_it_to_64_kib():
    # seed 000, table row "GQA (8 cabeças KV), KV em FP8": 64 KiB
    assert kv.kv_bytes_per_token(seven_b(8), bytes_per_value=kv.bytes_per_value("fp8")) == 64 * KiB


@pytest.mark.parametrize(
    ("kv_heads", "dtype", "expected_gib"),
    [
        (32, "fp16", (4, 16, 64)),  # seed 000 table: MHA
        (8, "fp16", (1, 4, 16)),  # seed 000 table: GQA
        (8, "fp8", (0.5, 2, 8)),  # seed 000 table: GQA + FP8
    ],
)
def test_seed_table_at_8k_32k_128k(kv_heads, dtype, expected_gib):
    contexts = [8 * 1024, 32 * 1024, 128 * 1024]
    got = kv.kv_cache_bytes(seven_b(kv_heads), context_tokens=contexts, bytes_per_value=kv.bytes_per_value(dtype))
    assert list(got / GiB) == list(expected_gib)


def test_two_forty_page_pdfs_need_about_4_9_gib(models):
    # seed 000: a 40-page PDF ≈ 20,000 tokens ≈ 2.5 GiB with GQA FP16; two users ≈ 5 GiB
    two = kv.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=20_000, concurrency=2)
    assert two == 2 * 20_000 * 131_072
    assert float(two) / GiB == pytest.approx(4.88, abs=0.01)


def test_a_12_gb_card_with_a_9_gb_model_fits_one_pdf_and_not_two():
    # seed 000: "Se a placa tem 12 GB e o modelo ocupa 9 GB, a conta já estourou antes do terceiro usuário"
    budget = kv.kv_budget_bytes(memory_bytes=12 * GiB, utilization=1.0, weights_bytes=9 * GiB)
    pdf = kv.kv_cache_bytes(seven_b(8), context_tokens=20_000)
    assert kv.max_users(kv_pool_bytes=budget, sequence_bytes=pdf) == 1


@pytest.mark.parametrize(
    ("layers", "d_model", "seed_4k_gib", "seed_128k_gib"),
    [(32, 4096, 2, 64), (80, 8192, 10, 320)],  # seed 002's table, "LLaMA 3 8B" and "LLaMA 3 70B"
)
def test_course_table_is_the_mha_figure(layers, d_model, seed_4k_gib, seed_128k_gib):
    # seed 002: KV = 2 × layers × seq_len × d_model × bytes, i.e. every head cached (MHA)
    mha = kv.uniform_model(num_hidden_layers=layers, num_key_value_heads=d_model // 128, head_dim=128)
    got = kv.kv_cache_bytes(mha, context_tokens=[4096, 131072]) / GiB
    assert list(got) == [seed_4k_gib, seed_128k_gib]


@pytest.mark.parametrize(
    ("model_id", "true_4k_gib", "true_128k_gib"), [("llama-3.1-8b", 0.5, 16), ("llama-3.1-70b", 1.25, 40)]
)
def test_real_llama_3_gqa_cache_is_a_quarter_of_the_course_table(models, model_id, true_4k_gib, true_128k_gib):
    # Llama 3 has 8 KV heads for 32 (8B) or 64 (70B) query heads: the real cache is 4× / 8× smaller
    got = kv.kv_cache_bytes(models[model_id], context_tokens=[4096, 131072]) / GiB
    assert list(got) == [true_4k_gib, true_128k_gib]


def test_70b_with_gqa_costs_327_680_bytes_per_token(models):
    # seed 004: 2 × 80 × 8 × 128 × 2 = 327,680 B ≈ 320 KB (it is 320 KiB)
    assert kv.kv_bytes_per_token(models["llama-3.1-70b"]) == 327_680 == 320 * KiB


def test_70b_without_gqa_would_cost_2_621_440_bytes_per_token(models):
    # seed 004: "Sem esse compartilhamento, seriam cerca de 2,6 MB por token" (64 heads)
    assert kv.mha_equivalent_bytes_per_token(models["llama-3.1-70b"]) == 2_621_440


def test_70b_fp8_cache_is_163_840_and_int4_a_quarter(models):
    # seed 004: fp8 "de 320 KB para 160 KB"; int4 "um quarto"
    m = models["llama-3.1-70b"]
    assert kv.kv_bytes_per_token(m, bytes_per_value=kv.bytes_per_value("fp8")) == 163_840
    assert kv.kv_bytes_per_token(m, bytes_per_value=kv.bytes_per_value("int4")) == 327_680 / 4


def test_a_million_tokens_of_70b_cache_is_327_68_gb(models):
    # seed 004: "um milhão de tokens ... na ordem de 320 GB" — exactly 327.68 GB = 305.2 GiB
    total = kv.kv_cache_bytes(models["llama-3.1-70b"], context_tokens=1_000_000)
    assert float(total) / GB == pytest.approx(327.68)
    assert float(total) / GiB == pytest.approx(305.18, abs=0.01)


def test_streaming_it_takes_about_98_ms_on_an_h100(models, gpus):
    # seed 004: "~3,35 TB/s ... ~95 ms por token" (the seed divides 320 GB; 327.68 GB gives 97.8 ms)
    read = kv.decode_bytes_per_step(models["llama-3.1-70b"], context_tokens=1_000_000, weights_bytes=0)
    step = kv.decode_step_s(read.total, bandwidth_bytes_per_s=gpus["h100-sxm"].bandwidth_bytes_per_s)
    assert float(step) == pytest.approx(0.0978, abs=0.0001)


def test_sharding_over_8_gpus_takes_about_12_ms(models, gpus):
    # seed 004: "Fragmentar o cache em 8 GPUs derruba o piso para ~12 ms por token"
    read = kv.decode_bytes_per_step(models["llama-3.1-70b"], context_tokens=1_000_000, weights_bytes=0, gpus=8)
    step = kv.decode_step_s(read.total, bandwidth_bytes_per_s=gpus["h100-sxm"].bandwidth_bytes_per_s, gpus=8)
    assert float(read.total) == 327.68e9  # 8 KV heads over 8 GPUs: nothing replicated
    assert float(step) == pytest.approx(0.01222, abs=0.0001)


def test_a_1000_token_answer_streams_about_98_seconds_of_kv(models, gpus):
    # seed 004: "uma resposta de 1.000 tokens carrega ~95 segundos de streaming puro de KV"
    read = kv.decode_bytes_per_step(models["llama-3.1-70b"], context_tokens=1_000_000, weights_bytes=0)
    step = kv.decode_step_s(read.total, bandwidth_bytes_per_s=gpus["h100-sxm"].bandwidth_bytes_per_s)
    assert 1000 * float(step) == pytest.approx(97.8, abs=0.1)


def test_70b_at_1m_tokens_needs_6_gpus_just_to_fit(models, gpus):
    # seed 004: "~140 GB dos pesos em fp16 ... São necessárias de 6 a 8 GPUs só para caber"
    m = models["llama-3.1-70b"]
    need = kv.weights_bytes(m.total_params) + float(kv.kv_cache_bytes(m, context_tokens=1_000_000))
    assert need / gpus["h100-sxm"].memory_bytes == pytest.approx(5.46, abs=0.01)  # → 6 GPUs at 100 %


def test_h100_ridge_point_is_about_295_flop_per_byte(gpus):
    # issue 2 / seed 004: "cerca de 300 FLOPs ... para cada byte"; 989.4 TFLOP/s ÷ 3.35 TB/s
    h100 = gpus["h100-sxm"]
    ridge = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)
    assert ridge == pytest.approx(295.3, abs=0.1)


def test_deepseek_v3_mla_caches_70_272_bytes_per_token_in_bf16(models):
    # DeepSeek-V3 config: 61 layers × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 B, no factor 2 for K and V
    assert kv.kv_bytes_per_token(models["deepseek-v3"]) == 61 * 576 * 2 == 70_272


def test_vllm_issue_10517_blocks_tokens_and_concurrency(models):
    # vLLM issue #10517 (Llama-3.1-8B, block size 16): "# GPU blocks: 1952", 31,232 tokens,
    # "Maximum concurrency for 20000 tokens per request: 1.56x". 1,952 blocks × 2 MiB = 3.8125 GiB (logged as 3.81).
    report = kv.pool_report(models["llama-3.1-8b"], kv_pool_bytes=3.8125 * GiB, max_model_len=20_000)
    assert (report.num_blocks, report.tokens) == (1952, 31_232)
    assert round(report.max_concurrency, 2) == 1.56
    assert report.fits


def test_recompute_without_cache_is_quadratic():
    # seed 002: "Para N tokens: recalcula N(N+1)/2 pares K/V"; with a cache "exatamente N"
    assert kv.kv_projections_without_cache(1000) == 500_500
    assert kv.kv_projections_with_cache(1000) == 1000


def test_gqa_and_mqa_savings_match_the_course_table():
    # seed 002: GQA 32 → 8 heads saves 75 %; MQA 32 → 1 saves 97 % (96.875 %)
    assert kv.saving_vs_mha(seven_b(8), context_tokens=1000) == 0.75
    assert kv.saving_vs_mha(seven_b(1), context_tokens=1000) == pytest.approx(0.96875)


def test_gpt_oss_120b_mxfp4_weights_fit_one_80_gb_gpu(models, gpus):
    # openai/gpt-oss README: gpt-oss-120b "fits into a single 80GB GPU (like NVIDIA H100 or AMD MI300X)"
    # thanks to MXFP4 MoE weights: 117 B × 4.25 bits = 62.2 GB (57.9 GiB). In BF16 it would need 218 GiB.
    oss = models["gpt-oss-120b"]
    assert oss.weights_dtype == "mxfp4"
    mxfp4 = kv.model_weights_bytes(oss, bytes_per_param=kv.bytes_per_value(oss.weights_dtype))
    assert mxfp4 / GiB == pytest.approx(57.9, abs=0.1)
    assert mxfp4 < gpus["h100-sxm"].memory_bytes < kv.model_weights_bytes(oss, bytes_per_param=2)


def test_deepseek_v3_ships_fp8_weights_of_671_gb(models):
    # DeepSeek-V3 README: FP8 weights, 671 B parameters → 671 GB (625 GiB)
    v3 = models["deepseek-v3"]
    assert v3.weights_dtype == "fp8"
    assert kv.model_weights_bytes(v3, bytes_per_param=kv.bytes_per_value("fp8")) == 671e9
