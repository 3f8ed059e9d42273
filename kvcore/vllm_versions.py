"""What a vLLM release does at start-up: its engine, how it measures the budget, its defaults, its log.

vLLM has sized its KV pool by four different formulas and two engines since 0.5; a figure
that ignores which one ran is right only by luck. Everything below was read in the
releases' own wheels (``pip download vllm==X --no-deps``), file and function named where
each rule is used. Three eras, as the lessons name them:

* **V0** — the original engine (vllm/worker/worker.py ``determine_num_available_blocks``),
  the only one up to 0.7.x and the fallback of 0.8.x–0.9.x for GPUs below compute
  capability 8.0 and for an FP8 KV cache. It profiles ``max_num_batched_tokens`` prefill
  tokens — ``max(max_model_len, 2048)`` unless chunked prefill is on — over
  ``max_num_seqs`` = 256 sequences and samples their logits. Non-torch memory is the whole
  device's in 0.6.4.x, only its growth since start-up in the others.
* **early V1** — vllm/v1/worker/gpu_worker.py from 0.6.5 to 0.8.5.post1 (the default engine
  from 0.8.0): ``total · u − (torch peak + whole-device non-torch)``; the dummy sampler runs
  from 0.8.0.
* **V1** — 0.9 on: ``memory_profiling`` (vllm/utils or vllm/utils/mem_utils.py), non-torch
  growth after a baseline snapshot taken before NCCL (0.9–0.10) or after it (0.11 on); the
  CUDA-graph estimate (``profile_cudagraph_memory``) is subtracted by default from 0.20.0,
  except for models on Model Runner V2 between 0.22.1 and 0.28.x (its estimate is 0).

:func:`vllm_release` maps any release number to these rules; ``NEWEST_RELEASE`` is the newest
one modelled and the default everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .dtypes import dtype_name
from .errors import KvError
from .hardware import GpuSpec
from .model import ModelSpec
from .units import GiB

__all__ = [
    "MODELLED_RELEASES",
    "NEWEST_RELEASE",
    "Entry",
    "VllmRelease",
    "batch_defaults",
    "kv_cache_format",
    "parse_release",
    "vllm_release",
]

Engine = Literal["V0", "V1"]
Era = Literal["V0", "early V1", "V1"]
Entry = Literal["serve", "llm"]
NonTorch = Literal["device", "growth"]

#: The newest release whose code was read; the default of the CLI and the pages.
NEWEST_RELEASE = "0.33.0"
#: Releases read to build these rules, one per change (the rest map to the era they fall in).
MODELLED_RELEASES = (
    "0.5.5",
    "0.6.3.post1",
    "0.6.4.post1",
    "0.6.6.post1",
    "0.7.3",
    "0.8.0",
    "0.8.5.post1",
    "0.9.2",
    "0.10.2",
    "0.11.0",
    "0.14.0",
    "0.18.0",
    "0.20.0",
    "0.25.1",
    "0.26.0",
    "0.27.0",
    "0.28.0",
    "0.29.0",
    "0.33.0",
)

#: GPUs of data/gpus.csv below compute capability 8.0 (T4 7.5, V100 7.0): vLLM 0.8–0.9 run them on V0.
_PRE_AMPERE = ("t4", "v100")

_RELEASE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


#: Names vLLM's ``--kv-cache-dtype`` takes for the model's own 16-bit type.
_AUTO_KV = ("auto", "", "bf16", "bfloat16", "fp16", "float16", "half")


def kv_cache_format(name: str | None) -> str:
    """A ``--kv-cache-dtype`` value as kvcore sizes it: "auto" (the model's 16-bit type), "fp8" for every FP8
    variant vLLM accepts ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", …), else the dtype's kvcore name.

    >>> kv_cache_format("fp8_e5m2"), kv_cache_format("bfloat16")
    ('fp8', 'auto')
    """
    lowered = str(name or "auto").strip().lower()
    if lowered in _AUTO_KV:
        return "auto"
    if lowered.startswith(("fp8", "float8")):
        return "fp8"
    return dtype_name(lowered)


def parse_release(version: str) -> tuple[int, int, int]:
    """A release number as (major, minor, patch): "0.6.4.post1" → (0, 6, 4), "v0.10" → (0, 10, 0).

    Suffixes (.postN, rcN, .devN+g…) map to the release they belong to. KvError
    ``unknown_vllm_version`` when the text is not a release number or lies outside 0.1–1.x.

    >>> parse_release("0.10.2rc2.dev61+ge9b92dcd8")
    (0, 10, 2)
    """
    match = _RELEASE.match(str(version))
    if match is None or int(match.group(1)) > 1 or (int(match.group(1)), int(match.group(2))) < (0, 1):
        raise KvError(
            "unknown_vllm_version",
            f"{version!r} is not a vLLM release number such as {NEWEST_RELEASE}",
            value=str(version),
            newest=NEWEST_RELEASE,
        )
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class VllmRelease:
    """The start-up rules of one vLLM release for one GPU, model and set of flags.

    ``non_torch`` says what the release's non-torch term counts: the whole device ("device":
    the CUDA context, NCCL and other processes) or only its growth after the baseline snapshot
    ("growth"); ``nccl_in_baseline`` whether NCCL's buffers are taken before that snapshot (and so
    never subtracted). ``profile_sampler``: the profiling run samples ``max_num_seqs`` rows of
    logits; ``profile_logit_rows``: which rows it computes logits for. ``cuda_graphs_subtracted``:
    the pool loses the estimated CUDA-graph memory (False also under --enforce-eager).
    ``printed_tokens``: "blocks" prints blocks · block_size, "concurrency" int(concurrency ·
    max_model_len) (0.20.0 on). ``null_block_in_fit``: the fit check keeps one block back (0.29.0 on).
    ``in_flight_batches``: batches a sliding layer must hold beside its window (2 under async
    scheduling from 0.26.0). ``flashinfer_sampler``: the sampler is FlashInfer's by default (0.21.0 on, compute
    capability 8.0 and up: ``VLLM_USE_FLASHINFER_SAMPLER`` defaults to on, vllm/envs.py); before, it was used
    only when installed (0.8–0.13) or asked for (0.14–0.20).
    """

    version: tuple[int, int, int]
    label: str
    engine: Engine
    era: Era
    non_torch: NonTorch
    nccl_in_baseline: bool
    profile_sampler: bool
    profile_logit_rows: Literal["none", "tokens", "seqs"]
    cuda_graphs_subtracted: bool
    full_and_piecewise_graphs: bool
    printed_tokens: Literal["blocks", "concurrency"]
    null_block_in_fit: bool
    in_flight_batches: int
    chunked_prefill_tokens_v0: int
    flashinfer_sampler: bool = False

    @property
    def name(self) -> str:
        """The release as written: "0.6.4"."""
        return ".".join(str(part) for part in self.version)

    @property
    def pp_remainder_on_last(self) -> bool:
        """Whether the last pipeline stage takes the layers that do not divide evenly (before 0.8.0).

        vllm/distributed/utils.py ``get_pp_indices``: 0.7.3 gives the last stage L mod pp more; 0.8.0
        on gives them one each to the stages before the last (:func:`kvcore.vllm_pool.pp_partition`).
        """
        return self.version < (0, 8, 0)

    def describe(self) -> dict[str, object]:
        """Every rule as a plain dict (the CLI's JSON)."""
        return {
            "release": self.label,
            "engine": self.engine,
            "era": self.era,
            "non_torch": self.non_torch,
            "nccl_in_baseline": self.nccl_in_baseline,
            "profile_sampler": self.profile_sampler,
            "cuda_graphs_subtracted": self.cuda_graphs_subtracted,
            "printed_tokens": self.printed_tokens,
            "null_block_in_fit": self.null_block_in_fit,
            "pp_remainder_on_last": self.pp_remainder_on_last,
        }


def vllm_release(
    version: str = NEWEST_RELEASE,
    *,
    gpu: GpuSpec | None = None,
    model: ModelSpec | None = None,
    kv_dtype: str = "auto",
    enforce_eager: bool = False,
    pp: int = 1,
    weights_dtype: str | None = None,
) -> VllmRelease:
    """The rules `version` follows at start-up on `gpu` with `model` and these flags.

    Engine: V0 before 0.8.0; from 0.8.0 V1 unless ``_is_v1_supported_oracle`` falls back (vllm/
    engine/arg_utils.py, 0.8.0–0.9.x): compute capability below 8.0, an FP8 KV cache, pipeline
    parallelism (0.8.x), a bitsandbytes checkpoint (`weights_dtype` "nf4", 0.8.x). From 0.10.0 V1
    always. The rest follows the release (the table in the module docstring; sources: eras read in
    vllm 0.5.5 … 0.33.0, see ``MODELLED_RELEASES``).

    >>> vllm_release("0.6.4.post1").era, vllm_release("0.8.5").era, vllm_release("0.20.0").cuda_graphs_subtracted
    ('V0', 'early V1', True)
    """
    v = parse_release(version)
    engine: Engine = "V1"
    if v < (0, 8, 0):
        engine = "V0"
    elif v < (0, 10, 0):
        pre_ampere = gpu is not None and gpu.id.startswith(_PRE_AMPERE)
        bitsandbytes = str(weights_dtype or "").lower() in ("nf4", "bnb-4bit", "bitsandbytes") and v < (0, 9, 0)
        if pre_ampere or bitsandbytes or kv_cache_format(kv_dtype) != "auto" or (pp > 1 and v < (0, 9, 0)):
            engine = "V0"
    if engine == "V0":
        return VllmRelease(
            version=v,
            label=str(version),
            engine="V0",
            era="V0",
            # 0.6.4.x (E2): T·u − (torch peak + whole-device non-torch); otherwise growth since init_device.
            non_torch="device" if (0, 6, 4) <= v < (0, 6, 5) else "growth",
            nccl_in_baseline=False,
            profile_sampler=True,
            profile_logit_rows="seqs",
            cuda_graphs_subtracted=False,
            full_and_piecewise_graphs=False,
            printed_tokens="blocks",
            null_block_in_fit=False,
            in_flight_batches=1,
            chunked_prefill_tokens_v0=512 if v < (0, 6, 5) else 2048,
        )
    early = v < (0, 9, 0)
    return VllmRelease(
        version=v,
        label=str(version),
        engine="V1",
        era="early V1" if early else "V1",
        non_torch="device" if early and v >= (0, 6, 5) else "growth",
        nccl_in_baseline=v >= (0, 11, 0),
        profile_sampler=v >= (0, 8, 0),
        profile_logit_rows="none" if v < (0, 6, 5) else ("tokens" if v < (0, 7, 3) else "seqs"),
        cuda_graphs_subtracted=_cuda_graphs_subtracted(v, model=model, enforce_eager=enforce_eager),
        full_and_piecewise_graphs=v >= (0, 11, 0),
        printed_tokens="concurrency" if v >= (0, 20, 0) else "blocks",
        null_block_in_fit=v >= (0, 29, 0),
        in_flight_batches=2 if v >= (0, 26, 0) and pp == 1 else 1,
        chunked_prefill_tokens_v0=2048,
        flashinfer_sampler=v >= (0, 21, 0) and not (gpu is not None and gpu.id.startswith(_PRE_AMPERE)),
    )


def _cuda_graphs_subtracted(v: tuple[int, int, int], *, model: ModelSpec | None, enforce_eager: bool) -> bool:
    """V1: the CUDA-graph estimate comes off the pool from 0.20.0 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    defaults to "1"), never under --enforce-eager, and not for a model on Model Runner V2 from 0.22.1 to
    0.28.x, whose ``profile_cudagraph_memory`` returns 0: dense unquantised Qwen3 from 0.22.1, every
    dense, non-hybrid model from 0.25.1 (vllm/config/vllm.py ``use_v2_model_runner``)."""
    if enforce_eager or v < (0, 20, 0):
        return False
    if model is not None and (0, 22, 1) <= v < (0, 29, 0):
        dense = model.num_experts == 0 and not any(layer.kind == "linear" for layer in model.layers)
        qwen3 = "qwen3" in (model.hf_id or model.id).lower() and model.weights_dtype in ("bf16", "fp16")
        if dense and (v >= (0, 25, 1) or qwen3):
            return False
    return True


def batch_defaults(
    release: VllmRelease, *, gpu: GpuSpec, entry: Entry = "serve", max_model_len: int
) -> tuple[int, int]:
    """``(max_num_batched_tokens, max_num_seqs)`` as `release` picks them for `gpu` and `entry` when not given.

    V0 (vllm/config.py ``SchedulerConfig``, vllm/engine/arg_utils.py): 256 sequences;
    ``max(max_model_len, 2048)`` tokens, or the chunked-prefill budget (512 before 0.6.5, then
    2048) when chunked prefill switches itself on, for max_model_len > 32,768. Early V1: 2048
    (``vllm serve``) / 8192 (``LLM``) tokens and 1024 sequences, H100/H200 8192 / 16384 by name
    from 0.7.0, other GPUs 256 sequences in 0.8.4; from 0.8.5 by memory, ≥ 70 GiB (not A100
    from 0.9): 8192 / 16384 tokens and 1024 sequences, else 2048 / 8192 and 256
    (``get_batch_defaults``); from 0.28.0 ≥ 160 GiB: 16384 tokens for both entries.

    >>> from kvcore.data import load_gpus
    >>> gpus = load_gpus()
    >>> batch_defaults(vllm_release("0.33.0"), gpu=gpus["h100-sxm"], max_model_len=8192)
    (8192, 1024)
    >>> batch_defaults(vllm_release("0.33.0"), gpu=gpus["a100-80gb"], max_model_len=8192)
    (2048, 256)
    """
    llm = entry == "llm"
    v = release.version
    if release.engine == "V0":
        tokens = release.chunked_prefill_tokens_v0 if max_model_len > 32768 else max(max_model_len, 2048)
        return tokens, 256
    name = gpu.name.lower()
    memory = gpu.reported_memory_bytes
    if v < (0, 8, 5):
        big = v >= (0, 7, 0) and ("h100" in name or "h200" in name)
        seqs = 1024 if big or v < (0, 8, 4) else 256  # 0.8.4: 256 off H100/H200 (arg_utils.py _set_default_args_v1)
        return (16384 if llm else 8192) if big else (8192 if llm else 2048), seqs
    big = memory >= 70 * GiB and (v < (0, 9, 0) or "a100" not in name)
    if v >= (0, 28, 0) and memory >= 160 * GiB:
        return 16384, 1024
    if big:
        return (16384 if llm else 8192), 1024
    return (8192 if llm else 2048), 256
