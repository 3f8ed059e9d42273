"""Preemption over time: kvcore's continuous-batching simulator on a block pool you size.

Widgets → kvcore.scheduler (trace, server, simulation, summary) → figures → text.
The step's cost comes from the chosen model on the chosen GPU (``server_from_model``);
the pool's size is a share of the blocks that make preemption impossible. Recompute runs
under vLLM ``VLLM_VERSION``'s scheduler rules (``vllm_rules``: full-prompt admission and
prefix caching, each with a switch); swap is V0's, forced for every request. Until the
learner moves them, max_num_seqs and max_num_batched_tokens follow what that release picks
for the sidebar's GPU (``batch_defaults``). The preset buttons are the course's scenarios
(``course.scheduler_presets``).
"""

import dataclasses

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.preemption import latency_figure, occupancy_figure, queue_figure
from course import scheduler_presets
from kvcore.capacity import DEFAULT_BLOCK_SIZE, block_bytes
from kvcore.scheduler import (
    PREEMPTION_MODES,
    ServerConfig,
    SimulationResult,
    SimulationSummary,
    Workload,
    blocks_for_no_preemption,
    generate_requests,
    server_from_model,
    simulate,
    summarize,
    vllm_rules,
)
from kvcore.units import GiB, format_seconds, format_tokens, format_tokens_per_s
from ui import glossary, lesson, t
from ui.errors import error_text
from ui.formula import latex_number

lesson.rerun_alone(__file__)

#: The longest request a trace may hold (vLLM's max_model_len), unless the model's context is shorter.
MAX_MODEL_LEN = 4096
#: vLLM's default share of the card, for comparing the simulated pool with what the GPU has.
UTILIZATION = kvcore.DEFAULT_UTILIZATION  # the shared default (kvcore.DEFAULT_ASSUMPTIONS)
#: The vLLM release whose scheduler rules and batch defaults the page follows.
VLLM_VERSION = kvcore.NEWEST_RELEASE
#: The (max_num_batched_tokens, max_num_seqs) defaults last applied to the sliders: they follow the GPU until moved.
DEFAULTS_KEY = "_pr_batch_defaults"


@lesson.cache_data(show_spinner=False, max_entries=64)
def run(
    model_id: str,
    gpu_id: str,
    rate: float,
    requests: int,
    prompt_mean: int,
    prompt_spread: float,
    output_mean: int,
    output_spread: float,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    pool_percent: int,
    mode: str,
    prefix_caching: bool,
    full_prompt: bool,
    seed: int,
) -> tuple[Workload, ServerConfig, int, SimulationResult, SimulationSummary]:
    """The trace, the server, the blocks that rule out preemption, the simulation and its summary (cached per input).

    The pool has pool_percent % of ``blocks_for_no_preemption`` for this trace's longest
    request, at least one block; its step costs are the model's on the GPU. Recompute:
    ``VLLM_VERSION``'s rules, less the ones switched off; swap: V0's, forced.
    """
    model, gpu = ui.models()[model_id], ui.gpus()[gpu_id]
    workload = Workload(
        arrival_rate_per_s=rate,
        num_requests=requests,
        prompt_mean_tokens=prompt_mean,
        prompt_spread=prompt_spread,
        output_mean_tokens=output_mean,
        output_spread=output_spread,
        max_model_len=min(MAX_MODEL_LEN, model.max_position_embeddings),
        seed=seed,
    )
    trace = generate_requests(workload)
    needed = blocks_for_no_preemption(
        max_num_seqs=max_num_seqs, max_request_tokens=trace.prompt_tokens + trace.output_tokens
    )
    blocks = max(1, round(needed * pool_percent / 100))
    per_block = block_bytes(model, bytes_per_value=2.0)
    # Step costs from the model on the GPU (its checkpoint format: bytes and matmul peak; kvcore's typical MBU and
    # MFU); the pool is exactly `blocks` (a product of floats could floor one short).
    server = server_from_model(
        model,
        gpu,
        kv_pool_bytes=per_block,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        weights_dtype=model.weights_dtype,
        mbu=kvcore.TYPICAL_MBU,
        mfu=kvcore.TYPICAL_MFU,
        preemption_mode=mode,
    )
    server = dataclasses.replace(server, num_blocks=blocks)
    if mode == "recompute":
        server = vllm_rules(server, kvcore.vllm_release(VLLM_VERSION))
        server = dataclasses.replace(
            server,
            prefix_caching=server.prefix_caching and prefix_caching,
            reserve_full_prompt=server.reserve_full_prompt and full_prompt,
        )
    result = simulate(trace, server)
    return workload, server, needed, result, summarize(result)


