"""vLLM's start-up rules by release (kvcore.vllm_versions) and the estimate built on them (kvcore.vllm_pool).

Every expectation names the vLLM file it was read in (the wheels of the releases named).
"""

from __future__ import annotations

import pytest

import kvcore
from kvcore.units import GiB


@pytest.fixture(scope="module")
def models():
    return kvcore.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kvcore.load_gpus()


@pytest.mark.parametrize(
    ("version", "engine", "era"),
    [
        ("0.5.5", "V0", "V0"),
        ("0.6.4.post1", "V0", "V0"),
        ("0.7.3", "V0", "V0"),  # VLLM_USE_V1 defaulted to "0" until 0.8.0 (vllm/envs.py)
        ("0.8.0", "V1", "early V1"),
        ("0.8.5.post1", "V1", "early V1"),
        ("0.9.2", "V1", "V1"),
        ("0.10.2rc2.dev61+ge9b92dcd8", "V1", "V1"),
        ("0.33.0", "V1", "V1"),
    ],
)
def test_each_release_maps_to_its_engine_and_era(version, engine, era):
    release = kvcore.vllm_release(version)
    assert (release.engine, release.era) == (engine, era)


@pytest.mark.parametrize("text", ["", "latest", "2.0", "0.0.9"])
def test_a_text_that_is_no_release_is_an_error(text):
    with pytest.raises(kvcore.KvError) as raised:
        kvcore.parse_release(text)
    assert raised.value.code == "unknown_vllm_version"


def test_a_pre_ampere_gpu_or_an_fp8_cache_falls_back_to_v0_in_0_8(gpus):
    # vllm/engine/arg_utils.py _is_v1_supported_oracle (0.8.0): compute capability < 8.0, kv_cache_dtype != auto
    assert kvcore.vllm_release("0.8.2", gpu=gpus["t4"]).engine == "V0"
    assert kvcore.vllm_release("0.8.2", kv_dtype="fp8").engine == "V0"
    assert kvcore.vllm_release("0.8.2", gpu=gpus["a100-80gb"]).engine == "V1"
    assert kvcore.vllm_release("0.10.0", gpu=gpus["t4"]).engine == "V1"


def test_non_torch_memory_is_the_whole_devices_only_in_0_6_4_and_early_v1():
    assert kvcore.vllm_release("0.6.4.post1").non_torch == "device"  # E2 (worker.py 0.6.4)
    assert kvcore.vllm_release("0.6.6").non_torch == "growth"  # E3 memory_profiling(baseline)
    assert kvcore.vllm_release("0.8.5").non_torch == "device"  # V1 gpu_worker.py E2 up to 0.8.5.post1
    assert kvcore.vllm_release("0.9.2").non_torch == "growth"
    assert not kvcore.vllm_release("0.10.2").nccl_in_baseline
    assert kvcore.vllm_release("0.11.0").nccl_in_baseline  # init_device: distributed init before the snapshot


@pytest.mark.parametrize(
    ("version", "gpu_id", "entry", "expected"),
    [
        ("0.6.4.post1", "rtx-3090", "serve", (20000, 256)),  # max(max_model_len, 2048), V0
        ("0.7.3", "h100-sxm", "serve", (20000, 256)),  # V0 is the default engine of 0.7
        ("0.8.4", "h100-sxm", "serve", (8192, 1024)),  # "h100" in the device name (0.7.0–0.8.4)
        ("0.8.3", "a100-80gb", "serve", (2048, 1024)),
        ("0.8.4", "a100-80gb", "serve", (2048, 256)),  # 0.8.4: 256 sequences off H100/H200
        ("0.8.5", "a100-80gb", "llm", (16384, 1024)),  # ≥ 70 GiB from 0.8.5, A100 not yet excluded
        ("0.9.2", "a100-80gb", "serve", (2048, 256)),  # "a100" not in device_name (0.9 on)
        ("0.27.0", "b200", "serve", (8192, 1024)),
        ("0.28.0", "b200", "serve", (16384, 1024)),  # the ≥ 160 GiB tier
        ("0.33.0", "h200", "serve", (8192, 1024)),  # 141 GiB stays in the ≥ 70 GiB tier
        ("0.33.0", "rtx-4090", "llm", (8192, 256)),
    ],
)
def test_batch_defaults_follow_the_release_the_gpu_and_the_entry_point(gpus, version, gpu_id, entry, expected):
    release = kvcore.vllm_release(version, gpu=gpus[gpu_id])
    assert kvcore.batch_defaults(release, gpu=gpus[gpu_id], entry=entry, max_model_len=20000) == expected


