"""The exercise page in a real browser: one answer right, one wrong, each with its verdict, in both languages."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

import kvcore
from course import exercises
from i18n import LANGUAGES, catalogue, translate

from .conftest import IDLE

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 120_000
SET, COUNT, MAX_COUNT = 1, 4, 12
SIZES = {"desktop": {"width": 1280, "height": 2400}, "phone": {"width": 390, "height": 3600}}


def typed(value: float, unit: str, lang: str) -> str:
    """An answer as a student types it on the `lang` page: '48 KiB', '0,4375 GiB'."""
    number = f"{value:g}"
    return f"{number.replace('.', ',') if lang == 'pt' else number} {unit}"


def opening(key: str, lang: str) -> str:
    """What a verdict's text begins with on the page (the catalogue's text up to its first number, unbolded)."""
    return catalogue(lang)[key].split("{", 1)[0].replace("**", "")


def check(page: Page, number: int, text: str, lang: str) -> None:
    box = page.locator(f".st-key-ex_box_{number}")
    box.get_by_role("textbox").fill(text)
    box.get_by_role("button", name=translate(lang, "practice.check"), exact=True).click()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_right_and_a_wrong_answer_get_their_verdicts(page: Page, app_url, screenshots_dir, lang):
    drawn = exercises.generate_exercise_set(SET, models=kvcore.load_models(), gpus=kvcore.load_gpus(), count=MAX_COUNT)
    right, wrong = drawn[0], drawn[1]
    assert right.dimension != "choice" and wrong.dimension != "choice"

    page.set_viewport_size(SIZES["desktop"])
    page.goto(f"{app_url}/practice?lang={lang}&ex_set={SET}&ex_count={COUNT}")
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_role("heading", name=translate(lang, "practice.title"), exact=True)).to_be_visible()

    check(page, 1, typed(right.answer_value, right.answer_unit, lang), lang)
    first = page.locator(".st-key-ex_box_1")
    expect(first.get_by_text(opening("practice.verdict_right", lang))).to_be_visible(timeout=60_000)

    check(page, 2, typed(wrong.answer_value * 10, wrong.answer_unit, lang), lang)
    second = page.locator(".st-key-ex_box_2")
    expect(second.get_by_text(opening("practice.verdict_wrong", lang))).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    page.wait_for_selector(IDLE)
    page.screenshot(path=screenshots_dir / f"practice-{lang}-desktop.png")
    page.set_viewport_size(SIZES["phone"])
    page.wait_for_timeout(500)  # one column now; Plotly redraws at the new width
    page.screenshot(path=screenshots_dir / f"practice-{lang}-phone.png")
