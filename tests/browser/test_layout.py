"""Nothing cut, covered or overflowing: every page in both languages on a desktop (1400 px) and a phone (390 px).

Issue 15, seen in a real browser: chart titles clipped at the chart's edge ("…reservada e vazi"), Plotly's mode
bar over the titles, a line's label over the subtitle, the legend over the x axis title, formulas past the right
edge, metric labels and preset buttons ending in an ellipsis, axis titles longer than a phone's chart. Each check
reads what the browser laid out (bounding boxes, ``scrollWidth``), never a pixel: one server, one browser context,
one tab that visits every page, waiting on the app's signals.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from course.lessons import DEFAULT_STEM, PAGES
from i18n import LANGUAGES

from .conftest import IDLE, patient

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}

#: True once every chart on the page is drawn by Plotly at the width of its box (after a load or a resize).
CHARTS_DRAWN = """() => {
  const boxes = document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stPlotlyChart], [data-testid=stMain] .kvlab-live-chart');
  return [...boxes].every((box) => {
    if (box.getBoundingClientRect().width === 0) return true;  // folded away (an expander, a tab): not shown
    const plot = box.matches('.js-plotly-plot') ? box : box.querySelector('.js-plotly-plot');
    const layout = plot && plot._fullLayout;
    return Boolean(layout) && Math.abs(layout.width - plot.getBoundingClientRect().width) < 2
      && plot.querySelector('.main-svg') !== null;
  });
}"""

#: Everything on the page that is cut, covered or overflowing, as short sentences (an empty list: all readable).
LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const box = (el) => el.getBoundingClientRect();
  const shown = (el) => { const r = box(el); return r.width > 0 && r.height > 0 && r.right > 0; };  // on screen
  const text = (el) => (el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 70);
  const overlap = (a, b) =>
    a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const viewport = document.documentElement.clientWidth;

  document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').forEach((plot) => {
    if (!shown(plot)) return;
    const chart = box(plot);
    const titles = [...plot.querySelectorAll('.gtitle, .gtitle-subtitle')].filter(shown);
    const name = text(titles[0] || plot).slice(0, 40);
    titles.forEach((title) => {
      const r = box(title);
      if (r.left < chart.left - 1 || r.right > chart.right + 1)
        problems.push(`chart "${name}": title "${text(title)}" is ${Math.round(r.width)} px`
          + ` in a ${Math.round(chart.width)} px chart`);
    });
    const modebar = plot.querySelector('.modebar');
    if (modebar && shown(modebar) && getComputedStyle(modebar).display !== 'none')
      titles.filter((title) => overlap(box(title), box(modebar))).forEach((title) =>
        problems.push(`chart "${name}": the mode bar covers "${text(title)}"`));
    const labels = [...plot.querySelectorAll(
      '.annotation, .g-xtitle, .g-ytitle, [class*=g-x][class*=title], [class*=g-y][class*=title]')]
      .filter((el) => shown(el) && text(el));
    labels.forEach((label) => titles.filter((title) => overlap(box(label), box(title))).forEach((title) =>
      problems.push(`chart "${name}": "${text(label)}" lies over "${text(title)}"`)));
    const axisTitles = [...plot.querySelectorAll(
      '.xtitle, .ytitle, [class^=x][class$=title], [class^=y][class$=title]')]
      .filter((el) => shown(el) && text(el));
    axisTitles.forEach((one, i) => axisTitles.slice(i + 1).forEach((other) => {
      if (overlap(box(one), box(other)))
        problems.push(`chart "${name}": axis titles "${text(one)}" and "${text(other)}" overlap`);
    }));
    const legend = plot.querySelector('.legend');
    if (legend && shown(legend))
      axisTitles.filter((axis) => overlap(box(legend), box(axis))).forEach((axis) =>
        problems.push(`chart "${name}": the legend lies over "${text(axis)}"`));
    axisTitles.forEach((axis) => {
      const r = box(axis);
      if (r.left < chart.left - 1 || r.right > chart.right + 1 || r.top < chart.top - 1 || r.bottom > chart.bottom + 1)
        problems.push(`chart "${name}": axis title "${text(axis)}" runs out of the chart`);
    });
  });

  document.querySelectorAll('[data-testid=stMain] .katex-display').forEach((formula) => {
    if (!shown(formula)) return;
    const r = box(formula);
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(formula).overflowX);
    if (r.right > viewport + 1 || (!scrolls && formula.scrollWidth > formula.clientWidth + 1))
      problems.push(`formula "${text(formula).slice(0, 40)}" is wider than the screen without a scroll box`);
  });

  const truncated = (el) => el.scrollWidth > el.clientWidth + 1;
  document.querySelectorAll('[data-testid=stMetricLabel], [data-testid=stMain] button, [data-testid=stSidebar] button')
    .forEach((holder) => {
      if (!shown(holder)) return;
      const parts = [holder, ...holder.querySelectorAll('div, p, span')].filter((el) => shown(el) && text(el));
      const kind = holder.matches('button') ? 'button' : 'metric label';
      if (parts.some(truncated)) problems.push(`"${text(holder)}" is cut (${kind})`);
    });

  const main = document.querySelector('[data-testid=stMain]');
  if (main && main.scrollWidth > main.clientWidth + 1)
    problems.push(`the page is ${main.scrollWidth} px wide on a ${main.clientWidth} px screen`);
  return problems;
}"""

#: How long a page may take to load and draw on a loaded 2-core machine (every wait is on a signal).
LOAD_TIMEOUT_MS = 120_000


def address(base: str, stem: str, lang: str) -> str:
    """A page's address in `lang`: the default page is at /."""
    path = "/" if stem == DEFAULT_STEM else f"/{stem}"
    return f"{base}{path}?lang={lang}"


def settled(page: Page) -> Page:
    """`page` once the script is idle and every chart is drawn at its box's width."""
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function(CHARTS_DRAWN, timeout=LOAD_TIMEOUT_MS)
    return page


def open_settled(page: Page, url: str) -> Page:
    page.goto(url)
    return settled(page)


def resized(page: Page, viewport: dict[str, int]) -> Page:
    """`page` at `viewport`, once Plotly has redrawn every chart at its new width."""
    page.set_viewport_size(viewport)
    return settled(page)


def layout_problems(page: Page) -> list[str]:
    problems: list[Any] = page.evaluate(LAYOUT_PROBLEMS)
    return [str(problem) for problem in problems]


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Iterator[Page]:
    """One tab for the whole module: every page is visited in it, in turn."""
    context = patient(browser.new_context(viewport=DESKTOP))
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_has_a_cut_covered_or_overflowing_title_formula_label_or_button(tab: Page, app_url, lang):
    """Each page loads at 1400 px, is checked, shrinks to 390 px and is checked again."""
    found = []
    for stem in [page.stem for page in PAGES]:
        tab.set_viewport_size(DESKTOP)
        open_settled(tab, address(app_url, stem, lang))
        for width, viewport in WIDTHS.items():
            found += [f"/{stem} {lang} {width}: {problem}" for problem in layout_problems(resized(tab, viewport))]
    assert not found, "\n".join(found)
