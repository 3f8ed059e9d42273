"""PagedAttention against contiguous reservation: the waste of each scheme, and the pool drawn slot by slot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, HALF_X_TITLE_LINE_CHARS, SUBPLOT_TITLES_GAP_PX, styled, wrapped
from kvcore.paging import AllocationReport, BlockMap

#: Keys a caller must translate for the waste bars (the y title must name the unit); "free" too with a pool.
WASTE_LABELS = ("title", "subtitle", "y_title", "used", "wasted", "contiguous", "paged")

#: Keys a caller must translate for the block map.
MAP_LABELS = ("title", "subtitle", "contiguous", "paged", "request", "reserved", "free", "x_title", "y_title")

#: Slots held but empty in grey, free slots in white, requests in a cycle of Okabe–Ito colours.
WASTED_COLOR = "#8C8C8C"
FREE_COLOR = "#FFFFFF"
REQUEST_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

#: The block map never draws more cells than this per scheme (cells then stand for several slots).
MAX_CELLS = 8192
#: Cells per row of the block map.
MAP_COLUMNS = 64

#: Codes of a cell: −2 free, −1 held but empty, 0… the request's colour index.
FREE, WASTED = -2, -1


def waste_figure(
    *,
    reports: Sequence[AllocationReport],
    labels: Mapping[str, str],
    pool_bytes: float | None = None,
    separators: str = ".,",
    unit_bytes: float = 2**30,
    unit: str = "GiB",
) -> AnyFigure:
    """One stacked bar per scheme: memory holding tokens, and memory held but empty (from kvcore's reports).

    With `pool_bytes` (the KV pool the reports' requests were placed in), a third part
    tops each bar up to the pool: memory still free (``labels["free"]``), so both bars
    stand as tall as the pool and the reports must fit in it.
    """
    names = [labels[report.scheme] for report in reports]
    used = [report.used_bytes / unit_bytes for report in reports]
    wasted = [report.waste_bytes / unit_bytes for report in reports]
    percent = [report.waste_fraction * 100 for report in reports]
    figure = draw.figure(
        [
            draw.bar(
                x=names,
                y=used,
                name=labels["used"],
                marker={"color": COLORS["kv_cache"]},
                hovertemplate=f"<b>%{{x}}</b><br>{labels['used']}: %{{y:,.2f}} {unit}<extra></extra>",
            ),
            draw.bar(
                x=names,
                y=wasted,
                name=labels["wasted"],
                marker={"color": WASTED_COLOR},
                customdata=percent,
                text=[f"{value:.1f} %".replace(".", separators[0]) for value in percent],
                textposition="inside",
                hovertemplate=(
                    f"<b>%{{x}}</b><br>{labels['wasted']}: %{{y:,.2f}} {unit} (%{{customdata:.1f}} %)<extra></extra>"
                ),
            ),
        ]
    )
    if pool_bytes is not None:
        free = [(pool_bytes - report.reserved_bytes) / unit_bytes for report in reports]
        if min(free) < -1e-9 * pool_bytes / unit_bytes:
            raise ValueError(f"the requests hold more than the pool of {pool_bytes} bytes")
        figure.add_trace(
            draw.bar(
                x=names,
                y=[max(value, 0.0) for value in free],
                name=labels["free"],
                marker={"color": FREE_COLOR, "line": {"color": WASTED_COLOR, "width": 1}},
                hovertemplate=f"<b>%{{x}}</b><br>{labels['free']}: %{{y:,.2f}} {unit}<extra></extra>",
            )
        )
    figure.update_layout(barmode="stack", separators=separators)
    return styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title=labels["y_title"])


def cell_slots(total_slots: int, max_cells: int = MAX_CELLS) -> int:
    """Slots one cell of the map stands for: 1 for a small pool, else the smallest power of two that keeps it small."""
    slots = 1
    while total_slots / slots > max_cells:
        slots *= 2
    return slots


def map_codes(blocks: BlockMap, *, slots_per_cell: int, columns: int = MAP_COLUMNS) -> np.ndarray:
    """The pool as rows of cells: FREE, WASTED or the colour index of the request holding the cell.

    A cell of several slots takes the request of its first slot, and counts as used
    when at least half of its slots hold tokens.
    """
    owner = blocks.owner.ravel()
    used = blocks.used.ravel()
    cells = owner.size // slots_per_cell
    owner = owner[: cells * slots_per_cell].reshape(cells, slots_per_cell)[:, 0]
    used_share = used[: cells * slots_per_cell].reshape(cells, slots_per_cell).mean(axis=1)
    codes = np.where(owner < 0, FREE, np.where(used_share >= 0.5, owner % len(REQUEST_COLORS), WASTED))
    rows = -(-cells // columns)
    padded = np.full(rows * columns, FREE)
    padded[:cells] = codes
    return padded.reshape(rows, columns)


def _colorscale() -> list[list[float | str]]:
    """A step colour scale from −2 (free) to the last request colour."""
    colors = [FREE_COLOR, WASTED_COLOR, *REQUEST_COLORS]
    scale: list[list[float | str]] = []
    for index, color in enumerate(colors):
        scale += [[index / len(colors), color], [(index + 1) / len(colors), color]]
    return scale


def block_map_figure(
    *,
    maps: Mapping[str, BlockMap],
    labels: Mapping[str, str],
    slots_per_cell: int = 1,
) -> AnyFigure:
    """The same small pool under each scheme, side by side: requests in colour, held-but-empty slots in grey."""
    schemes = list(maps)
    figure = draw.subplots(rows=1, cols=len(schemes), subplot_titles=[labels[s] for s in schemes])
    for column, scheme in enumerate(schemes, start=1):
        blocks = maps[scheme]
        codes = map_codes(blocks, slots_per_cell=slots_per_cell)
        owner = blocks.owner.ravel()
        cells = codes.size
        first_slot = np.minimum(np.arange(cells) * slots_per_cell, owner.size - 1)
        owners = owner[first_slot].reshape(codes.shape)
        hover = np.where(
            codes == FREE,
            labels["free"],
            np.where(codes == WASTED, labels["reserved"], ""),
        ).astype(object)
        requests = codes >= 0
        held_by = owners[requests]
        if held_by.size:  # one text per request, not per cell: a pool has thousands of cells
            request_words = np.array([f"{labels['request']} {index + 1}" for index in range(held_by.max() + 1)])
            hover[requests] = request_words.astype(object)[held_by]
        figure.add_trace(
            draw.heatmap(
                z=codes,
                text=hover,
                zmin=FREE,
                zmax=len(REQUEST_COLORS) - 1,
                colorscale=_colorscale(),
                showscale=False,
                xgap=1,
                ygap=1,
                hovertemplate="%{text}<extra></extra>",
                name=labels[scheme],
            ),
            row=1,
            col=column,
        )
    figure.update_yaxes(autorange="reversed", showticklabels=False, showgrid=False)
    figure.update_xaxes(showticklabels=False, showgrid=False)
    styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title="")
    figure.update_xaxes(title={"text": wrapped(labels["x_title"], HALF_X_TITLE_LINE_CHARS)})
    figure.update_yaxes(title={"text": labels["y_title"]}, row=1, col=1)
    # Room between the chart's title and the plots for each scheme's title.
    figure.update_layout(title_pad_b=SUBPLOT_TITLES_GAP_PX)
    return figure