@lesson.cache_data(show_spinner=False)
def preset_values(name: str) -> dict[str, object]:
    """The course's preset mapped onto this page's controls (the pool as a share of the no-preemption blocks).

    Cached: each preset draws its trace (``generate_requests``), three a rerun otherwise.
    """
    workload, server = scheduler_presets.preset(name)
    trace = generate_requests(workload)
    needed = blocks_for_no_preemption(
        max_num_seqs=server.max_num_seqs, max_request_tokens=trace.prompt_tokens + trace.output_tokens
    )
    return {
        "model": scheduler_presets.MODEL_ID,
        "gpu": scheduler_presets.GPU_ID,
        "pr_rate": float(workload.arrival_rate_per_s),
        "pr_requests": workload.num_requests,
        "pr_prompt_mean": int(workload.prompt_mean_tokens),
        "pr_prompt_spread": float(workload.prompt_spread),
        "pr_output_mean": int(workload.output_mean_tokens),
        "pr_output_spread": float(workload.output_spread),
        "pr_max_num_seqs": server.max_num_seqs,
        "pr_max_num_batched_tokens": server.max_num_batched_tokens,
        "pr_pool": round(100 * server.num_blocks / needed),
        "pr_mode": server.preemption_mode,
        # Every preset runs under the release's rules (scheduler_presets.preset(name, release=…)); swap ignores them.
        "pr_prefix_caching": True,
        "pr_full_prompt": True,
        "pr_seed": workload.seed,
    }


model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("preemption.title"), t("preemption.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.presets(
    [
        lesson.Preset(
            label=t("preemption.preset_right"),
            help=t("preemption.preset_right_help"),
            values=preset_values("right-sized"),
        ),
        lesson.Preset(
            label=t("preemption.preset_small"),
            help=t("preemption.preset_small_help"),
            values=preset_values("too-small"),
        ),
        lesson.Preset(
            label=t("preemption.preset_swap"),
            help=t("preemption.preset_swap_help"),
            values=preset_values("too-small-swap"),
        ),
    ],
    key="pr_presets",
)

MODE_KEYS = {"recompute": "preemption.mode_recompute", "swap": "preemption.mode_swap"}
mode_labels = {mode: t(text_key) for mode, text_key in MODE_KEYS.items()}
controls, results = st.columns([1, 2], gap="large")

# vLLM's batch defaults for this GPU; a slider still at the previous GPU's default follows the new one.
max_model_len = min(MAX_MODEL_LEN, model.max_position_embeddings)
default_tokens, default_seqs = kvcore.batch_defaults(
    kvcore.vllm_release(VLLM_VERSION), gpu=gpu, entry="serve", max_model_len=max_model_len
)
previous = st.session_state.get(DEFAULTS_KEY)
if previous is not None and previous != (default_tokens, default_seqs):
    for widget_key, old, new in (
        ("pr_max_num_batched_tokens", previous[0], default_tokens),
        ("pr_max_num_seqs", previous[1], default_seqs),
    ):
        if st.session_state.get(widget_key, old) == old:
            st.session_state[widget_key] = new
st.session_state[DEFAULTS_KEY] = (default_tokens, default_seqs)

