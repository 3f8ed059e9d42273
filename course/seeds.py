"""The course's own figures and presets: what the seed texts say, and the scenarios the lessons start from.

kvcore computes any model on any GPU; this module holds the inputs the course
chose and the figures its texts quote, each with the passage it comes from. The
seed texts are the course's source material (seed 000: the KV cache and the
sizing rule; seed 002: variants, quantization, prefix caching; seed 004: the
1M-token agent's ledger). A seed's figures are its own rounded words, kept so a
page can set them beside the exact values kvcore computes; nothing is computed
from them.

Presets that are not from a seed say where they come from (the vLLM paper's
ShareGPT setting). The scheduler's presets are in ``course.scheduler_presets``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvcore.capacity import DEFAULT_BLOCK_SIZE
from kvcore.units import GB, KB, MB, GiB, KiB

__all__ = [
    "FLASH_ATTENTION_PAPER_GPU_ID",
    "SEED_000_CONTEXT_TOKENS",
    "SEED_000_DASHBOARD",
    "SEED_000_FP8_ROW",
    "SEED_000_GQA_ROW",
    "SEED_000_MHA_ROW",
    "SEED_000_MODEL_ID",
    "SEED_000_OUTAGE",
    "SEED_000_OUTAGE_SERVER",
    "SEED_000_PDF_TOKENS",
    "SEED_000_RECOMPUTE_TOKENS",
    "SEED_000_TABLE",
    "SEED_002_CACHE_TABLE",
    "SEED_002_GQA_TABLE_MODEL_ID",
    "SEED_002_MLA_MODEL_ID",
    "SEED_002_PREFIX",
    "SEED_002_SRAM_GPU_ID",
    "SEED_002_STORY",
    "SEED_002_THIRTY_GB",
    "SEED_004",
    "SEED_ANSWER_TOKENS",
    "SEED_CONTEXT_TOKENS",
    "SEED_GPU_ID",
    "SEED_MODEL_ID",
    "SEED_SHARDS",
    "SHAREGPT_ON_OPT",
    "CacheTableRow",
    "Dashboard",
    "LengthPreset",
    "MemoryStory",
    "MhaCacheRow",
    "Outage",
    "PrefixScenario",
    "SeedFigures",
    "Server",
    "ThirtyGbModel",
]


# ---------------------------------------------------------------- seed 000: the KV cache and the sizing rule

#: Seed 000, "A conta com números reais": "um modelo típico da classe de 7 a 8 bilhões de parâmetros com GQA:
#: 32 camadas, 8 cabeças de KV, d_head = 128, em FP16" — Llama 3.1 8B has exactly that shape (data/models.csv).
SEED_000_MODEL_ID = "llama-3.1-8b"
#: Seed 000, "Por que o KV cache existe": "gerar o token número mil exigiria recalcular as projeções de chave e
#: valor dos 999 anteriores" (the why-cache lesson's step, and the ``recompute_without_cache`` fact).
SEED_000_RECOMPUTE_TOKENS = 1_000
#: Seed 000, "A conta com números reais": "Um PDF de quarenta páginas dá uns 20 mil tokens".
SEED_000_PDF_TOKENS = 20_000
#: The columns of seed 000's table: "8k tokens | 32k tokens | 128k tokens" (binary thousands).
SEED_000_CONTEXT_TOKENS = (8_192, 32_768, 131_072)


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheTableRow:
    """One row of seed 000's cache table: the configuration it names and the sizes it prints, in bytes.

    The seed's KiB and GiB are binary (2**10, 2**30 bytes), so each size is
    exactly 2 · L · kv_heads · d_head · b · s for ``SEED_000_MODEL_ID`` with
    `num_key_value_heads` and `kv_dtype`, at s = ``SEED_000_CONTEXT_TOKENS``.
    """

    num_key_value_heads: int
    kv_dtype: str
    per_token_bytes: float
    cache_bytes: tuple[float, ...]


#: Seed 000's table, "Agora multiplique:": "MHA clássico (32 cabeças KV), FP16 | 512 KiB | 4 GiB | 16 GiB | 64 GiB".
SEED_000_MHA_ROW = CacheTableRow(
    num_key_value_heads=32, kv_dtype="fp16", per_token_bytes=512 * KiB, cache_bytes=(4 * GiB, 16 * GiB, 64 * GiB)
)
#: "GQA (8 cabeças KV), FP16 | 128 KiB | 1 GiB | 4 GiB | 16 GiB".
SEED_000_GQA_ROW = CacheTableRow(
    num_key_value_heads=8, kv_dtype="fp16", per_token_bytes=128 * KiB, cache_bytes=(1 * GiB, 4 * GiB, 16 * GiB)
)
#: "GQA (8 cabeças KV), KV em FP8 | 64 KiB | 0,5 GiB | 2 GiB | 8 GiB".
SEED_000_FP8_ROW = CacheTableRow(
    num_key_value_heads=8, kv_dtype="fp8", per_token_bytes=64 * KiB, cache_bytes=(0.5 * GiB, 2 * GiB, 8 * GiB)
)
SEED_000_TABLE = (SEED_000_MHA_ROW, SEED_000_GQA_ROW, SEED_000_FP8_ROW)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outage:
    """Seed 000's outage as the seed counts it: a card, a model, users pasting PDFs; bytes and tokens.

    The room is card − model (the seed subtracts nothing else); one PDF's cache is
    2 · L · H_kv · d · b · pdf_tokens for ``SEED_000_MODEL_ID`` in `kv_dtype`.
    """

    card_bytes: float
    weights_bytes: float
    pdf_tokens: int
    kv_dtype: str
    users: int
    pdf_bytes: float


#: Seed 000, "A conta com números reais": "Um PDF de quarenta páginas dá uns 20 mil tokens. Com GQA em FP16, são
#: cerca de 2,5 GiB por usuário. Dois usuários simultâneos, 5 GiB. Se a placa tem 12 GB e o modelo ocupa 9 GB, a
#: conta já estourou". The seed's GB are read as GiB; its "uns 20 mil" is taken as 20 · 1,024 = 20,480 tokens,
#: which at 128 KiB per token is exactly its 2.5 GiB.
SEED_000_OUTAGE = Outage(
    card_bytes=12 * GiB, weights_bytes=9 * GiB, pdf_tokens=20_480, kv_dtype="fp16", users=2, pdf_bytes=2.5 * GiB
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Server:
    """A server the sizing rule is applied to: model and GPU (ids of data/*.csv), the rule's terms, the users.

    utilization u (fraction of the card the engine takes), weights in `weights_dtype`,
    `overhead_bytes` (bytes), K and V in `kv_dtype`, `users` of `context_tokens` tokens, `tp` GPUs.
    """

    model_id: str
    gpu_id: str
    utilization: float
    weights_dtype: str
    overhead_bytes: float
    kv_dtype: str
    users: int
    context_tokens: int
    tp: int = 1


#: Seed 000's outage with real figures: Llama 3.1 8B in INT8 (7.48 GiB) plus 1.5 GiB of overhead is the seed's
#: "9 GB", on the 12 GiB RTX 3060, with vLLM's default u = 0.90 ("tipicamente entre 0,85 e 0,90").
SEED_000_OUTAGE_SERVER = Server(
    model_id=SEED_000_MODEL_ID,
    gpu_id="rtx-3060-12gb",
    utilization=0.90,
    weights_dtype="int8",
    overhead_bytes=1.5 * GiB,
    kv_dtype=SEED_000_OUTAGE.kv_dtype,
    users=SEED_000_OUTAGE.users,
    context_tokens=SEED_000_OUTAGE.pdf_tokens,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Dashboard:
    """Seed 000's healthy vLLM dashboard: the pool's "max context" (tokens), one long user (tokens), VRAM used."""

    pool_tokens: int
    long_user_tokens: int
    memory_used_fraction: float


#: Seed 000, "Como isso aparece na telemetria": "88% de VRAM ocupada em cada GPU e um 'contexto máximo' de
#: 262.144 tokens … Um único usuário com 128 mil tokens consome metade do servidor inteiro".
SEED_000_DASHBOARD = Dashboard(pool_tokens=262_144, long_user_tokens=131_072, memory_used_fraction=0.88)


# ---------------------------------------------------------------- seed 002: the course module


@dataclass(frozen=True, slots=True, kw_only=True)
class MhaCacheRow:
    """One row of seed 002's memory table: a model (its id here and the seed's name), a context, the seed's size.

    The seed counts 2 × layers × seq_len × d_model × 2 bytes (every head cached,
    FP16: ``kvcore.memory.mha_cache_bytes``), and its "GB" are binary: 2 × 32 ×
    4,096 × 4,096 × 2 = 2 GiB. ``says_gb`` is the number it prints before "GB".
    Llama 3.1 has the attention shape of the seed's Llama 3 (same layers, heads, head dim).
    """

    model_id: str
    seed_name: str
    context_tokens: int
    says_gb: float


#: Seed 002, "Quanto de memoria o cache consome?": "LLaMA 3 8B | 32 | 4096 | 2 GB | 64 GB" and
#: "LLaMA 3 70B | 80 | 8192 | 10 GB | 320 GB" (the GPT-4 row is an estimate with no model to compute).
SEED_002_CACHE_TABLE = (
    MhaCacheRow(model_id="llama-3.1-8b", seed_name="LLaMA 3 8B", context_tokens=4096, says_gb=2),
    MhaCacheRow(model_id="llama-3.1-8b", seed_name="LLaMA 3 8B", context_tokens=131_072, says_gb=64),
    MhaCacheRow(model_id="llama-3.1-70b", seed_name="LLaMA 3 70B", context_tokens=4096, says_gb=10),
    MhaCacheRow(model_id="llama-3.1-70b", seed_name="LLaMA 3 70B", context_tokens=131_072, says_gb=320),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryStory:
    """Seed 002's one-user story: a model and a GPU (ids of data/*.csv), a context, a dtype, and the seed's figures.

    The ``says_*_gb`` fields are the numbers the seed prints before "GB" (weights,
    the MHA cache of its table, their sum), ``says_gpus`` its count of GPUs.
    """

    model_id: str
    gpu_id: str
    context_tokens: int
    dtype: str
    says_weights_gb: float
    says_cache_gb: float
    says_total_gb: float
    says_gpus: int


#: Seed 002: "LLaMA 3 70B em FP16: modelo ~140 GB + cache 128k = 320 GB → ~460 GB de VRAM para UM request =
#: 6× H100 80GB apenas para servir 1 usuário."
SEED_002_STORY = MemoryStory(
    model_id="llama-3.1-70b",
    gpu_id="h100-sxm",
    context_tokens=131_072,
    dtype="fp16",
    says_weights_gb=140,
    says_cache_gb=320,
    says_total_gb=460,
    says_gpus=6,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThirtyGbModel:
    """Seed 002's "modelo de 30GB": a model id, the weights' dtype that makes it about 30 GB, the cache's dtype."""

    model_id: str
    weights_dtype: str
    kv_dtype: str


#: Seed 002, "Por que um modelo de 30GB de parametros pode precisar de 60GB+ de VRAM?": Qwen2.5 32B in INT8
#: (32.5 B parameters · 1 byte ≈ 32.8 GB), with a BF16 cache.
SEED_002_THIRTY_GB = ThirtyGbModel(model_id="qwen2.5-32b", weights_dtype="int8", kv_dtype="bf16")
#: Seed 002's GQA/MQA table ("Q heads 32 | K/V heads 32, 8, 1 | 0 %, 75 %, 97 %") is Llama 3 8B's shape.
SEED_002_GQA_TABLE_MODEL_ID = "llama-3.1-8b"
#: Seed 002, "MLA: a próxima geração": "introduzido pelo DeepSeek v2/v3 (2024)".
SEED_002_MLA_MODEL_ID = "deepseek-v3"
#: Seed 002's SRAM/HBM table: "Memoria | Tamanho (H100)", "~50 MB", "80 GB", "~3.4 TB/s".
SEED_002_SRAM_GPU_ID = "h100-sxm"
#: Not a seed's: the GPU the FlashAttention paper measured (Dao et al. 2022, A100 40GB).
FLASH_ATTENTION_PAPER_GPU_ID = "a100-40gb"


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixScenario:
    """Seed 002's prompt-caching scenario: requests sharing a system prompt (tokens, s, price fractions).

    `requests` requests of `prefix_tokens` shared tokens and `suffix_tokens` of
    their own, in blocks of `block_size` tokens, one every `interval_s` seconds; the
    cache lives `ttl_s` seconds; a cache read costs `read_price_fraction` of the input
    price and a write `write_price_fraction`.
    """

    prefix_tokens: int
    suffix_tokens: int
    requests: int
    block_size: int
    interval_s: float
    ttl_s: float
    read_price_fraction: float
    write_price_fraction: float


#: Seed 002, "Prompt Caching": "Se 100 requests usam o mesmo system prompt de 2000 tokens", "TTL ~5 min
#: (Anthropic)", "cache write = normal, cache read = ~10% do preço". The suffix (200 tokens), the blocks
#: (vLLM's 16) and one request every 10 s are the lesson's choices, inside the TTL.
SEED_002_PREFIX = PrefixScenario(
    prefix_tokens=2000,
    suffix_tokens=200,
    requests=100,
    block_size=DEFAULT_BLOCK_SIZE,
    interval_s=10,
    ttl_s=300,
    read_price_fraction=0.10,
    write_price_fraction=1.0,
)


# ---------------------------------------------------------------- seed 004: the 1M-token agent


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedFigures:
    """The figures seed 004 quotes for Llama 3.1 70B with 1M tokens on H100s, in base units (bytes, s, bytes/s).

    They are the seed's own rounded words, kept so the page can set them beside
    the exact values of ``kvcore.ledger``; nothing is computed from them.
    """

    kv_bytes_per_token: float
    mha_bytes_per_token: float
    gqa_factor: float
    cache_bytes: float
    weights_bytes: float
    gpus_to_fit_low: int
    gpus_to_fit_high: int
    bandwidth_bytes_per_s: float
    token_s: float
    tokens_per_s: float
    answer_s: float
    sharded_token_s: float
    fleet_bytes: float
    ridge_flop_per_byte: float
    fp8_bytes_per_token: float
    gpu_memory_bytes: float


#: Seed 004, word for word. "O que é o KV cache e por que ele cresce": "≈ 320 KB por token", "cerca de
#: 2,6 MB por token", "cortou essa conta em 8 vezes"; "A leitura que custa caro": "cerca de 300 FLOPs ... para
#: cada byte"; "O livro-caixa de um milhão de tokens": "na ordem de 320 GB", "~140 GB dos pesos", "uma H100 de
#: 80 GB", "de 6 a 8 GPUs", "~3,35 TB/s", "~95 ms por token", "cerca de 10 tokens por segundo", "~95 segundos",
#: "~12 ms", "a frota continua movendo 320 GB"; "O que dá para fazer hoje": "de 320 KB para 160 KB".
SEED_004 = SeedFigures(
    kv_bytes_per_token=320 * KB,
    mha_bytes_per_token=2.6 * MB,
    gqa_factor=8.0,
    cache_bytes=320 * GB,
    weights_bytes=140 * GB,
    gpus_to_fit_low=6,
    gpus_to_fit_high=8,
    bandwidth_bytes_per_s=3.35e12,
    token_s=0.095,
    tokens_per_s=10.0,
    answer_s=95.0,
    sharded_token_s=0.012,
    fleet_bytes=320 * GB,
    ridge_flop_per_byte=300.0,
    fp8_bytes_per_token=160 * KB,
    gpu_memory_bytes=80 * GB,
)

#: Seed 004's scenario: model and GPU ids of data/*.csv ("um modelo 70B", "uma H100"), "um milhão de tokens
#: de contexto", BF16 cache, "Fragmentar o cache em 8 GPUs", "uma resposta de 1.000 tokens".
SEED_MODEL_ID = "llama-3.1-70b"
SEED_GPU_ID = "h100-sxm"
SEED_CONTEXT_TOKENS = 1_000_000
SEED_SHARDS = 8
SEED_ANSWER_TOKENS = 1_000


# ---------------------------------------------------------------- request-length presets (PagedAttention)


@dataclass(frozen=True, slots=True, kw_only=True)
class LengthPreset:
    """A request-length distribution a page offers as a preset: the arguments of ``kvcore.request_lengths_tokens``.

    n_requests requests of mean_tokens on average (tokens), spread = std / mean,
    clipped to max_model_len tokens, in blocks of block_size tokens, drawn from
    ``numpy.random.default_rng(seed)``.
    """

    n_requests: int
    mean_tokens: float
    spread: float
    max_model_len: int
    block_size: int = DEFAULT_BLOCK_SIZE
    seed: int = 0


#: The vLLM paper's setting: OPT models (max_model_len 2,048) serving ShareGPT, whose
#: requests average 161.31 input + 337.99 output ≈ 499 tokens (Kwon et al. 2023, Fig. 11).
#: 499 / 2,048 ≈ 24 % of each contiguous slab holds tokens: about 76 % is wasted, inside
#: the paper's 60–80 %, while 16-token blocks waste about 1.5 %.
SHAREGPT_ON_OPT = LengthPreset(n_requests=1000, mean_tokens=499.0, spread=0.8, max_model_len=2048)
