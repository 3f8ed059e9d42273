"""What a decode step reads: the query once, K and V again at every step; trained sparse attention reads less."""

import numpy as np
import pytest

import kvcore
from kvcore import reads


@pytest.fixture(scope="module")
def models():
    return kvcore.load_models()


# ---------------------------------------------------------------- why Q is not cached


def test_the_first_token_is_read_by_every_step_and_its_query_by_one():
    # N = 1,000 (seed 000's token one thousand): K and V of token 1 are read 1,000 times, q_1 once.
    assert float(reads.kv_reads_of_token(1, generated_tokens=1000)) == 1000
    assert float(reads.query_reads_of_token(1, generated_tokens=1000)) == 1
    # The last token: read once, by its own step; a token not generated yet: never.
    assert float(reads.kv_reads_of_token(1000, generated_tokens=1000)) == 1
    assert float(reads.kv_reads_of_token(1001, generated_tokens=1000)) == 0
    assert float(reads.query_reads_of_token(1001, generated_tokens=1000)) == 0


def test_reads_over_all_tokens_add_up_to_the_attention_pairs():
    # Σ_p (N − p + 1) = N(N+1)/2: every (query, earlier key) pair of the N steps.
    n = 64
    assert float(np.sum(reads.kv_reads_of_token(np.arange(1, n + 1), generated_tokens=n))) == n * (n + 1) / 2


def test_a_cached_query_would_cost_n_q_heads_per_layer(models):
    # Llama 3.1 8B in FP16: 32 layers · 32 query heads · 128 · 2 bytes = 262,144 bytes, twice its K+V.
    llama = models["llama-3.1-8b"]
    assert reads.query_bytes_per_token(llama) == 262_144
    assert reads.query_bytes_per_token(llama) == 2 * kvcore.kv_bytes_per_token(llama)


# ---------------------------------------------------------------- trained sparse attention


def test_nsa_reads_what_its_paper_counts_for_decoding():
    # NSA (arXiv:2502.11089), Table 4: 8k → 2,048 tokens (4×), 16k → 2,560, 32k → 3,584, 64k → 5,632 (11.6×).
    context = np.array([8192, 16384, 32768, 65536])
    read = reads.nsa_tokens_read(context)
    assert read.tolist() == [2048, 2560, 3584, 5632]
    assert round(float(context[-1] / read[-1]), 1) == 11.6


def test_moba_at_a_million_tokens_has_the_papers_sparsity():
    # MoBA (arXiv:2502.13189): blocks of 4,096, top 12, at 2^20 tokens: 95.31 % of the context unread.
    assert round(1 - float(reads.moba_tokens_read(2**20)) / 2**20, 4) == 0.9531


def test_duo_attention_halves_a_long_gqa_cache(models):
    # Half the heads keep every token, the others 64 + 256: at 1M tokens the cache is just over half.
    llama = models["llama-3.1-70b"]
    full = float(kvcore.kv_cache_bytes(llama, context_tokens=1_000_000))
    duo = float(reads.duo_attention_cache_bytes(llama, context_tokens=1_000_000))
    assert duo == pytest.approx(0.5 * full + 0.5 * float(kvcore.kv_cache_bytes(llama, context_tokens=320)))


def test_most_trained_sparse_methods_cut_reads_not_the_stored_cache(models):
    llama = models["llama-3.1-70b"]
    methods = {m.name: m for m in reads.trained_sparse_attention(llama, context_tokens=1_000_000)}
    dense = methods["dense"]
    for name in ("nsa", "moba", "seer"):
        assert methods[name].stored_bytes >= dense.stored_bytes  # every token's K and V stay in memory
        assert methods[name].read_bytes < dense.read_bytes / 10
    assert methods["duo"].stored_bytes == methods["duo"].read_bytes < dense.stored_bytes


def test_a_retrieval_fraction_outside_zero_to_one_is_refused(models):
    with pytest.raises(kvcore.KvError) as error:
        reads.duo_attention_cache_bytes(models["llama-3.1-8b"], context_tokens=1000, retrieval_fraction=1.5)
    assert error.value.code == "not_fraction"