with controls:
    rate = lesson.slider(
        t("preemption.rate"),
        key="pr_rate",
        min_value=1.0,
        max_value=100.0,
        value=20.0,
        step=1.0,
        format="%.0f",
        help=t("preemption.rate_help"),
    )
    pool_percent = lesson.slider(
        t("preemption.pool"),
        key="pr_pool",
        min_value=5,
        max_value=150,
        value=25,
        step=1,
        format="%d %%",
        help=t("preemption.pool_help"),
    )
    max_num_seqs = lesson.slider(
        t("preemption.max_num_seqs"),
        key="pr_max_num_seqs",
        min_value=1,
        max_value=1024,
        value=default_seqs,
        # vLLM's threshold is 70 GiB of device memory (vllm/engine/arg_utils.py), shown in the page's unit.
        help=t("preemption.max_num_seqs_help", memory=lesson.mem(70 * GiB, decimals=1)),
    )
    mode = lesson.choice(
        t("preemption.mode"),
        key="pr_mode",
        options=PREEMPTION_MODES,
        default="recompute",
        labels=MODE_KEYS,  # shown translated; the link holds the mode: ?pr_mode=swap
        help=t("preemption.mode_help"),
    )
    with lesson.secondary():
        max_num_batched_tokens = lesson.slider(
            t("preemption.max_num_batched_tokens"),
            key="pr_max_num_batched_tokens",
            min_value=256,
            max_value=16384,
            value=default_tokens,
            step=256,
            help=t("preemption.max_num_batched_tokens_help"),
        )
        prefix_caching = lesson.toggle(
            t("preemption.prefix_caching"),
            key="pr_prefix_caching",
            value=True,
            help=t("preemption.prefix_caching_help"),
        )
        full_prompt = lesson.toggle(
            t("preemption.full_prompt"),
            key="pr_full_prompt",
            value=True,
            help=t("preemption.full_prompt_help"),
        )
        requests = lesson.slider(
            t("preemption.requests"),
            key="pr_requests",
            min_value=50,
            max_value=1000,
            value=300,
            step=50,
            help=t("preemption.requests_help"),
        )
        prompt_mean = lesson.slider(
            t("preemption.prompt_mean"), key="pr_prompt_mean", min_value=16, max_value=2048, value=512, step=16
        )
        prompt_spread = lesson.slider(
            t("preemption.prompt_spread"),
            key="pr_prompt_spread",
            min_value=0.0,
            max_value=2.0,
            value=0.5,
            step=0.1,
            help=t("preemption.spread_help"),
        )
        output_mean = lesson.slider(
            t("preemption.output_mean"), key="pr_output_mean", min_value=16, max_value=1024, value=256, step=16
        )
        output_spread = lesson.slider(
            t("preemption.output_spread"),
            key="pr_output_spread",
            min_value=0.0,
            max_value=2.0,
            value=0.5,
            step=0.1,
            help=t("preemption.spread_help"),
        )
        seed = lesson.slider(
            t("preemption.seed"),
            key="pr_seed",
            min_value=0,
            max_value=99,
            value=0,
            help=t("preemption.seed_help"),
        )
    at_defaults = (int(max_num_seqs), int(max_num_batched_tokens)) == (default_seqs, default_tokens)
    st.caption(
        t(
            "preemption.defaults_used" if at_defaults else "preemption.defaults_moved",
            seqs=default_seqs,
            tokens=default_tokens,
            version=VLLM_VERSION,
            gpu=gpu.name,
        )
    )

try:
    workload, server, needed, result, summary = run(
        model.id,
        gpu.id,
        float(rate),
        int(requests),
        int(prompt_mean),
        float(prompt_spread),
        int(output_mean),
        float(output_spread),
        int(max_num_seqs),
        int(max_num_batched_tokens),
        int(pool_percent),
        str(mode),
        bool(prefix_caching),
        bool(full_prompt),
        int(seed),
    )
    per_block = block_bytes(model, block_size=server.block_size, bytes_per_value=2.0)
    pool_bytes = server.num_blocks * per_block
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(model.weights_dtype))
    gpu_pool = kvcore.kv_budget_bytes(memory_bytes=gpu.memory_bytes, utilization=UTILIZATION, weights_bytes=weights)
