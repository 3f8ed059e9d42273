"""The frame in a real browser: every menu page listed in the sidebar (the instructor's is not), and each page
its own tab title (issue 15)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from course import lessons
from i18n import LANGUAGES, translate

from .conftest import IDLE

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_sidebar_lists_every_page_and_the_tab_names_the_page(page: Page, app_url, lang):
    page.goto(f"{app_url}/prefill_decode?lang={lang}")
    page.wait_for_selector(IDLE)
    nav = page.get_by_test_id("stSidebarNav")
    for entry in lessons.MENU_PAGES:
        expect(nav.get_by_text(translate(lang, entry.title_key), exact=True)).to_be_visible()
    # The instructor's page is opened by its address only: hidden from the menu (not protected).
    expect(nav.get_by_text(translate(lang, "nav.instructor"), exact=True)).to_have_count(0)
    expect(nav.get_by_test_id("stSidebarNavViewButton")).to_have_count(0)  # no "View 9 more" fold
    expect(page).to_have_title(f"{translate(lang, 'nav.prefill_decode')} · KV Cache Lab")
