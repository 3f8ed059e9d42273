"""The lessons' one-click scenarios as data: what each sets, what it keeps, which are meant not to fit."""

from __future__ import annotations

import pytest

import kvcore
from course.scenarios import MEMORY_70B_GPUS, SCENARIOS
from i18n import LANGUAGES, catalogue

EVERY = [(stem, scenario) for stem, scenarios in SCENARIOS.items() for scenario in scenarios]


@pytest.mark.parametrize(("stem", "scenario"), EVERY, ids=lambda item: getattr(item, "label_key", item))
def test_a_scenario_never_both_sets_and_keeps_a_control(stem, scenario):
    assert not scenario.keeps & scenario.values.keys()


@pytest.mark.parametrize(("stem", "scenario"), EVERY, ids=lambda item: getattr(item, "label_key", item))
def test_a_scenarios_texts_exist_in_both_languages(stem, scenario):
    keys = [key for key in (scenario.label_key, scenario.help_key, scenario.note_key) if key]
    for lang in LANGUAGES:
        assert all(key.startswith(f"{stem}.") and key in catalogue(lang) for key in keys)


def test_the_memory_scenarios_set_the_architecture_to_the_models_own():
    models = kvcore.load_models()
    for scenario in SCENARIOS["memory"]:
        model = models[scenario.values["model"]]
        assert scenario.values["mem_values_model"] == model.id
        assert (scenario.values["mem_head_dim"], scenario.values["mem_layers"]) == (
            model.head_dim,
            model.num_hidden_layers,
        )
        assert scenario.values["kv_heads"] in {1, model.num_key_value_heads, model.num_attention_heads}


def test_the_70b_story_outgrows_one_card_and_splits_over_the_gpus_it_sets():
    """The memory calculator's 70B story: its weights alone outgrow one card, so it sets the GPUs that hold it."""
    models, gpus = kvcore.load_models(), kvcore.load_gpus()
    [story] = [scenario for scenario in SCENARIOS["memory"] if scenario.label_key == "memory.preset_70b"]
    model = models[story.values["model"]]
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(story.values["weights_dtype"]))
    assert weights > gpus[story.values["gpu"]].memory_bytes
    assert story.values["mem_gpus"] == MEMORY_70B_GPUS > 1


def test_the_paged_attention_scenarios_all_set_the_pool():
    assert all("pa_pool" in scenario.values for scenario in SCENARIOS["paged_attention"])
    assert all({"model", "gpu"} <= scenario.keeps for scenario in SCENARIOS["paged_attention"])
