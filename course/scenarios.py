"""One-click scenarios: the presets each lesson offers above its controls, as data.

A scenario is a button: the catalogue keys of its label and help (i18n/*/<lesson>.json)
and the widget values a click sets. The values are keyed by the lesson's widget keys,
which are also its URL parameters; ``model`` and ``gpu`` are the sidebar's pickers
(ids of data/models.csv and data/gpus.csv). ``ui.lesson.scenario_buttons(stem)`` draws
``SCENARIOS[stem]``, in the order given here (page tests click them by position).

Every control of the page is either set by a scenario (``values``) or left to the
learner on purpose (``keeps``): a scenario clicked after another then shows exactly
what it shows on a fresh page (tests/app/test_presets.py holds every page to that).
A scenario that is meant not to fit (a story about running out of memory) names the
sentence that says so (``note_key``), shown at the top of the page while its values
are in place.

The figures come from the seed texts through ``course.seeds`` wherever a seed tells
the story; each help text (the ``help_key``) tells the learner where a scenario comes
from, and the comment beside it says the same for the reader of this file. The
preemption lesson's scenarios are simulator settings (``course.scheduler_presets``);
the vLLM log lesson's presets are its log excerpts (data/vllm_logs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from course import seeds
from kvcore.budget import DEFAULT_OVERHEAD_BYTES
from kvcore.timing import DEFAULT_MBU, TYPICAL_MBU, TYPICAL_MFU
from kvcore.units import GiB
from kvcore.variants import DEFAULT_MLA_RANK, DEFAULT_MLA_ROPE_DIM
from kvcore.vllm_versions import NEWEST_RELEASE as NEWEST_VLLM

__all__ = [
    "MEMORY_70B_GPUS",
    "PAGED_ATTENTION_SHAREGPT",
    "PREFIX_CACHING_SEED_002",
    "SCENARIOS",
    "SIZING_SEED_000_OUTAGE",
    "VLLM_POOL_ISSUE",
    "Scenario",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A lesson's one-click scenario: its button's label and help (catalogue keys) and the widget values it sets."""

    label_key: str
    values: Mapping[str, object]
    help_key: str | None = None
    #: Controls the scenario leaves as the learner set them, on purpose (a view switch, an unrelated experiment).
    keeps: frozenset[str] = frozenset()
    #: The catalogue key of "this does not fit, on purpose, because…", for a scenario meant not to fit.
    note_key: str | None = None


def _values(**values: object) -> Mapping[str, object]:
    """Widget key → value, read-only (a Streamlit server shares this module across every user)."""
    return MappingProxyType(values)


def _with(base: Mapping[str, object], **changes: object) -> Mapping[str, object]:
    """`base` with some values changed, read-only."""
    return MappingProxyType({**base, **changes})


# ---------------------------------------------------------------- values other code reads too (slider defaults)

