"""kvcore's cache sizes equal, byte for byte, what transformers' own cache holds, family by family.

For each tiny model (tiny_families.py) one forward pass with use_cache=True fills a
DynamicCache; its tensors are weighed (hf_cache_probe.py) and compared with kvcore:

* the serving figure, ``kvcore.sequence_kv_bytes`` (what vLLM stores), where
  transformers stores the same thing;
* kvcore.transformers_cache where it does not (sliding windows keep W − 1 tokens,
  Falcon's new decoder caches every query head, Gated DeltaNet keeps the whole conv
  kernel and a float32 recurrent state); those tests record the ratio to the serving
  figure and say in their name what differs.

kvcore reads each model twice: from the published-style config (``published``: the
fields a config.json on the Hub has) and from ``config.to_dict()`` (``saved``: what
transformers writes with save_pretrained, derived fields such as layer_types included).
A misreading of one of them is marked xfail(strict=True) with the exact case, so the
fix in kvcore/hf_config.py turns it into a failure that asks to remove the mark.
"""

from fractions import Fraction

import pytest
import torch
import transformers
from hf_cache_probe import DTYPES, Prefill, cached_layers, decode_one_token, prefill, run_prefill, tensor_bytes
from tiny_families import (
    FAMILIES,
    FAMILY_IDS,
    LONG_PROMPT_TOKENS,
    SHORT_PROMPT_TOKENS,
    WINDOW_TOKENS,
    Family,
    family,
    tagged,
)

import kvcore as kv
from kvcore import transformers_cache as tc

SOURCES = ("published", "saved")
PROMPTS = (LONG_PROMPT_TOKENS, SHORT_PROMPT_TOKENS)

# (family, source) -> (prompts whose cache shows the misreading, what kvcore gets wrong). Empty now: the
# last two entries, fixed by the hf_config.py of issue 5, were
#   ("qwen2-sliding", "published"): ({37}, "max_window_layers ignored: every layer sliding, not layers >= 2"),
#   ("falcon-7b-mqa", "saved"): ({37, 9}, "num_kv_heads (8, written by to_dict) read before multi_query (1)").
KNOWN_MISREADS: dict[tuple[str, str], tuple[set[int], str]] = {}


def case(fam: Family, source: str, prompt_tokens: int, *, prompt_in_id: bool = True):
    """A pytest param for (family, source[, prompt]), strictly xfail where kvcore is known to misread it."""
    values = (fam.id, source, prompt_tokens) if prompt_in_id else (fam.id, source)
    prompts, reason = KNOWN_MISREADS.get((fam.id, source), (set(), ""))
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if prompt_tokens in prompts else []
    return pytest.param(*values, marks=marks, id="-".join(str(value) for value in values))


def run(fam: Family, prompt_tokens: int) -> Prefill:
    return prefill(fam.config, fam.dtype, prompt_tokens)


def bytes_per_value(fam: Family) -> int:
    return torch.empty((), dtype=DTYPES[fam.dtype]).element_size()


def kvcore_model(fam: Family, source: str, prefilled: Prefill) -> kv.ModelSpec:
    """kvcore's reading of the model, from the published-style fields or from transformers' saved dict."""
    config = fam.config if source == "published" else prefilled.config.to_dict()
    return kv.model_from_config(config)


def serving_bytes(fam: Family, model: kv.ModelSpec, prompt_tokens: int) -> float:
    """kvcore's serving figure (vLLM's layout), every value in the model dtype."""
    b = bytes_per_value(fam)
    return float(kv.sequence_kv_bytes(model, context_tokens=prompt_tokens, bytes_per_value=b, state_bytes_per_value=b))


def transformers_bytes(fam: Family, model: kv.ModelSpec, prompt_tokens: int) -> float:
    """What kvcore.transformers_cache says transformers holds for this family."""
    b = bytes_per_value(fam)
    if "falcon_broadcast" in fam.tags:
        attention = tc.falcon_new_decoder_kv_bytes(model, context_tokens=prompt_tokens, bytes_per_value=b)
    else:
        attention = tc.transformers_kv_bytes(model, context_tokens=prompt_tokens, bytes_per_value=b)
    states = 0.0
    if "linear" in fam.tags:
        states = model.count("linear") * tc.transformers_gated_deltanet_state_bytes(**deltanet(fam), bytes_per_value=b)
    return float(attention) + states