except ValueError as error:
    st.error(t("error.bad_combination", detail=error_text(error)))
    st.stop()


def seconds(value: float) -> str:
    return ui.num(format_seconds(value))


with results:
    # Three columns of three, one per theme: the pool; the wait for a first token and what comes out; the pace of
    # the tokens after it. One block each (not a row of blocks per line), and on a phone they stack in that order.
    pool_column, wait_column, pace_column = st.columns(3)
    pool_column.metric(
        t("preemption.metric_preemptions"),
        ui.num(format_tokens(summary.preemptions)),
        help=t("preemption.metric_preemptions_help"),
    )
    pool_column.metric(t("preemption.metric_blocks"), ui.num(format_tokens(server.num_blocks)))
    pool_column.metric(t("preemption.metric_pool"), lesson.mem(pool_bytes), help=t("preemption.metric_pool_help"))
    wait_column.metric(t("preemption.metric_p50_ttft"), seconds(summary.p50_ttft_s))
    wait_column.metric(t("preemption.metric_p99_ttft"), seconds(summary.p99_ttft_s))
    wait_column.metric(
        t("preemption.metric_throughput"), ui.num(format_tokens_per_s(summary.output_tokens_per_s, unit=False))
    )
    pace_column.metric(t("preemption.metric_mean_tpot"), seconds(summary.mean_tpot_s))
    pace_column.metric(t("preemption.metric_p99_tpot"), seconds(summary.p99_tpot_s))
    pace_column.metric(
        t("preemption.metric_jitter"), seconds(summary.mean_itl_std_s), help=t("preemption.metric_jitter_help")
    )

subtitle = t(
    "preemption.chart_subtitle",
    model=model.name,
    gpu=gpu.name,
    requests=ui.num(format_tokens(workload.num_requests)),
    rate=ui.num(f"{workload.arrival_rate_per_s:g}"),
    blocks=ui.num(format_tokens(server.num_blocks)),
    mode=mode_labels[server.preemption_mode],
    seed=workload.seed,
)
separators = ui.separators()
lesson.chart(
    lesson.figure(
        occupancy_figure,
        result,
        separators=separators,
        labels={
            "title": t("preemption.occupancy_title"),
            "subtitle": subtitle,
            "x_title": t("preemption.time_axis"),
            "y_title": t("preemption.occupancy_axis"),
            "used": t("preemption.used"),
            "full": t("preemption.full"),
            "preemption": t("preemption.preemption_marker"),
            "blocks": t("preemption.blocks"),
            "time": t("preemption.time"),
        },
    ),
    key="pr_occupancy_chart",
)

# ---------------------------------------------------------------- the alarm

if gpu_pool <= 0:
    st.warning(
        t("preemption.no_room", model=model.name, gpu=gpu.name, weights=lesson.mem(weights)),
        icon=":material/block:",
    )
elif pool_bytes > gpu_pool:
    st.warning(
        t("preemption.too_big", pool=lesson.mem(pool_bytes), gpu=gpu.name, room=lesson.mem(gpu_pool)),
        icon=":material/warning:",
    )
if summary.preemptions > 0:
    st.warning(
        t(
            "preemption.alarm",
            preemptions=ui.num(format_tokens(summary.preemptions)),
            recomputed=ui.num(format_tokens(summary.recomputed_tokens)),
        ),
        icon=":material/notifications_active:",
    )
else:
    st.success(
        t(
            "preemption.calm",
            peak=ui.num(format_tokens(summary.peak_used_blocks)),
            blocks=ui.num(format_tokens(server.num_blocks)),
        ),
        icon=":material/check_circle:",
    )

