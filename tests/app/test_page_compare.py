"""Compare two setups: each side's figures are kvcore's, a link holds both, presets set all, bad input is said."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import kvcore
from charts.formatting import memory
from course.scenarios import SCENARIOS
from i18n import LANGUAGES, NUMBER_SEPARATORS, translate
from kvcore.units import format_seconds, format_tokens
from tests.app.conftest import ROOT, TIMEOUT_S
from tests.app.figures import chart_figures, plain
from tests.app.helpers import page_opener

PAGE = "lessons/compare.py"
open_page = page_opener(PAGE)
KEYS = ("model", "gpu", "gpus", "weights", "kv", "context", "users")


def expected(
    models, gpus, *, model="llama-3.1-8b", gpu="rtx-4090", n=1, weights=None, kv="bf16", context=8192, users=1
):
    """What kvcore says of one setup, as /sizing and /decode_speed compute it (u = 0.9, 1 GiB overhead)."""
    spec, card = models[model], gpus[gpu]
    weights = weights or spec.weights_dtype
    kv_b, w_b = kvcore.bytes_per_value(kv), kvcore.bytes_per_value(weights)
    weights_bytes = kvcore.model_weights_bytes(spec, bytes_per_param=w_b, tp=n)
    steps = kvcore.sizing_steps(
        spec,
        memory_bytes=card.memory_bytes,
        weights_bytes=weights_bytes,
        overhead_bytes=kvcore.DEFAULT_OVERHEAD_BYTES,
        concurrency=users,
        bytes_per_value=kv_b,
        tp=n,
    )
    cache = float(kvcore.kv_cache_bytes(spec, context_tokens=context, concurrency=users, bytes_per_value=kv_b, tp=n))
    sequence = kvcore.sequence_kv_bytes(spec, context_tokens=context, bytes_per_value=kv_b, tp=n)
    rates = kvcore.rates_for(card, weights_dtype=weights, gpus=n)
    return {
        "weights": weights_bytes,
        "kv": cache,
        "total": weights_bytes + cache + kvcore.DEFAULT_OVERHEAD_BYTES,
        "usable": steps.usable_bytes,
        "context": float(
            kvcore.max_context_tokens(
                spec,
                kv_pool_bytes=steps.kv_pool_bytes,
                concurrency=users,
                bytes_per_value=kv_b,
                tp=n,
                limit_tokens=spec.max_position_embeddings,
            )
        ),
        "users": int(kvcore.max_users(kv_pool_bytes=steps.kv_pool_bytes, sequence_bytes=sequence)),
        "tpot": float(
            kvcore.tpot_s(
                spec,
                context_tokens=context,
                batch=users,
                rates=rates,
                kv_bytes_per_value=kv_b,
                weight_bytes_per_param=w_b,
            )
        ),
    }


def table(app, lang="en") -> dict[str, tuple[str, str, str]]:
    """The comparison table: row label → (A, B, B vs A)."""
    [text] = [block.value for block in app.markdown if block.value.startswith("| ")]
    rows = [line.strip("| ").split(" | ") for line in text.splitlines()[2:]]
    return {row[0]: (row[1], row[2], row[3] if len(row) > 3 else "") for row in rows}


def row(app, key, lang="en") -> tuple[str, str, str]:
    return table(app, lang)[translate(lang, key)]


def shown_memory(num_bytes, lang="en") -> str:
    return memory(num_bytes, NUMBER_SEPARATORS[lang])


def shown_count(value, lang="en") -> str:
    return format_tokens(value).translate(str.maketrans(".,", NUMBER_SEPARATORS[lang]))


def assert_side_shows(app, side: int, figures, lang="en"):
    assert row(app, "compare.row_weights", lang)[side] == shown_memory(figures["weights"], lang)
    assert row(app, "compare.row_kv", lang)[side] == shown_memory(figures["kv"], lang)
    assert row(app, "compare.row_total", lang)[side] == shown_memory(figures["total"], lang)
    assert row(app, "compare.row_usable", lang)[side] == shown_memory(figures["usable"], lang)
    assert row(app, "compare.row_users", lang)[side] == str(figures["users"])
    assert row(app, "compare.row_context", lang)[side].split(" ")[0] == shown_count(figures["context"], lang)
    tpot = format_seconds(figures["tpot"]).translate(str.maketrans(".,", NUMBER_SEPARATORS[lang]))
    assert row(app, "compare.row_tpot", lang)[side] == tpot


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_is_the_sidebars_setup_and_b_the_same_with_an_fp8_cache(app, models, gpus, lang):
    open_page(app, lang=lang)
    assert not app.exception
    assert_side_shows(app, 0, expected(models, gpus), lang)
    assert_side_shows(app, 1, expected(models, gpus, kv="fp8"), lang)
    assert row(app, "compare.row_kv", lang)[2] == ("0.5× (−50 %)" if lang == "en" else "0,5× (−50 %)")
    assert row(app, "compare.row_weights", lang)[2] == translate(lang, "compare.same")


def test_both_setups_start_from_the_sidebars_model_and_gpu(app, models, gpus):
    open_page(app, model="llama-3.1-70b", gpu="h100-sxm")
    assert app.selectbox(key="cmp_a_model").value == app.selectbox(key="cmp_b_model").value == "llama-3.1-70b"
    assert app.selectbox(key="cmp_a_gpu").value == app.selectbox(key="cmp_b_gpu").value == "h100-sxm"
    assert_side_shows(app, 0, expected(models, gpus, model="llama-3.1-70b", gpu="h100-sxm"))


def test_more_gpus_split_the_weights_and_the_cache_and_speed_up_each_token(app, models, gpus):
    open_page(app, model="llama-3.1-70b", gpu="h100-sxm")
    app.button_group(key="cmp_b_gpus").set_value(2).run()
    app.button_group(key="cmp_b_kv").set_value("bf16").run()
    assert_side_shows(app, 1, expected(models, gpus, model="llama-3.1-70b", gpu="h100-sxm", n=2))
    assert row(app, "compare.row_weights")[2] == "0.5× (−50 %)"


def test_b_may_be_another_model_on_another_gpu(app, models, gpus):
    open_page(app)
    app.selectbox(key="cmp_b_model").set_value("qwen3-8b").run()
    app.selectbox(key="cmp_b_gpu").set_value("a100-80gb").run()
    app.slider(key="cmp_b_users").set_value(16).run()
    app.slider(key="cmp_b_context").set_value(32768).run()
    assert not app.exception
    figures = expected(models, gpus, model="qwen3-8b", gpu="a100-80gb", kv="fp8", context=32768, users=16)
    assert_side_shows(app, 1, figures)
    assert app.query_params.get("cmp_b_model") in ("qwen3-8b", ["qwen3-8b"])


def test_the_chart_draws_kvcores_parts_for_both_setups(app, models, gpus):
    open_page(app)
    [figure] = chart_figures(app)
    bars = {trace["name"]: plain(trace["y"]) for trace in figure["data"] if trace["type"] == "bar"}
    a, b = expected(models, gpus), expected(models, gpus, kv="fp8")
    assert bars[translate("en", "chart.weights")] == pytest.approx([a["weights"] / 2**30, b["weights"] / 2**30])
    assert bars[translate("en", "chart.kv_cache")] == pytest.approx([a["kv"] / 2**30, b["kv"] / 2**30])
    assert "GiB" in figure["layout"]["yaxis"]["title"]["text"]


def test_decimal_gb_reaches_the_table_and_the_chart(app, models, gpus):
    open_page(app, units="GB")
    a = expected(models, gpus)
    assert row(app, "compare.row_weights")[0] == memory(a["weights"], unit="GB")
    [figure] = chart_figures(app)
    assert "GB" in figure["layout"]["yaxis"]["title"]["text"]


# ---------------------------------------------------------------- fits, and the largest difference in words


def test_a_setup_whose_weights_outgrow_its_gpus_says_it_cannot_start(app):
    open_page(app, cmp_a_model="llama-3.1-405b")
    assert not app.exception
    cannot = translate("en", "compare.no_room", side="A", fixed="", usable="", gpus="").split(":")[0]
    assert any(error.value.startswith(cannot) for error in app.error)
    assert row(app, "compare.row_fits")[0] == translate("en", "compare.no")
    assert row(app, "compare.row_users")[0] == "0"
    [fits] = [success.value for success in app.success]
    assert fits.startswith("**B")  # B still fits


def test_too_many_users_does_not_fit_and_says_what_brings_it_back(app):
    open_page(app, cmp_b_users="64", cmp_b_context="32768")
    said = translate("en", "compare.does_not_fit", side="B", total="", usable="", gpus="").split(":")[0]
    assert any(warning.value.startswith(said) for warning in app.warning)
    assert row(app, "compare.row_fits")[1] == translate("en", "compare.no")


def test_the_largest_difference_is_named_and_explained(app):
    open_page(app)
    texts = [block.value for block in app.markdown]
    # The default: an FP8 cache doubles the users that fit (5 → 11 on an RTX 4090), the largest change.
    what = translate("en", "compare.what_users")
    assert any(text.startswith(f"**{what}**") for text in texts)
    assert any(text.startswith(translate("en", "compare.why_room", a_room="", b_room="", a_per_token="",
        b_per_token="")[:40]) for text in texts)  # fmt: skip
    changed = translate("en", "compare.changes", changes=translate("en", "compare.change_kv", a="bf16", b="fp8"))
    assert changed in texts


def test_two_equal_setups_say_so(app):
    open_page(app, cmp_b_kv="bf16")
    assert translate("en", "compare.no_difference") in [block.value for block in app.markdown]


# ---------------------------------------------------------------- presets, links, bad input


@pytest.mark.parametrize("index", range(len(SCENARIOS["compare"])))
def test_each_preset_sets_both_setups_and_kvcore_agrees(app, models, gpus, index):
    values = SCENARIOS["compare"][index].values
    assert set(values) == {f"cmp_{side}_{key}" for side in "ab" for key in KEYS}
    open_page(app)
    app.button(key=f"cmp_presets_{index}").click().run()
    assert not app.exception
    for side_index, side in enumerate("ab"):
        setup = {key: values[f"cmp_{side}_{key}"] for key in KEYS}
        figures = expected(
            models,
            gpus,
            model=setup["model"],
            gpu=setup["gpu"],
            n=setup["gpus"],
            weights=setup["weights"],
            kv=setup["kv"],
            context=setup["context"],
            users=setup["users"],
        )
        assert_side_shows(app, side_index, figures)
        assert app.slider(key=f"cmp_{side}_context").value == setup["context"]


def test_one_h100_against_two_shows_the_users_grow_most(app):
    open_page(app)
    app.button(key="cmp_presets_2").click().run()
    what = translate("en", "compare.what_users")
    assert any(block.value.startswith(f"**{what}**") for block in app.markdown)
    assert len(app.success) == 2  # both fit
    assert row(app, "compare.row_users")[2] == "15×"  # past twice A, the factor alone
    assert row(app, "compare.row_tpot")[2] == "0.5× (−50 %)"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_link_reopens_both_setups_in_either_language(models, gpus, lang):
    link = {
        "cmp_a_model": "llama-3.1-70b",
        "cmp_a_gpu": "h100-sxm",
        "cmp_a_gpus": "2",
        "cmp_a_weights": "fp8",
        "cmp_b_model": "qwen3-32b",
        "cmp_b_gpu": "h200",
        "cmp_b_kv": "int8",
        "cmp_b_context": "16384",
        "cmp_b_users": "8",
    }
    app = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S), lang=lang, **link)
    assert not app.exception
    assert not [info for info in app.info if info.proto.icon == ":material/link:"]
    assert app.button_group(key="cmp_a_gpus").value == 2 and app.button_group(key="cmp_b_kv").value == "int8"
    assert_side_shows(app, 0, expected(models, gpus, model="llama-3.1-70b", gpu="h100-sxm", n=2, weights="fp8"), lang)
    figures = expected(models, gpus, model="qwen3-32b", gpu="h200", kv="int8", context=16384, users=8)
    assert_side_shows(app, 1, figures, lang)


@pytest.mark.parametrize(
    ("param", "value"),
    [("cmp_a_model", "no-such-model"), ("cmp_b_gpu", "<b>x</b>"), ("cmp_a_users", "9999"), ("cmp_b_gpus", "3"),
     ("cmp_b_context", "abc"), ("cmp_a_kv", "fp7")],
)  # fmt: skip
def test_a_bad_value_in_the_link_is_said_and_the_default_used(app, models, gpus, param, value):
    open_page(app, **{param: value})
    assert not app.exception
    notices = [info.value for info in app.info if info.proto.icon == ":material/link:"]
    assert len(notices) == 1 and f"`{param}`" in notices[0] and "<b>" not in notices[0]
    assert_side_shows(app, 0, expected(models, gpus))
    assert_side_shows(app, 1, expected(models, gpus, kv="fp8"))


def test_reset_puts_both_setups_back_to_the_sidebars(app):
    open_page(app, cmp_a_model="qwen3-8b", cmp_b_gpu="h100-sxm", cmp_b_users="8")
    app.button(key="reset_page").click().run()
    assert not app.exception
    assert app.selectbox(key="cmp_a_model").value == "llama-3.1-8b"
    assert app.selectbox(key="cmp_b_gpu").value == "rtx-4090"
    assert app.slider(key="cmp_b_users").value == 1
    assert not [key for key in app.query_params if key.startswith("cmp_")]