def test_v0_turns_chunked_prefill_on_past_32k_with_its_releases_budget(gpus):
    gpu = gpus["a100-80gb"]
    assert kvcore.batch_defaults(kvcore.vllm_release("0.6.4"), gpu=gpu, max_model_len=65536) == (512, 256)
    assert kvcore.batch_defaults(kvcore.vllm_release("0.6.6"), gpu=gpu, max_model_len=65536) == (2048, 256)


def test_cuda_graphs_come_off_the_pool_from_0_20_except_eager_and_model_runner_v2(models):
    dense, moe = models["llama-3.1-8b"], models["qwen3-30b-a3b"]
    assert not kvcore.vllm_release("0.19.1", model=dense).cuda_graphs_subtracted  # estimate opt-in (env "0")
    assert kvcore.vllm_release("0.20.0", model=dense).cuda_graphs_subtracted  # env default "1"
    assert not kvcore.vllm_release("0.20.0", model=dense, enforce_eager=True).cuda_graphs_subtracted
    assert not kvcore.vllm_release("0.26.0", model=dense).cuda_graphs_subtracted  # MRV2: estimate 0
    assert kvcore.vllm_release("0.26.0", model=moe).cuda_graphs_subtracted  # MoE stays on the V1 runner
    assert kvcore.vllm_release("0.29.0", model=dense).cuda_graphs_subtracted  # MRV2 estimates too


def test_the_printed_size_and_the_fit_check_change_where_vllm_changed_them():
    assert kvcore.vllm_release("0.19.1").printed_tokens == "blocks"
    assert kvcore.vllm_release("0.20.0").printed_tokens == "concurrency"  # int(concurrency · max_model_len)
    assert not kvcore.vllm_release("0.28.0").null_block_in_fit
    assert kvcore.vllm_release("0.29.0").null_block_in_fit
    assert kvcore.vllm_release("0.25.1").in_flight_batches == 1
    assert kvcore.vllm_release("0.26.0").in_flight_batches == 2  # async scheduling: W − 1 + 2 · chunk
    assert kvcore.vllm_release("0.26.0", pp=2).in_flight_batches == 1


def test_flashinfers_sampler_is_the_default_from_0_21_on_ampere_and_newer(gpus):
    assert not kvcore.vllm_release("0.20.0", gpu=gpus["a100-80gb"]).flashinfer_sampler
    assert kvcore.vllm_release("0.21.0", gpu=gpus["a100-80gb"]).flashinfer_sampler
    assert not kvcore.vllm_release("0.21.0", gpu=gpus["t4"]).flashinfer_sampler


def test_the_budget_parts_sum_to_the_card_and_name_their_release(models, gpus):
    start = kvcore.vllm_startup(models["qwen3-8b"], gpus["h100-sxm"], version="0.33.0", max_model_len=32768)
    budget = start.log.budget
    assert sum(budget.as_dict().values()) - budget.memory_bytes == pytest.approx(budget.memory_bytes, rel=1e-9) or (
        budget.held_back_bytes + budget.taken_bytes + budget.kv_pool_bytes == pytest.approx(budget.memory_bytes)
    )
    assert budget.memory_bytes == gpus["h100-sxm"].reported_memory_bytes
    assert all("0.33.0" in term.source for term in budget.terms)
    assert budget.term_bytes("cuda_graphs") > 0


def test_enforce_eager_frees_the_graphs_estimate_in_recent_releases(models, gpus):
    model, gpu = models["qwen3-8b"], gpus["h100-sxm"]
    graphs = kvcore.vllm_startup(model, gpu, version="0.33.0", max_model_len=32768)
    eager = kvcore.vllm_startup(model, gpu, version="0.33.0", max_model_len=32768, enforce_eager=True)
    assert eager.log.kv_pool_bytes - graphs.log.kv_pool_bytes == pytest.approx(
        graphs.log.budget.term_bytes("cuda_graphs")
    )


def test_a_quantised_checkpoint_keeps_its_embeddings_and_head_in_16_bits(models):
    llama = models["llama-3.1-8b"]
    int4 = kvcore.checkpoint_weights(llama, weights_dtype="awq-int4")
    assert int4.embeddings_bytes == 2 * 128256 * 4096 * 2.0  # two untied 128,256 × 4,096 tables in BF16
    naive = llama.total_params * kvcore.CHECKPOINT_FORMATS["int4"][0]
    assert int4.total_bytes > naive * 1.3