#: The paged-attention pool: 262,144 token slots (vLLM prints it as "GPU KV cache size: N tokens").
_PAGED_POOL_TOKENS = 262_144
#: The vLLM paper's ShareGPT on OPT (``seeds.SHAREGPT_ON_OPT``) in that pool, as the paged-attention widgets' values.
PAGED_ATTENTION_SHAREGPT = _values(
    pa_mean=int(seeds.SHAREGPT_ON_OPT.mean_tokens),
    pa_spread=seeds.SHAREGPT_ON_OPT.spread,
    pa_max_len=seeds.SHAREGPT_ON_OPT.max_model_len,
    pa_block=seeds.SHAREGPT_ON_OPT.block_size,
    pa_requests=seeds.SHAREGPT_ON_OPT.n_requests,
    pa_pool=_PAGED_POOL_TOKENS,
    pa_seed=seeds.SHAREGPT_ON_OPT.seed,
)
#: Seed 002's 100 requests sharing a 2,000-token system prompt (``seeds.SEED_002_PREFIX``).
PREFIX_CACHING_SEED_002 = _values(
    pc_prefix=seeds.SEED_002_PREFIX.prefix_tokens,
    pc_suffix=seeds.SEED_002_PREFIX.suffix_tokens,
    pc_requests=seeds.SEED_002_PREFIX.requests,
    pc_block=seeds.SEED_002_PREFIX.block_size,
    pc_interval=seeds.SEED_002_PREFIX.interval_s,
    pc_ttl=seeds.SEED_002_PREFIX.ttl_s,
)
#: Seed 000's outage with real figures (``seeds.SEED_000_OUTAGE_SERVER``); the overhead slider is in GiB.
SIZING_SEED_000_OUTAGE = _values(
    model=seeds.SEED_000_OUTAGE_SERVER.model_id,
    gpu=seeds.SEED_000_OUTAGE_SERVER.gpu_id,
    sz_utilization=seeds.SEED_000_OUTAGE_SERVER.utilization,
    sz_users=seeds.SEED_000_OUTAGE_SERVER.users,
    sz_context=seeds.SEED_000_OUTAGE_SERVER.context_tokens,
    sz_kv_dtype=seeds.SEED_000_OUTAGE_SERVER.kv_dtype,
    sz_weights_dtype=seeds.SEED_000_OUTAGE_SERVER.weights_dtype,
    sz_overhead=seeds.SEED_000_OUTAGE_SERVER.overhead_bytes / GiB,
    sz_tp=seeds.SEED_000_OUTAGE_SERVER.tp,
)
#: vLLM issue #10517 (github.com/vllm-project/vllm/issues/10517): Llama 3.1 8B on a 24 GiB card with
#: max_model_len 20,000; vLLM's defaults otherwise (u = 0.90, 16-token blocks, no parallelism). Without chunked
#: prefill the profile run is max_model_len tokens long, so max_num_batched_tokens = 20,000 too.
VLLM_POOL_ISSUE = _values(
    model="llama-3.1-8b",
    gpu="rtx-3090",
    vp_version="0.6.4.post1",
    vp_utilization=0.90,
    vp_max_model_len=20000,
    vp_eager=False,
    vp_own_batch=False,
    vp_block_size="auto",
    vp_kv_dtype="bf16",
    vp_tp=1,
    vp_pp=1,
    vp_cp=1,
)
#: Seed 000's dashboard server: Llama 3.1 70B in FP8 on 2 × H100 at its "88 % of VRAM".
_SIZING_DASHBOARD = _values(
    model="llama-3.1-70b",
    gpu="h100-sxm",
    sz_utilization=seeds.SEED_000_DASHBOARD.memory_used_fraction,
    sz_users=16,
    sz_context=8192,
    sz_kv_dtype="bf16",
    sz_weights_dtype="fp8",
    sz_overhead=1.0,
    sz_tp=2,
)
#: Llama 3.1 8B in BF16 with its own head dim; "fa_values_model" (not a widget) names the model those belong to.
_FLASH_LLAMA = _values(model="llama-3.1-8b", fa_values_model="llama-3.1-8b", fa_head_dim=128, fa_dtype="bf16")
#: Seed 004's agent: Llama 3.1 70B with 1M tokens on H100s, sharded over 8, a BF16 cache, a 1,000-token answer and
#: the whole card, as the seed's ledger counts it.
_AGENT_SEED_004 = _values(
    model=seeds.SEED_MODEL_ID,
    gpu=seeds.SEED_GPU_ID,
    ag_context=seeds.SEED_CONTEXT_TOKENS,
    ag_gpus=seeds.SEED_SHARDS,
    ag_kv_dtype="bf16",
    ag_answer=seeds.SEED_ANSWER_TOKENS,
    ag_util=1.0,
)
#: The agent page's attention sample (concentration, share kept) is an experiment of its own: the learner's.
_AGENT_KEEPS = frozenset({"ag_concentration", "ag_keep"})
#: The memory calculator's architecture sliders at a Llama 3.1 model's own values (both have head dim 128;
#: 32 layers for 8B, 80 for 70B: data/models.csv), and the shared default overhead; the 8B on one GPU.
_MEMORY_8B = _values(
    mem_values_model=seeds.SEED_000_MODEL_ID,
    mem_head_dim=128,
    mem_layers=32,
    mem_overhead=DEFAULT_OVERHEAD_BYTES / GiB,
    mem_gpus=1,
)
#: Seed 002's 70B in FP16 at 128k on H100s: the fewest GPUs a tensor-parallel split holds it on
#: (kvcore.tensor_parallel_to_fit: 131.4 GiB / 2 + 20 GiB + 1 GiB = 86.7 GiB overflows 80 GiB on 2; on 4 each holds
#: 43.9 GiB). tests/app/test_page_memory.py checks it is still the fewest.
MEMORY_70B_GPUS = 4
_MEMORY_70B = _values(
    mem_values_model=seeds.SEED_002_STORY.model_id,
    mem_head_dim=128,
    mem_layers=80,
    mem_overhead=DEFAULT_OVERHEAD_BYTES / GiB,
)
#: The attention-variants page: MLA's latent at DeepSeek-V3's size unless a scenario says otherwise; the log axis
#: is a way of looking and the card is the learner's (the page compares bytes per token).
_VARIANTS_MLA = _values(av_rank=DEFAULT_MLA_RANK, av_rope=DEFAULT_MLA_ROPE_DIM)
_VARIANTS_KEEPS = frozenset({"av_log", "gpu"})
#: Prefill and decode at kvcore's typical efficiencies in BF16; the price of a GPU-hour is the learner's.
_PREFILL_TYPICAL = _values(pd_weights="bf16", pd_mfu=TYPICAL_MFU, pd_mbu=TYPICAL_MBU)
_PREFILL_KEEPS = frozenset({"pd_price"})
#: Paging and prefix sharing do not depend on the model's size: the sidebar's model and GPU stay the learner's
#: (they only scale the bytes); so do the provider's prices and shortest cacheable prompt on the prefix-caching page.
_SIDEBAR_KEEPS = frozenset({"model", "gpu"})
_PREFIX_KEEPS = _SIDEBAR_KEEPS | {"pc_price", "pc_read", "pc_write", "pc_min_cacheable"}
#: The quantization page's synthetic error demo (outlier scale, per-channel switch) is the learner's.
_QUANTIZATION_KEEPS = frozenset({"kq_outlier", "kq_per_channel"})
#: The why-cache grid at its default size; the log axis is a way of looking, the learner's.
_WHY_GRID_STEPS = 8
_WHY_KEEPS = frozenset({"wc_log"})


