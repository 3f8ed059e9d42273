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
from kvcore.units import GB, KB, MB

__all__ = [
    "SEED_004",
    "SEED_ANSWER_TOKENS",
    "SEED_CONTEXT_TOKENS",
    "SEED_GPU_ID",
    "SEED_MODEL_ID",
    "SEED_SHARDS",
    "SHAREGPT_ON_OPT",
    "LengthPreset",
    "SeedFigures",
]


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