def deltanet(fam: Family) -> dict[str, int]:
    """The Gated DeltaNet fields of a config, by their Hugging Face names."""
    names = (
        "linear_num_key_heads",
        "linear_key_head_dim",
        "linear_num_value_heads",
        "linear_value_head_dim",
        "linear_conv_kernel_dim",
    )
    return {name: fam.config[name] for name in names}


def breakdown(prefilled: Prefill, model: kv.ModelSpec) -> str:
    """Per-layer bytes and kvcore's layer kinds, for failure messages."""
    measured = [f"{layer.index}:{layer.cache_class}={layer.bytes}" for layer in prefilled.layers]
    return f"transformers {measured}; kvcore layers {[layer.kind for layer in model.layers]}"


def test_the_pinned_transformers_is_the_release_kvcore_transformers_cache_follows():
    # requirements-proof.txt pins it; a new pin means re-reading cache_utils.py and the modeling files.
    assert transformers.__version__ == tc.TRANSFORMERS_VERSION


@pytest.mark.parametrize("family_id", FAMILY_IDS)
def test_every_layer_caches_non_empty_tensors_in_the_model_dtype(family_id):
    fam = family(family_id)
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    layers = prefilled.layers
    assert len(layers) == prefilled.config.num_hidden_layers
    assert all(layer.bytes > 0 for layer in layers), [(layer.index, layer.cache_class) for layer in layers]
    for layer in layers:
        for name, tensor in layer.tensors.items():
            # The Gated DeltaNet recurrent state is float32 whatever the model dtype (see the linear test).
            expected = torch.float32 if name.startswith("recurrent_states") else DTYPES[fam.dtype]
            assert tensor.dtype == expected, f"layer {layer.index} {name}: {tensor.dtype}"


@pytest.mark.parametrize(
    ("family_id", "source", "prompt_tokens"),
    [case(fam, source, prompt) for fam in FAMILIES for source in SOURCES for prompt in PROMPTS],
)
def test_the_cache_transformers_holds_equals_kvcore_transformers_figure(family_id, source, prompt_tokens):
    fam = family(family_id)
    prefilled = run(fam, prompt_tokens)
    model = kvcore_model(fam, source, prefilled)
    assert prefilled.bytes == transformers_bytes(fam, model, prompt_tokens), breakdown(prefilled, model)


@pytest.mark.parametrize(
    ("family_id", "source", "prompt_tokens"),
    [case(fam, source, prompt) for fam in FAMILIES if not fam.tags for source in SOURCES for prompt in PROMPTS]
    + [case(fam, source, prompt) for fam in tagged("mla") for source in SOURCES for prompt in PROMPTS],
)
def test_the_cache_equals_kvcore_serving_figure_where_transformers_stores_what_vllm_stores(
    family_id, source, prompt_tokens
):
    fam = family(family_id)
    prefilled = run(fam, prompt_tokens)
    model = kvcore_model(fam, source, prefilled)
    assert prefilled.bytes == serving_bytes(fam, model, prompt_tokens), breakdown(prefilled, model)


@pytest.mark.parametrize(
    ("family_id", "source"),
    [case(fam, source, SHORT_PROMPT_TOKENS, prompt_in_id=False) for fam in tagged("sliding") for source in SOURCES],
)
def test_a_prompt_inside_the_window_is_cached_exactly_as_kvcore_counts_it(family_id, source):
    fam = family(family_id)
    prefilled = run(fam, SHORT_PROMPT_TOKENS)
    model = kvcore_model(fam, source, prefilled)
    assert SHORT_PROMPT_TOKENS < WINDOW_TOKENS - 1
    assert prefilled.bytes == serving_bytes(fam, model, SHORT_PROMPT_TOKENS), breakdown(prefilled, model)


@pytest.mark.parametrize(
    ("family_id", "source"),
    [case(fam, source, LONG_PROMPT_TOKENS, prompt_in_id=False) for fam in tagged("sliding") for source in SOURCES],
)
def test_transformers_keeps_window_minus_one_tokens_on_sliding_layers_where_kvcore_counts_the_whole_window(
    family_id, source
):
    # DynamicSlidingWindowLayer keeps states[:, :, -W + 1:, :]: the token being computed is the W-th.
    fam = family(family_id)
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    model = kvcore_model(fam, source, prefilled)
    for layer, spec in zip(prefilled.layers, model.layers, strict=True):
        kept = WINDOW_TOKENS - 1 if spec.kind == "sliding" else LONG_PROMPT_TOKENS
        assert layer.tensors["keys"].shape[-2] == kept, f"layer {layer.index} ({spec.kind})"
    assert prefilled.bytes == transformers_bytes(fam, model, LONG_PROMPT_TOKENS), breakdown(prefilled, model)
    assert Fraction(prefilled.bytes) / Fraction(serving_bytes(fam, model, LONG_PROMPT_TOKENS)) == fam.long_prompt_ratio