verdict = t("preemption.verdict_limit") if summary.preemptions > 0 else t("preemption.verdict_ok")
lesson.formula(
    t("preemption.alarm_symbolic"),
    rf"{latex_number(summary.preemptions, ui.language())} {'>' if summary.preemptions > 0 else '='} 0"
    + rf" \;\Rightarrow\; \text{{{verdict}}}",
)

with prediction:
    ui.practice.predict("max_context", stem="preemption", model=model, gpu=gpu, utilization=UTILIZATION)
lesson.takeaway(t("preemption.takeaway"))

# ---------------------------------------------------------------- the rule

st.subheader(t("preemption.rule_title"))
lang = ui.language()
longest = int((result.requests.prompt_tokens + result.requests.output_tokens).max())
lesson.formula(
    t("preemption.formula_symbolic"),
    rf"{server.max_num_seqs} \cdot \left\lceil \frac{{{latex_number(longest, lang)}}}"
    + rf"{{{server.block_size}}} \right\rceil"
    + rf" = {server.max_num_seqs} \cdot {latex_number(needed // server.max_num_seqs, lang)}"
    + rf" = \mathbf{{{latex_number(needed, lang)}}}",
)
st.markdown(
    t(
        "preemption.rule_text",
        needed=ui.num(format_tokens(needed)),
        longest=ui.num(format_tokens(longest)),
        per_block=lesson.size(per_block),
        block_size=server.block_size,
        model=model.name,
        needed_bytes=lesson.mem(needed * per_block),
        percent=pool_percent,
        blocks=ui.num(format_tokens(server.num_blocks)),
        peak=ui.num(format_tokens(summary.peak_used_blocks)),
    )
)

# ---------------------------------------------------------------- the queues

st.subheader(t("preemption.queue_section"))
st.markdown(t("preemption.queue_text"))
if server.preemption_mode == "swap":
    st.markdown(t("preemption.v0_swap"))
else:
    st.markdown(
        t(
            "preemption.v1_rules",
            full_prompt=t("preemption.on" if server.reserve_full_prompt else "preemption.off"),
            prefix_caching=t("preemption.on" if server.prefix_caching else "preemption.off"),
            reused=ui.num(format_tokens(int(result.reused_tokens.sum()))),
            recomputed=ui.num(format_tokens(summary.recomputed_tokens)),
        )
    )
lesson.chart(
    lesson.figure(
        queue_figure,
        result,
        separators=separators,
        labels={
            "title": t("preemption.queue_title"),
            "subtitle": subtitle,
            "x_title": t("preemption.time_axis"),
            "y_title": t("preemption.queue_axis"),
            "running": t("preemption.running"),
            "waiting": t("preemption.waiting"),
            "swapped": t("preemption.swapped"),
            "time": t("preemption.time"),
        },
    ),
    key="pr_queue_chart",
)

# ---------------------------------------------------------------- latency per request

st.subheader(t("preemption.latency_section"))
st.markdown(t("preemption.latency_text"))
lesson.chart(
    lesson.figure(
        latency_figure,
        result,
        separators=separators,
        labels={
            "title": t("preemption.latency_title"),
            "subtitle": subtitle,
            "x_title": t("preemption.arrival_axis"),
            "ttft_title": t("preemption.ttft_axis"),
            "tpot_title": t("preemption.tpot_axis"),
            "smooth": t("preemption.smooth"),
            "preempted": t("preemption.preempted"),
            "request": t("preemption.request"),
            "preemptions": t("preemption.preemptions"),
        },
    ),
    key="pr_latency_chart",
)
st.caption(
    t(
        "preemption.model_note",
        model=model.name,
        gpu=gpu.name,
        step=seconds(server.weights_read_s),
        swap=seconds(server.swap_s_per_block),
        block_size=DEFAULT_BLOCK_SIZE,
        version=VLLM_VERSION,
    )
)

glossary.terms_used("preemption")
