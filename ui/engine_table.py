"""The engines' answer beside a page's own sizing rule: one row per engine (kvcore.compare_engines).

The memory calculator and the sizing page size the cache by the course's rule; this table says what each real
engine would give on the same model, GPU(s), context and cache width, and links to the engines lesson with
those settings.
"""

from __future__ import annotations

import streamlit as st

import kvcore
import ui
from kvcore.units import format_tokens
from ui import lesson, t
from ui.course import carried_params
from ui.errors import error_text
from ui.figure_cache import spec_hash_funcs

ENGINES_PAGE = "lessons/engines.py"


@st.cache_data(show_spinner=False, max_entries=512, hash_funcs=spec_hash_funcs())
def compared(
    model: kvcore.ModelSpec, gpu: kvcore.GpuSpec, context_tokens: int, gpus: int, cache_bits: int
) -> tuple[kvcore.EngineComparison, ...]:
    """kvcore.compare_engines once per model, GPU, context, GPU count and cache width (a few dozen start-ups)."""
    return kvcore.compare_engines(model, gpu, context_tokens=context_tokens, gpus=gpus, cache_bits=cache_bits)


def cache_bits(kv_bytes_per_value: float) -> int:
    """The engines' cache width closest to a page's KV format: 8 bits for one byte or less, else 16."""
    return 8 if kv_bytes_per_value <= 1.0 else 16


def engines_answer(
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec,
    *,
    context_tokens: int,
    gpus: int = 1,
    kv_bytes_per_value: float = 2.0,
    users: int | None = None,
) -> None:
    """A table: each engine's KV cache per GPU and the requests of `context_tokens` it serves at once."""
    bits = cache_bits(kv_bytes_per_value)
    try:
        # By name: Streamlit finds a positional argument's name with inspect.signature at every call.
        rows = compared(model=model, gpu=gpu, context_tokens=int(context_tokens), gpus=int(gpus), cache_bits=bits)
    except ValueError as error:
        st.caption(t("engine_table.unavailable", reason=error_text(error)))
        return
    st.markdown(f"**{t('engine_table.title', length=ui.num(format_tokens(context_tokens)))}**")
    header = [t("engine_table.col_engine"), t("engine_table.col_pool"), t("engine_table.col_users")]
    if users is not None:
        header.append(t("engine_table.col_enough", users=ui.plural("users.count", users)))
    lines = ["| " + " | ".join(header) + " |", "|---|---:|---:|" + ("---|" if users is not None else "")]
    for row in rows:
        name = f"{kvcore.ENGINE_NAMES[row.engine]} {row.startup.release}"
        served = ui.num(f"{row.users:,}") if row.runs_on_gpu else t("engine_table.no_backend")
        cells = [name, lesson.mem(row.startup.kv_pool_bytes), served]
        if users is not None:
            cells.append(":material/check_circle:" if row.users >= users else ":material/cancel:")
        lines.append("| " + " | ".join(cells) + " |")
    st.markdown("\n".join(lines))
    st.caption(t("engine_table.caption", bits=bits))
    st.page_link(
        ENGINES_PAGE,
        label=t("engine_table.link"),
        icon=":material/compare:",
        query_params=carried_params(eg_context=str(context_tokens), eg_gpus=str(gpus), eg_cache=str(bits)),
    )
