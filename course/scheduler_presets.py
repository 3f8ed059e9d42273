"""The preemption lesson's scenarios: a workload and a server for :func:`kvcore.scheduler.simulate`.

Course material, not domain: the numbers are chosen to tell a story (a pool that
never preempts, one that preempts hundreds of times), and every figure quoted
here is what kvcore computes for them (tests/kvcore/test_scheduler.py and
test_scheduler_golden.py hold them to it).

All three serve the same trace: 1,000 lognormal requests (prompts 512 tokens,
outputs 256 on average, spread 0.5, max_model_len 4,096) arriving at 20 per
second (``Workload()``, seed 0), with max_num_seqs = 64 and 16-token blocks. The
step costs are ``ServerConfig``'s defaults: Llama 3.1 8B in BF16 on one H100 SXM
(``MODEL_ID``, ``GPU_ID``).

* ``right-sized`` — ``blocks_for_no_preemption`` for the trace's longest request
  (2,209 tokens): 64 · ceil(2,209 / 16) = 64 · 139 = 8,896 blocks; no preemption
  can happen.
* ``too-small`` — 2,000 blocks (32,000 tokens): about what the ~42 requests in
  flight hold on average when nothing stops them (1,811 blocks, time-weighted,
  in the right-sized run) but not at the peaks, so it preempts (327 times,
  recompute) and the queue's TTFT grows to seconds (p99 5.9 s).
* ``too-small-swap`` — the same pool, preempting by swap (vLLM V0 only:
  ``PreemptionMode.SWAP``, forced for every request as ``--preemption-mode swap``
  did; by default V0 swapped only groups of several sequences): the blocks go to
  CPU memory and back instead of being recomputed.

These figures are the recorded model (no V1 rule on; the golden cases of
tests/kvcore/test_scheduler_golden.py hold them). ``preset(name, release="0.33.0")``
gives the same scenario under that release's scheduler rules
(``kvcore.scheduler.vllm_rules``: full-prompt admission, prefix caching), as the
lesson runs it: ``too-small`` then preempts 290 times, recomputes 69,027 tokens and
finds 80,256 in the prefix cache (p99 TTFT 3.7 s); ``right-sized`` still never
preempts. The swap preset is V0's and keeps its rules whatever the release.
"""

from __future__ import annotations

import dataclasses

from kvcore.errors import KvError
from kvcore.scheduler import ServerConfig, Workload, blocks_for_no_preemption, generate_requests, vllm_rules
from kvcore.vllm_versions import vllm_release

__all__ = ["GPU_ID", "MODEL_ID", "PRESETS", "preset"]

#: The presets' names, in the order the lesson shows them.
PRESETS: tuple[str, ...] = ("right-sized", "too-small", "too-small-swap")
#: The model and GPU whose step costs ``ServerConfig``'s defaults are (models.csv and gpus.csv ids).
MODEL_ID, GPU_ID = "llama-3.1-8b", "h100-sxm"
#: Concurrent requests the presets allow (vLLM's ``max_num_seqs``; its default is 256).
_MAX_NUM_SEQS = 64
#: The too-small pool, in blocks of 16 tokens.
_TOO_SMALL_BLOCKS = 2000


def preset(name: str, *, release: str | None = None) -> tuple[Workload, ServerConfig]:
    """The workload and the server of preset `name` (one of ``PRESETS``; see the module docstring).

    `release` (a vLLM version such as "0.33.0"): the recompute presets under its scheduler
    rules (``vllm_rules``); None, the recorded model. The swap preset is V0's either way.

    >>> workload, server = preset("too-small")
    >>> workload.num_requests, server.num_blocks, server.max_num_seqs
    (1000, 2000, 64)
    >>> preset("too-small", release="0.33.0")[1].prefix_caching
    True
    """
    if name not in PRESETS:
        raise KvError("unknown_preset", f"unknown preset {name!r}: use one of {', '.join(PRESETS)}", preset=name)
    workload = Workload()
    if name == "right-sized":
        trace = generate_requests(workload)
        blocks = blocks_for_no_preemption(
            max_num_seqs=_MAX_NUM_SEQS, max_request_tokens=trace.prompt_tokens + trace.output_tokens
        )
        server = ServerConfig(num_blocks=blocks, max_num_seqs=_MAX_NUM_SEQS)
    else:
        server = ServerConfig(num_blocks=_TOO_SMALL_BLOCKS, max_num_seqs=_MAX_NUM_SEQS)
    if name == "too-small-swap":
        return workload, dataclasses.replace(server, preemption_mode="swap")
    return workload, server if release is None else vllm_rules(server, vllm_release(release))