def test_mxfp4_experts_load_padded_as_vllms_kernels_lay_them_out(models):
    # "Model loading took 13.72 GiB" (vLLM 0.19.0, A100) and 17.2217 GiB per GPU at tp 4 (vLLM 0.10.1.1)
    assert kvcore.loaded_weights_bytes(models["gpt-oss-20b"]) / GiB == pytest.approx(13.72, rel=0.01)
    assert kvcore.loaded_weights_bytes(models["gpt-oss-120b"], tp=4) / GiB == pytest.approx(17.22, rel=0.01)


def test_the_rotary_table_is_part_of_what_loading_takes(models):
    # vLLM #10517: "Loading model weights took 14.9888 GB" (GiB) for Llama 3.1 8B in BF16
    assert kvcore.loaded_weights_bytes(models["llama-3.1-8b"]) / GiB == pytest.approx(14.9888, abs=0.001)


def test_mla_models_get_the_block_size_of_their_backend(models, gpus):
    release = kvcore.vllm_release("0.33.0")
    assert kvcore.vllm_block_size(models["deepseek-v3"], gpu=gpus["h100-sxm"], release=release) == 64
    assert kvcore.vllm_block_size(models["deepseek-v3"], gpu=gpus["b200"], release=release) == 128
    assert kvcore.vllm_block_size(models["llama-3.1-8b"], gpu=gpus["h100-sxm"], release=release) == 16


def test_the_sampler_profile_is_38_bytes_a_logit_or_14_with_flashinfer(models, gpus):
    model = models["llama-3.2-3b"]
    release = kvcore.vllm_release("0.8.2", gpu=gpus["t4"])
    peak = kvcore.profile_activation_bytes(model, release=release, max_num_batched_tokens=2048, max_num_seqs=192)
    # vLLM 0.8.2 V0 on a T4 (HF cookbook log): "PyTorch activation peak memory takes 0.90GiB"
    assert peak / GiB == pytest.approx(0.90, abs=0.03)
    v1 = kvcore.vllm_release("0.10.1.1")
    torch_sort = kvcore.profile_activation_bytes(model, release=v1, max_num_batched_tokens=2048, max_num_seqs=256)
    flashinfer = kvcore.profile_activation_bytes(
        model, release=v1, max_num_batched_tokens=2048, max_num_seqs=256, flashinfer_sampler=True
    )
    assert flashinfer < torch_sort


def test_a_model_without_vocabulary_or_widths_still_gets_an_estimate(gpus):
    custom = kvcore.uniform_model(
        num_hidden_layers=32, num_key_value_heads=8, head_dim=128, num_attention_heads=32, total_params=8e9
    )
    start = kvcore.vllm_startup(custom, gpus["h100-sxm"], max_model_len=8192)
    assert start.log.kv_pool_bytes > 0


def test_sliding_and_full_layers_get_their_own_groups_padded_to_one_size(models, gpus):
    # Gemma 3 27B: 10 full and 52 sliding layers (window 1,024) → groups of 10: one full group and
    # six sliding ones, the last padded (vllm/v1/core/kv_cache_utils.py, 0.9 on). Async scheduling
    # (0.26 on) keeps two batches in flight beside the window.
    model = models["gemma-3-27b"]
    start = kvcore.vllm_startup(model, gpus["h100-sxm"], version="0.33.0", max_model_len=32768)
    chunk = 2 * start.max_num_batched_tokens
    need = 32768 // 16 + 6 * (-(-min(1024 - 1 + chunk, 32768) // 16) + 1)
    assert start.log.max_concurrency == pytest.approx(start.log.num_blocks / need)
    assert start.printed_tokens == int(start.log.max_concurrency * 32768)  # 0.20 on


def test_before_0_9_a_sliding_layer_pays_for_the_whole_context(models, gpus):
    # 0.8.3–0.8.5 unify_hybrid_kv_cache_specs turned sliding layers into full ones when both kinds exist
    model, gpu = models["gemma-3-27b"], gpus["h100-sxm"]
    early = kvcore.vllm_startup(model, gpu, version="0.8.5", max_model_len=32768)
    later = kvcore.vllm_startup(model, gpu, version="0.9.2", max_model_len=32768)
    assert later.log.max_concurrency > early.log.max_concurrency
