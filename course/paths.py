"""Named course paths: the orders in which an instructor may send students through the lessons.

A path is the text of a ``?cp_path=`` link: steps separated by commas, a lesson by
its stem (course.lessons), ``quiz:<stem>`` for its quiz, ``practice:<n>`` for exercise
set n. ``ui.course`` parses and shows them; ``?cp_id=<name>`` opens one by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["DEFAULT_PATH", "PATHS", "SEED_MODULE"]

#: Seed 002's course module in its order ("KV Cache: Memória Eficiente": why the cache, its memory, GQA/MQA,
#: prefill vs decode, Flash Attention, quantization, PagedAttention, prompt caching, …), with the lessons this
#: course adds, a quiz after each lesson and exercises at the end.
SEED_MODULE = (
    "why_cache,quiz:why_cache,memory,quiz:memory,attention_variants,quiz:attention_variants,"
    "prefill_decode,quiz:prefill_decode,decode_speed,quiz:decode_speed,flash_attention,quiz:flash_attention,"
    "kv_quantization,quiz:kv_quantization,sizing,quiz:sizing,prefix_caching,quiz:prefix_caching,"
    "paged_attention,quiz:paged_attention,preemption,quiz:preemption,agent_1m,quiz:agent_1m,practice:1"
)
#: Every named path, by the id a link gives (``?cp_id=``), in the order the picker offers them.
PATHS: Mapping[str, str] = MappingProxyType(
    {
        "seed_module": SEED_MODULE,
        "serving_engineer": (
            "vllm_pool,quiz:vllm_pool,engines,quiz:engines,vllm_log,quiz:vllm_log,paged_attention,quiz:paged_attention,"
            "prefix_caching,quiz:prefix_caching,preemption,quiz:preemption,sizing,quiz:sizing,practice:2"
        ),
        "first_class": "why_cache,memory,quiz:memory,attention_variants,prefill_decode,quiz:prefill_decode,"
        "flash_attention,quiz:flash_attention",
    }
)
#: The path a course page opens on.
DEFAULT_PATH = "seed_module"