def test_after_the_prompt_a_sliding_layer_keeps_the_whole_prompt_allocated_until_the_next_token():
    # The kept W − 1 tokens are a slice of the concatenated block, which stays allocated with it.
    fam = family("mistral-sliding")
    prefilled = run_prefill(fam.config, fam.dtype, LONG_PROMPT_TOKENS)  # not memoised: decoding changes it
    per_token = 2 * 2 * 8 * bytes_per_value(fam)  # K and V · 2 KV heads · head_dim 8 · 4 B
    after_prompt = tc.transformers_sliding_storage_tokens(
        LONG_PROMPT_TOKENS, sliding_window=WINDOW_TOKENS, last_step_tokens=LONG_PROMPT_TOKENS
    )
    assert [layer.storage_bytes for layer in prefilled.layers] == [after_prompt * per_token] * 4
    assert [layer.bytes for layer in prefilled.layers] == [(WINDOW_TOKENS - 1) * per_token] * 4
    decode_one_token(prefilled)
    while_decoding = tc.transformers_sliding_storage_tokens(
        LONG_PROMPT_TOKENS + 1, sliding_window=WINDOW_TOKENS, last_step_tokens=1
    )
    assert while_decoding == WINDOW_TOKENS
    assert [layer.storage_bytes for layer in prefilled.layers] == [while_decoding * per_token] * 4


@pytest.mark.parametrize("source", SOURCES)
def test_transformers_caches_k_and_v_for_every_query_head_of_falcon_new_decoder_where_vllm_keeps_one_per_group(source):
    # FalconAttention._split_heads broadcasts each group's K and V to its query heads before the cache update.
    fam = family("falcon-40b-new-decoder")
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    model = kvcore_model(fam, source, prefilled)
    assert model.num_key_value_heads == 1
    assert {layer.tensors["keys"].shape[1] for layer in prefilled.layers} == {16}
    assert prefilled.bytes == transformers_bytes(fam, model, LONG_PROMPT_TOKENS), breakdown(prefilled, model)
    assert Fraction(prefilled.bytes) / Fraction(serving_bytes(fam, model, LONG_PROMPT_TOKENS)) == 16


@pytest.mark.parametrize("source", SOURCES)
def test_transformers_keeps_the_whole_conv_kernel_and_a_float32_recurrent_state_where_vllm_keeps_kernel_minus_one(
    source,
):
    fam = family("qwen3-next")
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    model = kvcore_model(fam, source, prefilled)
    fields = deltanet(fam)
    conv_dim = 2 * 2 * 16 + 4 * 8  # 2 · key heads · d_k + value heads · d_v
    linear_layers = [layer for layer, spec in zip(prefilled.layers, model.layers, strict=True) if spec.kind == "linear"]
    assert [layer.index for layer in linear_layers] == [0, 1, 2]
    vllm_layer_bytes = tc.vllm_gated_deltanet_state_values(**fields) * bytes_per_value(fam)
    assert model.linear_state_values == tc.vllm_gated_deltanet_state_values(**fields)  # kvcore = vLLM's figure
    for layer in linear_layers:
        conv, recurrent = layer.tensors["conv_states[0]"], layer.tensors["recurrent_states[0]"]
        assert (tuple(conv.shape), conv.dtype) == ((1, conv_dim, 4), torch.bfloat16)
        assert (tuple(recurrent.shape), recurrent.dtype) == ((1, 4, 16, 8), torch.float32)
        assert layer.bytes == tc.transformers_gated_deltanet_state_bytes(**fields, bytes_per_value=2)
        # 4 · 96 · 2 + 4 · 16 · 8 · 4 = 2,816 B against vLLM's (3 · 96 + 512) · 2 = 1,600 B.
        assert Fraction(layer.bytes) / Fraction(vllm_layer_bytes) == Fraction(2816, 1600)
    assert prefilled.bytes == transformers_bytes(fam, model, LONG_PROMPT_TOKENS), breakdown(prefilled, model)
    assert Fraction(prefilled.bytes) / Fraction(serving_bytes(fam, model, LONG_PROMPT_TOKENS)) == fam.long_prompt_ratio