# ---------------------------------------------------------------- the compare page: two setups, every control of each


def _compare(a: Mapping[str, object], b: Mapping[str, object]) -> Mapping[str, object]:
    """The compare page's values: setup A's and B's model, gpu, gpus, weights, kv, context and users (all of each)."""
    return _values(
        **{f"cmp_{side}_{name}": value for side, setup in (("a", a), ("b", b)) for name, value in setup.items()}
    )


#: The sidebar's model and GPU: the compare page's setups are its own, so every scenario leaves them alone.
_COMPARE_KEEPS = frozenset({"model", "gpu"})
#: Llama 3.1 8B on an RTX 4090 (the sidebar's default), 4 users at 8k: the setup the KV-format scenario varies.
_COMPARE_8B = _values(model="llama-3.1-8b", gpu="rtx-4090", gpus=1, weights="bf16", kv="fp16", context=8192, users=4)
#: Llama 3.1 70B with FP8 weights (about 66 GiB: one H100 holds them) and 2 users at 8k, on one H100.
_COMPARE_70B = _values(model="llama-3.1-70b", gpu="h100-sxm", gpus=1, weights="fp8", kv="bf16", context=8192, users=2)


# ---------------------------------------------------------------- every lesson's row of buttons

SCENARIOS: Mapping[str, tuple[Scenario, ...]] = MappingProxyType(
    {
        "agent_1m": (
            # Seed 004's ledger as it counts it: BF16 cache, a 1,000-token answer, the whole card.
            Scenario(label_key="agent_1m.preset_seed", values=_AGENT_SEED_004, keeps=_AGENT_KEEPS),
            # Seed 004, "O que dá para fazer hoje": FP8 halves the bytes per token.
            Scenario(
                label_key="agent_1m.preset_fp8", values=_with(_AGENT_SEED_004, ag_kv_dtype="fp8"), keeps=_AGENT_KEEPS
            ),
            # MLA against the seed's GQA: DeepSeek-V3's latent at the same million tokens, on 8 H200s.
            Scenario(
                label_key="agent_1m.preset_mla",
                values=_with(_AGENT_SEED_004, model="deepseek-v3", gpu="h200"),
                keeps=_AGENT_KEEPS,
            ),
        ),
        "attention_variants": (
            # Seed 002's GQA/MQA table: 32 query heads and 32, 8 or 1 KV heads.
            Scenario(
                label_key="attention_variants.preset_seed002",
                help_key="attention_variants.preset_seed002_help",
                values=_with(
                    _VARIANTS_MLA,
                    model=seeds.SEED_002_GQA_TABLE_MODEL_ID,
                    av_gqa_heads=8,
                    av_context=4096,
                    av_users=1,
                    av_dtype="fp16",
                ),
                keeps=_VARIANTS_KEEPS,
            ),
            # Seed 000's table at 128k tokens: MHA 64 GiB, GQA 16 GiB.
            Scenario(
                label_key="attention_variants.preset_seed000",
                help_key="attention_variants.preset_seed000_help",
                values=_with(
                    _VARIANTS_MLA,
                    model=seeds.SEED_000_MODEL_ID,
                    av_gqa_heads=8,
                    av_context=seeds.SEED_000_CONTEXT_TOKENS[-1],
                    av_users=1,
                    av_dtype="fp16",
                ),
                keeps=_VARIANTS_KEEPS,
            ),
            # Seed 002's MLA, with DeepSeek-V3's own latent (rank 512 + 64 RoPE values). Its weights fit on no single
            # card, so no user fits on the page's one GPU: on purpose, the scenario is about bytes per token.
            Scenario(
                label_key="attention_variants.preset_deepseek",
                help_key="attention_variants.preset_deepseek_help",
                values=_with(
                    _VARIANTS_MLA,
                    model=seeds.SEED_002_MLA_MODEL_ID,
                    av_gqa_heads=8,
                    av_context=131072,
                    av_users=1,
                    av_dtype="bf16",
                ),
                keeps=_VARIANTS_KEEPS,
                note_key="attention_variants.note_deepseek",
            ),
            # Seed 002's MQA row ("Falcon"): 71 query heads share one K/V head.
            Scenario(
                label_key="attention_variants.preset_falcon",
                help_key="attention_variants.preset_falcon_help",
                values=_with(
                    _VARIANTS_MLA, model="falcon-7b", av_gqa_heads=1, av_context=2048, av_users=1, av_dtype="bf16"
                ),
                keeps=_VARIANTS_KEEPS,
            ),
        ),
        "compare": (
            # Seed 002's MHA against GQA: Llama 2 7B (32 KV heads) beside Llama 3 8B (8), same card and load.
            Scenario(
                label_key="compare.preset_mha",
                keeps=_COMPARE_KEEPS,
                help_key="compare.preset_mha_help",
                values=_compare(
                    _with(_COMPARE_8B, model="llama-2-7b", weights="fp16", kv="bf16", context=4096),
                    _with(_COMPARE_8B, model="llama-3-8b", kv="bf16", context=4096),
                ),
            ),
            # Seed 000's FP8 row: the same server, K and V in one byte instead of two.
            Scenario(
                label_key="compare.preset_fp8",
                keeps=_COMPARE_KEEPS,
                help_key="compare.preset_fp8_help",
                values=_compare(_COMPARE_8B, _with(_COMPARE_8B, kv="fp8")),
            ),
            # Seed 004's 70B on H100s: one card, then two by tensor parallelism.
            Scenario(
                label_key="compare.preset_tp",
                keeps=_COMPARE_KEEPS,
                help_key="compare.preset_tp_help",
                values=_compare(_COMPARE_70B, _with(_COMPARE_70B, gpus=2)),
            ),
        ),
        "decode_speed": (
            # A chat on a consumer card; seed 004's 70B at 128k on 8 H100s; a batch that moves toward the ridge.
            Scenario(
                label_key="decode_speed.preset_chat",
                values=_values(
                    model="llama-3.1-8b",
                    gpu="rtx-4090",
                    ds_context=8192,
                    ds_batch=1,
                    ds_tp=1,
                    ds_kv_dtype="bf16",
                    ds_weights_dtype="bf16",
                    ds_mbu=DEFAULT_MBU,
                ),
            ),
            Scenario(
                label_key="decode_speed.preset_70b",
                values=_values(
                    model="llama-3.1-70b",
                    gpu="h100-sxm",
                    ds_context=131072,
                    ds_batch=1,
                    ds_tp=8,
                    ds_kv_dtype="bf16",
                    ds_weights_dtype="bf16",
                    ds_mbu=DEFAULT_MBU,
                ),
            ),
            Scenario(
                label_key="decode_speed.preset_batch",
                values=_values(
                    model="llama-3.1-8b",
                    gpu="h100-sxm",
                    ds_context=32768,
                    ds_batch=32,
                    ds_tp=1,
                    ds_kv_dtype="bf16",
                    ds_weights_dtype="bf16",
                    ds_mbu=DEFAULT_MBU,
                ),
            ),
        ),
        "flash_attention": (
            # An 8k prompt, then 128k (the slider's top): seed 002's H100.
            Scenario(
                label_key="flash_attention.preset_8k",
                help_key="flash_attention.preset_8k_help",
                values=_with(_FLASH_LLAMA, gpu=seeds.SEED_002_SRAM_GPU_ID, fa_tokens=8192, fa_heads=32, fa_batch=1),
            ),
            Scenario(
                label_key="flash_attention.preset_128k",
                help_key="flash_attention.preset_128k_help",
                values=_with(_FLASH_LLAMA, gpu=seeds.SEED_002_SRAM_GPU_ID, fa_tokens=131072, fa_heads=32, fa_batch=1),
                note_key="flash_attention.note_128k",
            ),
            # Seed 002's SRAM vs HBM: one head of 4k tokens in BF16 is 32 MiB of scores, about the H100's SRAM.
            Scenario(
                label_key="flash_attention.preset_sram",
                help_key="flash_attention.preset_sram_help",
                values=_with(_FLASH_LLAMA, gpu=seeds.SEED_002_SRAM_GPU_ID, fa_tokens=4096, fa_heads=1, fa_batch=1),
            ),
        ),
        "kv_quantization": (
            # Seed 000's FP8 row at 128k tokens.
            Scenario(
                label_key="kv_quantization.preset_seed000",
                help_key="kv_quantization.preset_seed000_help",
                values=_values(
                    model=seeds.SEED_000_MODEL_ID,
                    gpu=seeds.SEED_GPU_ID,
                    kq_context=seeds.SEED_000_CONTEXT_TOKENS[-1],
                    kq_users=1,
                    kq_group=128,
                    kq_weights="bf16",
                ),
                keeps=_QUANTIZATION_KEEPS,
            ),
            # Seed 004's million tokens: 1,000,000, as the course texts and /agent_1m count a million (not 2**20); the
            # slider steps by 1,024 and holds it between two steps. The 70B's BF16 weights leave no room for any cache
            # on one H100 (the page has one card): on purpose, the scenario compares the bytes of each format.
            Scenario(
                label_key="kv_quantization.preset_seed004",
                help_key="kv_quantization.preset_seed004_help",
                values=_values(
                    model=seeds.SEED_MODEL_ID,
                    gpu=seeds.SEED_GPU_ID,
                    kq_context=seeds.SEED_CONTEXT_TOKENS,
                    kq_users=1,
                    kq_group=128,
                    kq_weights="bf16",
                ),
                keeps=_QUANTIZATION_KEEPS,
                note_key="kv_quantization.note_seed004",
            ),
            # Seed 000's 12 GB card, with users of 8k tokens.
            Scenario(
                label_key="kv_quantization.preset_12gb",
                help_key="kv_quantization.preset_12gb_help",
                values=_values(
                    model=seeds.SEED_000_MODEL_ID,
                    gpu=seeds.SEED_000_OUTAGE_SERVER.gpu_id,
                    kq_context=8192,
                    kq_users=1,
                    kq_group=128,
                    kq_weights="int8",
                ),
                keeps=_QUANTIZATION_KEEPS,
            ),
        ),
        "memory": (
            # Seed 000's outage: two 20k-token PDFs on a 12 GB card (on purpose, the cache does not fit).
            Scenario(
                label_key="memory.preset_pdf",
                help_key="memory.preset_pdf_help",
                note_key="memory.note_pdf",
                values=_with(
                    _MEMORY_8B,
                    model=seeds.SEED_000_MODEL_ID,
                    gpu=seeds.SEED_000_OUTAGE_SERVER.gpu_id,
                    context=seeds.SEED_000_OUTAGE.pdf_tokens,
                    concurrency=seeds.SEED_000_OUTAGE.users,
                    kv_heads=8,
                    kv_dtype=seeds.SEED_000_OUTAGE.kv_dtype,
                    weights_dtype=seeds.SEED_000_OUTAGE_SERVER.weights_dtype,
                ),
            ),
            # Seed 000's table at 128k: GQA (8 KV heads), then classic MHA (32).
            Scenario(
                label_key="memory.preset_gqa",
                help_key="memory.preset_gqa_help",
                values=_with(
                    _MEMORY_8B,
                    model=seeds.SEED_000_MODEL_ID,
                    gpu="h100-sxm",
                    context=seeds.SEED_000_CONTEXT_TOKENS[-1],
                    concurrency=1,
                    kv_heads=seeds.SEED_000_GQA_ROW.num_key_value_heads,
                    kv_dtype="fp16",
                    weights_dtype="bf16",
                ),
            ),
            Scenario(
                label_key="memory.preset_mha",
                help_key="memory.preset_mha_help",
                values=_with(
                    _MEMORY_8B,
                    model=seeds.SEED_000_MODEL_ID,
                    gpu="h100-sxm",
                    context=seeds.SEED_000_CONTEXT_TOKENS[-1],
                    concurrency=1,
                    kv_heads=seeds.SEED_000_MHA_ROW.num_key_value_heads,
                    kv_dtype="fp16",
                    weights_dtype="bf16",
                ),
            ),
            # Seed 002's one-user story: 70B in FP16 at 128k, split over the fewest H100s that hold it.
            Scenario(
                label_key="memory.preset_70b",
                help_key="memory.preset_70b_help",
                values=_with(
                    _MEMORY_70B,
                    mem_gpus=MEMORY_70B_GPUS,
                    model=seeds.SEED_002_STORY.model_id,
                    gpu=seeds.SEED_002_STORY.gpu_id,
                    context=seeds.SEED_002_STORY.context_tokens,
                    concurrency=1,
                    kv_heads=8,
                    kv_dtype=seeds.SEED_002_STORY.dtype,
                    weights_dtype=seeds.SEED_002_STORY.dtype,
                ),
            ),
        ),
        "paged_attention": (
            Scenario(
                label_key="paged_attention.preset_sharegpt",
                help_key="paged_attention.preset_sharegpt_help",
                values=PAGED_ATTENTION_SHAREGPT,
                keeps=_SIDEBAR_KEEPS,
            ),
            # Seed 000's "300 tokens" against a 128k reservation: short chats on a long-context model.
            Scenario(
                label_key="paged_attention.preset_128k",
                help_key="paged_attention.preset_128k_help",
                values=_with(PAGED_ATTENTION_SHAREGPT, pa_mean=800, pa_spread=1.0, pa_max_len=131072, pa_pool=1048576),
                keeps=_SIDEBAR_KEEPS,
            ),
            Scenario(
                label_key="paged_attention.preset_block_128",
                help_key="paged_attention.preset_block_128_help",
                values=_with(PAGED_ATTENTION_SHAREGPT, pa_block=128),
                keeps=_SIDEBAR_KEEPS,
            ),
        ),
        "prefill_decode": (
            # A chat, a long summary, a batch of 64: Llama 3.1 8B on an H100 SXM.
            Scenario(
                label_key="prefill_decode.preset_chat",
                help_key="prefill_decode.preset_chat_help",
                values=_with(
                    _PREFILL_TYPICAL,
                    model="llama-3.1-8b",
                    gpu="h100-sxm",
                    pd_prompt=1024,
                    pd_output=300,
                    pd_batch=1,
                ),
                keeps=_PREFILL_KEEPS,
            ),
            Scenario(
                label_key="prefill_decode.preset_summary",
                help_key="prefill_decode.preset_summary_help",
                values=_with(
                    _PREFILL_TYPICAL,
                    model="llama-3.1-8b",
                    gpu="h100-sxm",
                    pd_prompt=32768,
                    pd_output=500,
                    pd_batch=1,
                ),
                keeps=_PREFILL_KEEPS,
            ),
            Scenario(
                label_key="prefill_decode.preset_batch",
                help_key="prefill_decode.preset_batch_help",
                values=_with(
                    _PREFILL_TYPICAL,
                    model="llama-3.1-8b",
                    gpu="h100-sxm",
                    pd_prompt=1024,
                    pd_output=300,
                    pd_batch=64,
                ),
                keeps=_PREFILL_KEEPS,
            ),
            # Seed 004's "cerca de 300 FLOPs ... para cada byte": the datasheet's full speed (MFU = MBU = 1). The seed's
            # 70B in BF16 does not fit on one H100: on purpose, the ridge is the GPU's, whatever the model.
            Scenario(
                label_key="prefill_decode.preset_ridge",
                help_key="prefill_decode.preset_ridge_help",
                keeps=_PREFILL_KEEPS,
                note_key="prefill_decode.note_ridge",
                values=_values(
                    model=seeds.SEED_MODEL_ID,
                    gpu=seeds.SEED_GPU_ID,
                    pd_prompt=1024,
                    pd_output=300,
                    pd_batch=1,
                    pd_weights="bf16",
                    pd_mfu=1.0,
                    pd_mbu=1.0,
                ),
            ),
        ),
        "prefix_caching": (
            Scenario(
                label_key="prefix_caching.preset_seed",
                help_key="prefix_caching.preset_seed_help",
                values=PREFIX_CACHING_SEED_002,
                keeps=_PREFIX_KEEPS,
            ),
            # A prefix shorter than one block shares nothing; requests slower than the seed's 5-minute TTL miss.
            Scenario(
                label_key="prefix_caching.preset_short",
                help_key="prefix_caching.preset_short_help",
                values=_with(PREFIX_CACHING_SEED_002, pc_prefix=12),
                keeps=_PREFIX_KEEPS,
            ),
            Scenario(
                label_key="prefix_caching.preset_slow",
                help_key="prefix_caching.preset_slow_help",
                values=_with(PREFIX_CACHING_SEED_002, pc_interval=600),
                keeps=_PREFIX_KEEPS,
            ),
        ),
        "sizing": (
            # The outage: on purpose, the two PDFs ask for more cache than the pool holds.
            Scenario(
                label_key="sizing.preset_pdf",
                help_key="sizing.preset_pdf_help",
                values=SIZING_SEED_000_OUTAGE,
                note_key="sizing.note_pdf",
            ),
            # Seed 000's dashboard, then its one user of 128k tokens on the same server.
            Scenario(
                label_key="sizing.preset_dashboard",
                help_key="sizing.preset_dashboard_help",
                values=_SIZING_DASHBOARD,
            ),
            Scenario(
                label_key="sizing.preset_long_user",
                help_key="sizing.preset_long_user_help",
                values=_with(_SIZING_DASHBOARD, sz_users=1, sz_context=seeds.SEED_000_DASHBOARD.long_user_tokens),
            ),
        ),
        "vllm_pool": (
            Scenario(
                label_key="vllm_pool.preset_issue", help_key="vllm_pool.preset_issue_help", values=VLLM_POOL_ISSUE
            ),
            Scenario(
                label_key="vllm_pool.preset_issue_29k",
                help_key="vllm_pool.preset_issue_29k_help",
                values=_with(VLLM_POOL_ISSUE, vp_max_model_len=29000),
                note_key="vllm_pool.note_issue_29k",
            ),
            # Tensor parallelism: seed 004's 70B over 4 H100s; DeepSeek-V3's latent replicated over 8 H200s.
            Scenario(
                label_key="vllm_pool.preset_70b",
                help_key="vllm_pool.preset_70b_help",
                values=_with(
                    VLLM_POOL_ISSUE,
                    model="llama-3.1-70b",
                    gpu="h100-sxm",
                    vp_version=NEWEST_VLLM,
                    vp_max_model_len=131072,
                    vp_tp=4,
                ),
            ),
            Scenario(
                label_key="vllm_pool.preset_deepseek",
                help_key="vllm_pool.preset_deepseek_help",
                values=_with(
                    VLLM_POOL_ISSUE,
                    model="deepseek-v3",
                    gpu="h200",
                    vp_version=NEWEST_VLLM,
                    vp_max_model_len=131072,
                    vp_tp=8,
                ),
            ),
        ),
        "why_cache": (
            # Eight tokens to count by hand; seed 000's token 1,000; seed 000's 40-page PDF on its 12 GB card.
            Scenario(
                label_key="why_cache.preset_small",
                help_key="why_cache.preset_small_help",
                values=_values(wc_tokens=8, wc_steps=_WHY_GRID_STEPS),
                keeps=_SIDEBAR_KEEPS | _WHY_KEEPS,
            ),
            Scenario(
                label_key="why_cache.preset_chat",
                help_key="why_cache.preset_chat_help",
                values=_values(wc_tokens=seeds.SEED_000_RECOMPUTE_TOKENS, wc_steps=_WHY_GRID_STEPS),
                keeps=_SIDEBAR_KEEPS | _WHY_KEEPS,
            ),
            Scenario(
                label_key="why_cache.preset_pdf",
                help_key="why_cache.preset_pdf_help",
                values=_values(
                    model=seeds.SEED_000_MODEL_ID,
                    gpu=seeds.SEED_000_OUTAGE_SERVER.gpu_id,
                    wc_tokens=seeds.SEED_000_PDF_TOKENS,
                    wc_steps=_WHY_GRID_STEPS,
                ),
                keeps=_WHY_KEEPS,
            ),
        ),
    }
)
