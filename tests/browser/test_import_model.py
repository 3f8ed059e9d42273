"""Bring your own model in a real browser: paste a config.json and see kvcore's bytes per token."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

import kvcore
from i18n import translate
from kvcore.units import format_bytes

from .conftest import IDLE

pytestmark = pytest.mark.browser

CONFIG = Path(__file__).resolve().parents[1] / "kvcore" / "configs" / "qwen3-32b.json"


def test_pasting_a_config_shows_its_bytes_per_token_and_use_puts_it_in_the_link(page: Page, app_url, screenshots_dir):
    text = CONFIG.read_text(encoding="utf-8")
    reading = kvcore.read_config_text(text, name="my-qwen3")
    page.goto(f"{app_url}/import_model?lang=en")
    page.wait_for_selector(IDLE, timeout=60_000)
    page.get_by_label(translate("en", "import_model.paste_label")).fill(text)
    page.get_by_label(translate("en", "import_model.name_label")).fill("my-qwen3")
    page.get_by_role("button", name=translate("en", "import_model.read")).click()
    page.wait_for_selector(IDLE)
    per_token = format_bytes(kvcore.kv_bytes_per_token(reading.model))  # 256 KiB: head_dim 128, not 5120 / 64
    metric = page.get_by_test_id("stMetric").filter(has_text=translate("en", "import_model.per_token"))
    expect(metric).to_contain_text(per_token)
    page.screenshot(path=screenshots_dir / "import_model-en-pasted.png", full_page=True)

    page.get_by_role("button", name=translate("en", "import_model.use", name="my-qwen3")).click()
    page.wait_for_url(lambda url: "model=kv1" in url, timeout=60_000)
    picker = page.get_by_role("combobox", name=translate("en", "sidebar.model"))
    expect(picker).to_have_value(translate("en", "sidebar.imported_model", name="my-qwen3"))

    # The copied link carries the model: a new page opens with it, with no paste.
    copy = page.context.new_page()
    copy.goto(page.url)
    copy.wait_for_selector(IDLE, timeout=60_000)
    expect(copy.get_by_test_id("stMetric").filter(has_text=translate("en", "import_model.per_token"))).to_contain_text(
        per_token
    )