@pytest.mark.parametrize("family_id", [fam.id for fam in tagged("mla")])
def test_transformers_caches_the_mla_latent_as_vllm_does_not_per_head_k_and_v(family_id):
    # From 5.15.0: past_key_values.update(kv_nope, k_rot), the latent still compressed (≤ 5.14 cached expanded K, V).
    fam = family(family_id)
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    config = fam.config
    for layer in prefilled.layers:  # the "keys" slot holds the latent, the "values" slot the shared RoPE key
        assert tuple(layer.tensors["keys"].shape) == (1, 1, LONG_PROMPT_TOKENS, config["kv_lora_rank"])
        assert tuple(layer.tensors["values"].shape) == (1, 1, LONG_PROMPT_TOKENS, config["qk_rope_head_dim"])
    model = kv.model_from_config(config)
    assert prefilled.bytes == serving_bytes(fam, model, LONG_PROMPT_TOKENS)
    expanded = tc.mla_expanded_values_per_token(
        num_attention_heads=config["num_attention_heads"],
        qk_nope_head_dim=config["qk_nope_head_dim"],
        qk_rope_head_dim=config["qk_rope_head_dim"],
        v_head_dim=config["v_head_dim"],
    )
    # What transformers ≤ 5.14 held: 4 · (8 + 4) + 4 · 8 = 80 values against the 36-value latent.
    assert Fraction(expanded, config["kv_lora_rank"] + config["qk_rope_head_dim"]) == Fraction(80, 36)


def test_gpt_oss_attention_sinks_are_weights_not_cache():
    fam = family("gpt-oss")
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    sinks = [layer.self_attn.sinks for layer in prefilled.model.model.layers]
    assert all(isinstance(sink, torch.nn.Parameter) and tuple(sink.shape) == (16,) for sink in sinks)
    assert {name for layer in prefilled.layers for name in layer.tensors} == {"keys", "values"}


def test_qkv_biases_change_the_weights_not_the_cache():
    fam = family("qwen2")
    prefilled = run(fam, LONG_PROMPT_TOKENS)
    attention = prefilled.model.model.layers[0].self_attn
    assert all(getattr(attention, name).bias is not None for name in ("q_proj", "k_proj", "v_proj"))
    assert {name for layer in prefilled.layers for name in layer.tensors} == {"keys", "values"}
    assert prefilled.bytes == serving_bytes(fam, kv.model_from_config(fam.config), LONG_PROMPT_TOKENS)


def test_the_tensor_weigher_counts_numel_times_element_size():
    assert tensor_bytes(torch.zeros(2, 3, 5, dtype=torch.bfloat16)) == 60


def test_the_weigher_reads_the_older_one_list_per_state_layout():
    class ListCache:  # older transformers releases: one list per state, entry i for layer i
        def __init__(self):
            self.key_cache = [torch.zeros(1, 2, 5, 4), torch.zeros(1, 0)]
            self.value_cache = [torch.zeros(1, 2, 5, 4), torch.zeros(1, 0)]
            self.conv_states = [None, torch.zeros(1, 6, 4)]
            self.recurrent_states = [None, torch.zeros(1, 2, 3, 3)]

    layers = cached_layers(ListCache())
    assert [layer.bytes for layer in layers] == [2 * 40 * 4, (24 + 18) * 4]
    assert set(layers[0].tensors) == {"keys", "values"}


def test_the_weigher_reads_the_legacy_tuple_of_key_value_pairs():
    pair = (torch.zeros(1, 2, 5, 4, dtype=torch.bfloat16), torch.zeros(1, 2, 5, 4, dtype=torch.bfloat16))
    assert [layer.bytes for layer in cached_layers((pair, pair))] == [160, 160]


def test_the_weigher_refuses_a_tensor_under_an_unknown_attribute():
    class Surprise:
        def __init__(self):
            self.layers = []
            self.scratch = torch.zeros(3)

    with pytest.raises(AssertionError, match="outside its layers"):
        cached_layers(Surprise())
