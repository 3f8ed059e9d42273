"""A ModelSpec travels in a short, URL-safe code and comes back unchanged."""

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore as kv
from kvcore.model_code import MAX_CODE_CHARS, pattern_code, pattern_from_code

URL_SAFE = re.compile(r"^[A-Za-z0-9._~-]+$")
CARRIED = (
    "name", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
    "layer_pattern", "sliding_window", "kv_lora_rank", "qk_rope_head_dim", "linear_state_values",
    "max_position_embeddings", "total_params", "active_params", "num_experts", "num_experts_per_tok", "weights_dtype",
)  # fmt: skip


def carried(model):
    return tuple(getattr(model, name) for name in CARRIED)


@pytest.mark.parametrize("model", kv.load_models().values(), ids=lambda m: m.id)
def test_every_model_of_the_data_file_comes_back_from_its_code(model):
    code = kv.model_to_code(model)
    assert URL_SAFE.match(code) and len(code) < 200
    back = kv.model_from_code(code)
    assert carried(back) == carried(model)
    assert kv.kv_bytes_per_token(back) == kv.kv_bytes_per_token(model)


def test_the_code_reads_like_the_model():
    model = kv.load_models()["gemma-3-27b"]
    assert kv.model_to_code(model) == (
        "kv1~L62_h32_k16_d128_H5376_ps5f_w1024_c131072_P27400000000_A27400000000~Gemma_203_2027B"
    )


def test_the_layer_pattern_is_written_in_letters():
    assert pattern_code("sliding*5,full") == "s5f"
    assert pattern_from_code("l3f") == "linear*3,full"


KINDS = st.sampled_from(["full", "sliding", "mla", "linear"])
patterns = st.lists(st.tuples(KINDS, st.integers(1, 40)), min_size=1, max_size=6).map(
    lambda runs: ",".join(kind if n == 1 else f"{kind}*{n}" for kind, n in runs)
)
positive = st.integers(1, 10**12).map(float) | st.floats(1e-3, 1e15, allow_nan=False)


@st.composite
def models(draw):
    kv_heads = draw(st.integers(1, 64))
    pattern = draw(patterns)
    total = draw(st.none() | positive)
    return kv.ModelSpec(
        id=(name := draw(st.text(max_size=60))),
        name=name,
        num_hidden_layers=draw(st.integers(1, 500)),
        num_attention_heads=kv_heads * draw(st.integers(1, 16)),
        num_key_value_heads=kv_heads,
        head_dim=draw(st.integers(1, 1024)),
        hidden_size=draw(st.integers(0, 65_536)),
        layer_pattern=pattern,
        sliding_window=draw(st.integers(1, 1 << 20)) if "sliding" in pattern else draw(st.none() | st.integers(1, 99)),
        kv_lora_rank=draw(st.integers(1, 2048)) if "mla" in pattern else 0,
        qk_rope_head_dim=draw(st.integers(0, 256)),
        linear_state_values=draw(st.integers(0, 10**7)),
        max_position_embeddings=draw(st.integers(0, 1 << 30)),
        total_params=total,
        active_params=None if total is None else draw(st.floats(1e-3, 1.0)) * total,
        num_experts=draw(st.integers(0, 512)),
        num_experts_per_tok=draw(st.integers(0, 16)),
        weights_dtype=draw(st.sampled_from(sorted(kv.BYTES_PER_VALUE))),
    )


@settings(max_examples=300, deadline=None)
@given(models())
def test_any_valid_model_comes_back_exactly(model):
    code = kv.model_to_code(model)
    assert URL_SAFE.match(code) and len(code) <= MAX_CODE_CHARS
    assert kv.model_from_code(code) == model


def test_a_long_name_is_cut_to_60_characters():
    model = kv.with_changes(kv.load_models()["gpt2"], name="x" * 80)
    assert kv.model_from_code(kv.model_to_code(model)).name == "x" * 60


BAD_CODES = [
    ("kv1~L32_h32_k8_d128~" + "a" * 1000, "at most 1000"),
    ("kv1~L32_h32_k8_d128~a b", "only letters"),
    ("kv2~L32_h32_k8_d128~x", "not a model code"),
    ("L32_h32_k8_d128", "not a model code"),
    ("kv1~L32_h32_k8~x", "lacks head_dim"),
    ("kv1~L32_L33_h32_k8_d128~x", "twice"),
    ("kv1~L0_h32_k8_d128~x", "between 1"),
    ("kv1~L99999_h32_k8_d128~x", "between 1"),
    ("kv1~Lx_h32_k8_d128~x", "whole number"),
    ("kv1~L32_h32_k5_d128~x", "impossible model"),
    ("kv1~L32_h32_k8_d128_pm~x", "impossible model"),
    ("kv1~L32_h32_k8_d128_px~x", "bad layer pattern"),
    ("kv1~L32_h32_k8_d128_ps9999999~x", "bad count"),
    ("kv1~L32_h32_k8_d128_P1e99~x", "between 0 and 1e16"),
    ("kv1~L32_h32_k8_d128_tfp6~x", "unknown weights format"),
    ("kv1~L32_h32_k8_d128_Z1~x", "unknown field"),
    ("kv1~L32_h32_k8_d128~bad_Z9", "hex digits"),
    ("kv1~L32_h32_k8_d128~_FF", "UTF-8"),
]


@pytest.mark.parametrize(("code", "words"), BAD_CODES)
def test_a_malformed_code_is_a_clear_value_error(code, words):
    with pytest.raises(ValueError, match=words):
        kv.model_from_code(code)


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=string.ascii_letters + string.digits + "._~-", max_size=80)
    | st.text(max_size=40)
    | st.builds(lambda s: "kv1~" + s, st.text(alphabet=string.ascii_letters + string.digits + "._~-", max_size=60))
)
def test_random_codes_give_a_model_or_a_value_error(text):
    try:
        kv.model_from_code(text)
    except ValueError as error:
        assert str(error)
