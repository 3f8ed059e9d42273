"""``python -m kvcore``: the calculator on the command line.

Every subcommand prints a few readable lines, or with ``--json`` one JSON object.
Bad input never shows a traceback: one line on stderr and exit code 2.

``--config PATH`` reads a Hugging Face config.json (:func:`kvcore.hf_config.read_config`):
its parameters are counted, so weight figures need no ``--params-b``, and what the
reading assumed follows the results (``assumed: …`` lines; an ``assumptions`` list in
JSON). ``models --config PATH`` prints the reading itself.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NoReturn

from . import units
from .budget import DEFAULT_OVERHEAD_BYTES, DEFAULT_UTILIZATION, seed_budget
from .capacity import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    context_per_user,
    max_context_tokens,
    max_users,
    pool_report,
    tokens_that_fit,
)
from .data import load_gpus, load_models
from .dtypes import BYTES_PER_VALUE, bytes_per_value
from .engines import ENGINES, engine_startup
from .errors import KvError
from .hardware import GpuSpec, gpu
from .hf_config import ConfigReading, read_config_path
from .kv import kv_bytes_per_token, kv_cache_bytes, kv_cache_bytes_all_gpus, sequence_kv_bytes
from .memory import checkpoint_weights, model_weights_bytes
from .model import ModelSpec, uniform_model, with_changes
from .model_code import model_to_code
from .timing import (
    DEFAULT_MBU,
    DEFAULT_MFU,
    Rates,
    arithmetic_intensity,
    bound_by,
    decode_bytes_per_step,
    decode_flops_per_step,
    effective_ridge_point,
    matmul_peak_flop_per_s,
    phase_time_s,
    phase_times,
    prefill_bytes,
    prefill_flops,
    ridge_point,
    tokens_per_s,
)
from .vllm_startup import vllm_startup
from .vllm_versions import NEWEST_RELEASE, parse_release

EXIT_BAD_INPUT = 2

#: The option that sets the quantity a KvError names: (code, fields["name"]) → flag; code None matches any code.
#: kvcore's messages never name a flag (the app has none); the CLI puts the flag in front of them.
FLAGS: Mapping[tuple[str | None, str], str] = MappingProxyType(
    {
        (None, "context tokens"): "--context",
        (None, "concurrency"): "--concurrency",
        (None, "batch"): "--batch",
        (None, "prompt tokens"): "--prompt",
        (None, "tensor parallel size"): "--tp",
        (None, "tp"): "--tp",
        (None, "GPUs"): "--gpus",
        (None, "block size"): "--block-size",
        (None, "block size (tokens)"): "--block-size",
        (None, "max model length"): "--max-model-len",
        (None, "max model length (tokens)"): "--max-model-len",
        (None, "max_model_len"): "--max-model-len",
        (None, "max_num_batched_tokens"): "--max-num-batched-tokens",
        (None, "GPU memory"): "--gpu-memory-gib",
        (None, "GPU memory utilization"): "--gpu-memory-utilization",
        (None, "gpu_memory_utilization"): "--gpu-memory-utilization",
        (None, "usable share of GPU memory"): "--gpu-memory-utilization",
        (None, "overhead"): "--overhead-gib",
        (None, "weights"): "--weights-gib",
        (None, "KV pool"): "--kv-memory-gib",
        (None, "pool"): "--kv-memory-gib",
        (None, "bandwidth"): "--bandwidth-gbs",
        (None, "peak throughput"): "--tflops",
        (None, "efficiency"): "--efficiency",
        (None, "MBU"): "--efficiency",
        (None, "MFU"): "--mfu",
        (None, "layers"): "--layers",
        (None, "num_hidden_layers"): "--layers",
        (None, "sliding layers"): "--sliding-layers",
        (None, "sliding_window"): "--sliding-window",
        (None, "num_key_value_heads"): "--kv-heads",
        (None, "num_attention_heads"): "--q-heads",
        (None, "head_dim"): "--head-dim",
        (None, "kv_lora_rank"): "--mla-latent",
        (None, "qk_rope_head_dim"): "--mla-rope",
        (None, "total_params"): "--params-b",
        (None, "active_params"): "--active-params-b",
        ("kv_heads_not_dividing", ""): "--kv-heads",
        ("tp_not_dividing", ""): "--tp",
        ("sliding_layers_exceed_layers", ""): "--sliding-layers",
        ("active_exceeds_total", ""): "--active-params-b",
        ("unknown_dtype", ""): "--kv-dtype / --weight-dtype",
        ("engine_needs_gpu", ""): "--gpu",
    }
)
#: KvError codes that an option left out explains → what to give.
REMEDIES: Mapping[str, str] = MappingProxyType({"params_unknown": "give --params-b or --weights-gib"})


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(EXIT_BAD_INPUT)


def _number(
    minimum_exclusive: float = 0.0, *, allow_equal: bool = False, maximum: float = math.inf
) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        low_ok = value >= minimum_exclusive if allow_equal else value > minimum_exclusive
        if not low_ok or value > maximum:
            low = f"≥ {minimum_exclusive:g}" if allow_equal else f"> {minimum_exclusive:g}"
            high = "" if maximum == math.inf else f" and ≤ {maximum:g}"
            raise argparse.ArgumentTypeError(f"{text!r} must be {low}{high}")
        return value

    return parse


def _whole(text: str) -> int:
    value = _number()(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number")
    return int(value)


def _dtype(text: str) -> str:
    try:
        bytes_per_value(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(_one_line(error)) from None
    return text.lower()


def _release(text: str) -> str:
    try:
        parse_release(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(_one_line(error)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its subcommands."""
    parser = _Parser(prog="python -m kvcore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    helps = {
        "kv": "KV cache bytes per token and for context × concurrency",
        "capacity": "the KV pool, in the seed's sizing rule and in vLLM's blocks",
        "decode": "memory-bound decode: bytes per step, time per token, tokens/s",
        "prefill": "compute-bound prefill: FLOPs and time to first token",
        "models": "list the models of data/models.csv",
        "gpus": "list the GPUs of data/gpus.csv",
        "startup": "the start-up lines an engine would print for these settings (vLLM, SGLang, llama.cpp, Ollama, "
        "TensorRT-LLM), and their numbers",
    }
    for name, text in helps.items():
        command = sub.add_parser(name, help=text, description=text)
        command.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "models":
            command.add_argument("--config", help="path of a Hugging Face config.json: print how kvcore reads it")
        if name in ("models", "gpus"):
            continue
        _model_options(command)
        _common_options(command)
        if name == "startup":
            _engine_options(command)
    return parser


def _engine_options(command: argparse.ArgumentParser) -> None:
    """The engines' own flags, spelled as each engine spells them (kvcore.engines)."""
    command.add_argument("--engine", choices=ENGINES, default="vllm", help="the engine to model (default vllm)")
    command.add_argument(
        "--kv-cache-dtype",
        help="vLLM/SGLang/TensorRT-LLM KV cache format (default auto: the model's 16-bit dtype; fp8, fp8_e5m2, …)",
    )
    sgl = command.add_argument_group("SGLang (server_args.py)")
    sgl.add_argument(
        "--mem-fraction-static",
        type=_number(maximum=1.0),
        help="share of the GPU for weights + KV pool (default: by GPU)",
    )
    sgl.add_argument("--page-size", type=_whole, default=1, help="tokens per page (default 1)")
    sgl.add_argument("--max-total-tokens", type=_whole, help="a cap on the pool's tokens")
    sgl.add_argument("--context-length", type=_whole, help="the longest request (default: the model's)")
    sgl.add_argument("--sglang-version", help="the SGLang release to model (default: the newest modelled)")
    cpp = command.add_argument_group("llama.cpp / Ollama (llama-server flags; Ollama maps them to its own)")
    cpp.add_argument("--ctx-size", type=_whole, help="-c: cells of the cache, every slot together (default 4096)")
    cpp.add_argument("--parallel", type=_whole, help="-np: parallel sequences (slots)")
    cpp.add_argument("--cache-type-k", help="-ctk: f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl (default f16)")
    cpp.add_argument("--cache-type-v", help="-ctv: as --cache-type-k (default f16); Ollama: one type for both")
    cpp.add_argument("--ubatch-size", type=_whole, default=512, help="-ub (default 512)")
    cpp.add_argument("--batch-size", type=_whole, default=2048, help="-b (default 2048)")
    cpp.add_argument("--flash-attn", choices=("on", "off", "auto"), default="auto", help="-fa (default auto)")
    cpp.add_argument("--swa-full", action="store_true", help="keep every sliding layer at full length")
    cpp.add_argument("--kv-unified", action="store_true", help="-kvu: one cache shared by every slot")
    cpp.add_argument("--llamacpp-build", type=_whole, help="the llama.cpp build bNNNN (default: the newest modelled)")
    cpp.add_argument("--n-gpu-layers", type=_whole, help="-ngl: layers offloaded to the GPU (default: all)")
    cpp.add_argument("--ollama-version", help="the Ollama release to model (default: the newest modelled)")
    trt = command.add_argument_group("TensorRT-LLM (KvCacheConfig)")
    trt.add_argument(
        "--free-gpu-memory-fraction",
        type=_number(maximum=1.0),
        help="share of the memory free after the engine loads (default 0.9)",
    )
    trt.add_argument("--tokens-per-block", type=_whole, help="tokens per KV block (default: the release's, 32)")
    trt.add_argument("--max-tokens-in-paged-kv-cache", type=_whole, help="a cap on the pool's tokens (max_tokens)")
    trt.add_argument("--trtllm-version", help="the TensorRT-LLM release to model (default: the newest modelled)")
    trt.add_argument(
        "--backend", choices=("pytorch", "trt"), default="pytorch", help="TensorRT-LLM backend (default pytorch)"
    )


def _model_options(command: argparse.ArgumentParser) -> None:
    group = command.add_argument_group("model (one of --model, --config, or the explicit numbers)")
    group.add_argument("--model", help="a model id of data/models.csv (see `models`)")
    group.add_argument("--config", help="path of a Hugging Face config.json")
    group.add_argument("--layers", type=_whole, help="number of layers")
    group.add_argument("--kv-heads", type=_whole, help="KV heads per layer (overrides the model's own)")
    group.add_argument("--head-dim", type=_whole, help="values per head")
    group.add_argument("--q-heads", type=_whole, help="query heads (default: = KV heads)")
    group.add_argument("--mla-latent", type=_whole, help="MLA kv_lora_rank (every layer MLA)")
    group.add_argument("--mla-rope", type=_whole, default=0, help="MLA qk_rope_head_dim")
    group.add_argument("--sliding-window", type=_whole, help="sliding window in tokens")
    group.add_argument("--sliding-layers", type=_whole, default=0, help="how many of the layers slide")
    group.add_argument("--params-b", type=_number(), help="total parameters, billions")
    group.add_argument("--active-params-b", type=_number(), help="active parameters per token (MoE), billions")


def _common_options(command: argparse.ArgumentParser) -> None:
    dtypes = "/".join(BYTES_PER_VALUE)
    command.add_argument("--kv-dtype", type=_dtype, default="bf16", help=f"KV cache format ({dtypes}); default bf16")
    command.add_argument(
        "--weight-dtype", type=_dtype, help="weights format; default: the checkpoint's own (data/models.csv), else bf16"
    )
    command.add_argument("--context", type=_whole, default=8192, help="tokens per sequence; default 8192")
    command.add_argument("--concurrency", type=_whole, default=1, help="concurrent sequences; default 1")
    command.add_argument("--batch", type=_whole, help="sequences decoded together (default: --concurrency)")
    command.add_argument("--prompt", type=_whole, help="prompt tokens for prefill (default: --context)")
    command.add_argument("--tp", type=_whole, default=1, help="tensor-parallel size (default 1)")
    command.add_argument("--gpu", help="a GPU id of data/gpus.csv (see `gpus`)")
    command.add_argument("--gpus", type=_whole, help="GPUs sharing the work (default: --tp)")
    command.add_argument("--gpu-memory-gib", type=_number(), help="GPU memory in GiB (instead of --gpu)")
    command.add_argument(
        "--gpu-memory-utilization",
        type=_number(maximum=1.0),
        default=DEFAULT_UTILIZATION,
        help=f"fraction in (0, 1]; default {DEFAULT_UTILIZATION:g} (kvcore.DEFAULT_ASSUMPTIONS)",
    )
    command.add_argument(
        "--overhead-gib",
        type=_number(allow_equal=True),
        help=f"capacity: use the seed's rule, VRAM · u − weights − this overhead in GiB "
        f"(the seed takes {DEFAULT_OVERHEAD_BYTES / units.GiB:g}); other commands: the overhead beside the cache",
    )
    command.add_argument("--weights-gib", type=_number(), help="weights per GPU in GiB (instead of parameters)")
    command.add_argument("--kv-memory-gib", type=_number(allow_equal=True), help="the KV pool per GPU, given directly")
    command.add_argument(
        "--block-size", type=_whole, help="tokens per KV block; default: vLLM's for the model and GPU (16, MLA 64/128)"
    )
    command.add_argument(
        "--max-num-batched-tokens",
        type=_whole,
        help="tokens per scheduler step (the profile run; a sliding window also holds it); default: vLLM's for "
        "the release, GPU and entry point",
    )
    command.add_argument(
        "--max-num-seqs", type=_whole, help="sequences per step; default: vLLM's for the release and GPU"
    )
    command.add_argument("--pp", type=_whole, default=1, help="pipeline-parallel size (default 1)")
    command.add_argument(
        "--vllm-version",
        type=_release,
        default=NEWEST_RELEASE,
        help=f"the vLLM release whose start-up to model (any release number; default {NEWEST_RELEASE})",
    )
    command.add_argument(
        "--enforce-eager", action="store_true", help="no CUDA graphs (vLLM --enforce-eager): none are subtracted"
    )
    command.add_argument(
        "--entry",
        choices=("serve", "llm"),
        default="serve",
        help="vllm serve or the LLM(...) class: their default batch sizes differ (default serve)",
    )
    command.add_argument("--max-model-len", type=_whole, help="tokens per request (default: --context)")
    command.add_argument("--bandwidth-gbs", type=_number(), help="memory bandwidth per GPU, GB/s (instead of --gpu)")
    command.add_argument("--tflops", type=_number(), help="dense tensor TFLOP/s per GPU (instead of --gpu)")
    command.add_argument(
        "--efficiency",
        type=_number(maximum=1.0),
        default=DEFAULT_MBU,
        help=f"bandwidth efficiency (MBU); default {DEFAULT_MBU:g}",
    )
    command.add_argument("--kv-only", action="store_true", help="decode: count only the KV reads (the seed's ledger)")
    command.add_argument(
        "--mfu",
        type=_number(maximum=1.0),
        default=DEFAULT_MFU,
        help=f"model FLOPs utilisation; default {DEFAULT_MFU:g}",
    )


def resolve_model(args: argparse.Namespace) -> ModelSpec:
    """The model the options name, with --kv-heads and parameter overrides applied."""
    chosen = [flag for flag, value in (("--model", args.model), ("--config", args.config)) if value]
    if len(chosen) > 1:
        raise ValueError("give only one of --model and --config")
    params = args.params_b * 1e9 if args.params_b else None
    active = args.active_params_b * 1e9 if args.active_params_b else None
    if args.model:
        models = load_models()
        if args.model not in models:
            raise ValueError(f"unknown model {args.model!r}: run `python -m kvcore models` to list the ids")
        model = models[args.model]
    elif args.config:
        model = _config_reading(args).model
    else:
        if not args.layers or not (args.kv_heads or args.mla_latent):
            raise ValueError("choose a model: --model ID, --config PATH, or --layers N --kv-heads N --head-dim N")
        if not args.mla_latent and not args.head_dim:
            raise ValueError("give --head-dim N (values per head) with --layers and --kv-heads")
        if args.sliding_layers and not args.sliding_window:
            raise ValueError("--sliding-layers needs --sliding-window W (tokens)")
        kv_heads = args.kv_heads or args.q_heads or 1
        return uniform_model(
            num_hidden_layers=args.layers,
            num_key_value_heads=kv_heads,
            head_dim=args.head_dim or 1,
            num_attention_heads=args.q_heads or kv_heads,
            sliding_window=args.sliding_window,
            sliding_layers=args.sliding_layers if args.sliding_window else 0,
            kv_lora_rank=args.mla_latent or 0,
            qk_rope_head_dim=args.mla_rope,
            total_params=params,
            active_params=active,
        )
    changes: dict[str, Any] = {}
    if args.kv_heads:
        changes["num_key_value_heads"] = args.kv_heads
    if params:
        changes["total_params"] = params
        changes["active_params"] = active or params
    elif active:
        changes["active_params"] = active
    return with_changes(model, **changes) if changes else model


def _config_reading(args: argparse.Namespace) -> ConfigReading:
    """The reading of --config (read once per run and kept on the namespace)."""
    reading = getattr(args, "config_reading", None)
    if reading is None:
        reading = read_config_path(args.config)
        args.config_reading = reading
    return reading


def resolve_gpu(args: argparse.Namespace) -> GpuSpec | None:
    """The GPU named by --gpu, or None."""
    if not args.gpu:
        return None
    gpus = load_gpus()
    if args.gpu not in gpus:
        raise ValueError(f"unknown GPU {args.gpu!r}: run `python -m kvcore gpus` to list the ids")
    return gpus[args.gpu]


def _weights_per_gpu(args: argparse.Namespace, model: ModelSpec) -> float:
    if args.weights_gib is not None:
        return args.weights_gib * units.GiB
    return model_weights_bytes(
        model, bytes_per_param=bytes_per_value(args.weight_dtype or model.weights_dtype), tp=args.tp
    )


def run_kv(args: argparse.Namespace) -> dict[str, Any]:
    """Bytes per token and for context × concurrency."""
    model = resolve_model(args)
    b = bytes_per_value(args.kv_dtype)
    per_token = kv_bytes_per_token(model, bytes_per_value=b, tp=args.tp)
    total = float(
        kv_cache_bytes(model, context_tokens=args.context, concurrency=args.concurrency, bytes_per_value=b, tp=args.tp)
    )
    return {
        "model": model.name,
        "attention": model.attention_type,
        "kv_dtype": args.kv_dtype,
        "context_tokens": args.context,
        "concurrency": args.concurrency,
        "tp": args.tp,
        "bytes_per_token": per_token,
        "kv_cache_bytes": total,
        "kv_cache_bytes_all_gpus": float(
            kv_cache_bytes_all_gpus(
                model, context_tokens=args.context, concurrency=args.concurrency, bytes_per_value=b, tp=args.tp
            )
        ),
        "kv_cache_gib": units.gib(total),
    }


def run_capacity(args: argparse.Namespace) -> dict[str, Any]:
    """The KV pool and what it holds: vLLM's estimate by release, the seed's rule, or a given pool.

    Without --kv-memory-gib and --overhead-gib the pool is what the chosen vLLM release
    (--vllm-version, default the newest modelled) would leave on --gpu (kvcore.vllm_startup.vllm_startup);
    --overhead-gib switches to the seed's rule (VRAM · u − weights − overhead); --kv-memory-gib takes
    the logged pool and does the block arithmetic only.
    """
    model = resolve_model(args)
    gpu = resolve_gpu(args)
    b = bytes_per_value(args.kv_dtype)
    block_size = args.block_size or DEFAULT_BLOCK_SIZE
    chunk = args.max_num_batched_tokens or DEFAULT_MAX_NUM_BATCHED_TOKENS
    startup = None
    budget = None
    if args.kv_memory_gib is not None:
        max_model_len = args.max_model_len or args.context
        pool = args.kv_memory_gib * units.GiB
        weights = math.nan
        rule = "given pool (--kv-memory-gib)"
    elif args.overhead_gib is not None:
        max_model_len = args.max_model_len or args.context
        weights = _weights_per_gpu(args, model)
        budget = seed_budget(
            memory_bytes=_memory_bytes(args, gpu),
            utilization=args.gpu_memory_utilization,
            weights_bytes=weights,
            overhead_bytes=args.overhead_gib * units.GiB,
        )
        pool = budget.kv_pool_bytes
        rule = "seed 000's rule: VRAM · u − weights − overhead (--overhead-gib)"
    else:
        card = gpu or _custom_gpu(args)
        startup = vllm_startup(
            model,
            card,
            version=args.vllm_version,
            utilization=args.gpu_memory_utilization,
            max_model_len=args.max_model_len,
            max_num_batched_tokens=args.max_num_batched_tokens,
            max_num_seqs=args.max_num_seqs,
            kv_dtype=args.kv_dtype,
            weights_dtype=args.weight_dtype,
            enforce_eager=args.enforce_eager,
            entry=args.entry,
            block_size=args.block_size,
            tp=args.tp,
            pp=args.pp,
        )
        budget = startup.log.budget
        pool = budget.kv_pool_bytes
        max_model_len = startup.log.max_model_len
        block_size, chunk = startup.block_size, startup.max_num_batched_tokens * startup.release.in_flight_batches
        weights = checkpoint_weights(model, weights_dtype=args.weight_dtype, tp=args.tp, pp=args.pp).total_bytes
        rule = (
            f"vLLM {startup.release.label} ({startup.release.era}): M · u − weights − activation − non-torch − graphs"
        )
    report = pool_report(
        model,
        kv_pool_bytes=max(pool, 0.0),
        max_model_len=max_model_len,
        block_size=block_size,
        max_num_batched_tokens=chunk,
        bytes_per_value=b,
        tp=args.tp,
    )
    if startup is not None and startup.stages:
        # One stage holds its layers only: the seed-style figures below count the whole model's bytes per token,
        # so they get the stage's pool scaled up by L / stage layers (what the same tokens take on every layer).
        pool_all_layers = max(pool, 0.0) * report.bytes_per_token / startup.log.bytes_per_token
    else:
        pool_all_layers = pool
    tokens_seed = float(tokens_that_fit(kv_pool_bytes=pool_all_layers, bytes_per_token=report.bytes_per_token))
    sequence = sequence_kv_bytes(model, context_tokens=args.context, bytes_per_value=b, tp=args.tp)
    result: dict[str, Any] = {
        "model": model.name,
        "kv_dtype": args.kv_dtype,
        "weights_bytes": weights,
        "kv_pool_bytes": pool,
        "bytes_per_token": report.bytes_per_token,
        "block_size": report.block_size,
        "num_blocks": report.num_blocks,
        "tokens": report.tokens,
        "max_model_len": max_model_len,
        "max_concurrency": report.max_concurrency,
        "fits": report.fits and pool > 0,
        "estimated_max_model_len": report.estimated_max_model_len,
    }
    if startup is not None:
        log = startup.log
        result |= {
            "num_blocks": log.num_blocks,
            "tokens": startup.printed_tokens,
            "max_concurrency": log.max_concurrency,
            "fits": startup.fits,
            "estimated_max_model_len": log.estimated_max_model_len,
            "vllm_version": startup.release.label,
            "vllm_era": startup.release.era,
            "max_num_batched_tokens": startup.max_num_batched_tokens,
            "max_num_seqs": startup.max_num_seqs,
            "tp": log.tp,
            "pp": log.pp,
            "enforce_eager": startup.enforce_eager,
            "release_rules": startup.release.describe(),
            "budget_sources": {term.name: term.source for term in budget.terms} if budget else {},
        }
        if startup.stages:  # pipeline parallelism: every stage's own budget; the server keeps the fewest blocks
            result["weights_bytes"] = budget.term_bytes("weights") if budget else weights
            result["tightest_stage"] = startup.tightest_stage
            result["stages"] = [
                {
                    "stage": index,
                    "layers": layers,
                    "kv_pool_bytes": stage.kv_pool_bytes,
                    "num_blocks": stage.num_blocks,
                    "budget": stage.budget.as_dict(),
                }
                for index, (stage, layers) in enumerate(zip(startup.stages, startup.stage_layers, strict=True))
            ]
    result |= {
        "tokens_that_fit": tokens_seed,
        "context_per_user": float(context_per_user(pool_tokens=tokens_seed, concurrency=args.concurrency)),
        "max_context_per_user": float(
            max_context_tokens(
                model, kv_pool_bytes=pool_all_layers, concurrency=args.concurrency, bytes_per_value=b, tp=args.tp
            )
        ),
        "context_tokens": args.context,
        "users_that_fit": float(max_users(kv_pool_bytes=pool_all_layers, sequence_bytes=sequence)),
        "concurrency": args.concurrency,
        "budget_rule": rule,
        "budget": {} if budget is None else budget.as_dict(),
    }
    return result


def _memory_bytes(args: argparse.Namespace, gpu: GpuSpec | None) -> float:
    """The GPU memory the seed's rule starts from: --gpu-memory-gib, else the card's nominal size."""
    if args.gpu_memory_gib:
        return float(args.gpu_memory_gib * units.GiB)
    if gpu is None:
        raise ValueError("give --gpu ID, --gpu-memory-gib N, or the pool itself with --kv-memory-gib N")
    return gpu.memory_bytes


def _custom_gpu(args: argparse.Namespace) -> GpuSpec:
    """A GPU known only by --gpu-memory-gib, taken as the total torch reports (vLLM's budget needs no more)."""
    if not args.gpu_memory_gib:
        raise ValueError("give --gpu ID, --gpu-memory-gib N, or the pool itself with --kv-memory-gib N")
    gib = float(args.gpu_memory_gib)
    return gpu(
        id="custom",
        name=f"GPU with {gib:g} GiB",
        memory_gib=gib,
        torch_memory_gib=gib,
        bandwidth_gb_s=args.bandwidth_gbs or 1.0,
        bf16_dense_tflops=args.tflops or 1.0,
    )


def run_decode(args: argparse.Namespace) -> dict[str, Any]:
    """One decode step on the roofline (memory-bound at small batches)."""
    model = resolve_model(args)
    gpu = resolve_gpu(args)
    gpus = args.gpus or args.tp
    bandwidth = args.bandwidth_gbs * units.GB if args.bandwidth_gbs else (gpu.bandwidth_bytes_per_s if gpu else None)
    if bandwidth is None:
        raise ValueError("give --gpu ID or --bandwidth-gbs N (memory bandwidth per GPU)")
    rates = _rates(args, model, gpu, gpus=gpus)
    batch = args.batch or args.concurrency
    weights = args.weights_gib * units.GiB * gpus if args.weights_gib is not None else None
    if args.kv_only:
        weights = 0.0
    read = decode_bytes_per_step(
        model,
        context_tokens=args.context,
        batch=batch,
        weight_bytes_per_param=bytes_per_value(args.weight_dtype or model.weights_dtype),
        kv_bytes_per_value=bytes_per_value(args.kv_dtype),
        gpus=gpus,
        weights_bytes=weights,
    )
    flops = (
        float(decode_flops_per_step(model, context_tokens=args.context, batch=batch)) if model.active_params else None
    )
    step = float(phase_time_s(flops or 0.0, read.total, rates=rates))
    return {
        "model": model.name,
        "context_tokens": args.context,
        "batch": batch,
        "gpus": gpus,
        "bandwidth_bytes_per_s": bandwidth,
        "weights_bytes_per_step": float(read.weights_bytes),
        "kv_bytes_per_step": float(read.kv_bytes),
        "bytes_per_step": float(read.total),
        "step_time_s": step,
        "tokens_per_s": float(tokens_per_s(step)),
        "tokens_per_s_total": float(tokens_per_s(step, batch=batch)),
        **_roofline(flops, float(read.total), rates),
    }


def run_prefill(args: argparse.Namespace) -> dict[str, Any]:
    """The prefill of a prompt on the roofline (compute-bound once the prompt passes the ridge point)."""
    model = resolve_model(args)
    gpu = resolve_gpu(args)
    gpus = args.gpus or args.tp
    prompt = args.prompt or args.context
    if not args.tflops and gpu is None:
        raise ValueError("give --gpu ID or --tflops N (dense tensor TFLOP/s per GPU)")
    rates = _rates(args, model, gpu, gpus=gpus)
    flops = float(prefill_flops(model, prompt_tokens=prompt))
    moved = float(
        prefill_bytes(
            model,
            prompt_tokens=prompt,
            weight_bytes_per_param=bytes_per_value(args.weight_dtype or model.weights_dtype),
            kv_bytes_per_value=bytes_per_value(args.kv_dtype),
        )
    )
    return {
        "model": model.name,
        "prompt_tokens": prompt,
        "gpus": gpus,
        "peak_flop_per_s": rates.peak_flop_per_s,
        "mfu": args.mfu,
        "flops": flops,
        "ttft_s": float(phase_time_s(flops, moved, rates=rates)),
        **_roofline(flops, moved, rates),
    }


def _rates(args: argparse.Namespace, model: ModelSpec, gpu: GpuSpec | None, *, gpus: int) -> Rates:
    """--gpu's rates for the weights' format (or --tflops / --bandwidth-gbs), --mfu and --efficiency, over `gpus`.

    A rate neither given nor known from --gpu is infinite: that roof does not bind.
    """
    weights_dtype = args.weight_dtype or model.weights_dtype
    peak = matmul_peak_flop_per_s(gpu, weights_dtype=weights_dtype) if gpu else math.inf
    bandwidth = gpu.bandwidth_bytes_per_s if gpu else math.inf
    return Rates(
        peak_flop_per_s=args.tflops * units.TFLOP if args.tflops else peak,
        bandwidth_bytes_per_s=args.bandwidth_gbs * units.GB if args.bandwidth_gbs else bandwidth,
        mfu=args.mfu,
        mbu=args.efficiency,
        gpus=gpus,
    )


def _roofline(flops: float | None, num_bytes: float, rates: Rates) -> dict[str, Any]:
    """Both terms of the phase time, the arithmetic intensity, and which roof binds (when both rates are known)."""
    terms = phase_times(flops or 0.0, num_bytes, rates=rates)
    result: dict[str, Any] = {"mbu": rates.mbu, "memory_time_s": float(terms.memory_s)}
    if flops is None:
        return result
    intensity = float(arithmetic_intensity(flops, num_bytes))
    result.update(compute_time_s=float(terms.compute_s), arithmetic_intensity_flop_per_byte=intensity)
    both = {"peak_flop_per_s": rates.peak_flop_per_s, "bandwidth_bytes_per_s": rates.bandwidth_bytes_per_s}
    if all(math.isfinite(rate) for rate in both.values()):
        knee = effective_ridge_point(**both, mfu=rates.mfu, mbu=rates.mbu)
        result.update(ridge_point_flop_per_byte=ridge_point(**both), bound=bound_by(intensity, knee))
    return result


def run_models(args: argparse.Namespace) -> dict[str, Any]:
    """The model table, or with --config how kvcore reads that config.json."""
    if args.config:
        return _reading_summary(_config_reading(args))
    return {
        "models": [
            {
                "id": m.id,
                "name": m.name,
                "attention": m.attention_type,
                "layers": m.num_hidden_layers,
                "kv_heads": m.num_key_value_heads,
                "head_dim": m.head_dim,
                "layer_pattern": m.layer_pattern,
                "bf16_bytes_per_token": kv_bytes_per_token(m),
                "total_params": m.total_params,
                "source_url": m.source_url,
            }
            for m in load_models().values()
        ]
    }


def _reading_summary(reading: ConfigReading) -> dict[str, Any]:
    """The fields kvcore read from a config, its KV bytes per token and its parameter count."""
    m = reading.model
    summary: dict[str, Any] = {
        "model": m.name,
        "architecture": reading.architecture,
        "read_exactly": reading.known,
        "attention": m.attention_type,
        "layers": m.num_hidden_layers,
        "q_heads": m.num_attention_heads,
        "kv_heads": m.num_key_value_heads,
        "head_dim": m.head_dim,
        "hidden_size": m.hidden_size,
        "layer_pattern": m.layer_pattern,
        "sliding_window": m.sliding_window,
        "kv_lora_rank": m.kv_lora_rank,
        "qk_rope_head_dim": m.qk_rope_head_dim,
        "linear_state_values": m.linear_state_values,
        "max_position_embeddings": m.max_position_embeddings,
        "num_experts": m.num_experts,
        "num_experts_per_tok": m.num_experts_per_tok,
        "weights_dtype": m.weights_dtype,
        "bf16_bytes_per_token": kv_bytes_per_token(m),
    }
    if reading.params is not None:
        p = reading.params
        summary.update(
            total_params=p.total,
            active_params=p.active,
            embedding_params=p.embedding,
            attention_params=p.attention,
            mlp_params=p.mlp,
            experts_total_params=p.experts_total,
            experts_active_params=p.experts_active,
            norms_params=p.norms,
            lm_head_params=p.lm_head,
            mtp_params=p.mtp,
        )
    summary["code"] = model_to_code(m)
    return summary


def run_gpus(args: argparse.Namespace) -> dict[str, Any]:
    """The GPU table."""
    return {
        "gpus": [
            {
                "id": g.id,
                "name": g.name,
                "memory_bytes": g.memory_bytes,
                "bandwidth_bytes_per_s": g.bandwidth_bytes_per_s,
                "bf16_dense_flop_per_s": g.bf16_dense_flop_per_s,
                "fp8_dense_flop_per_s": g.fp8_dense_flop_per_s if g.has_fp8 else None,
                "source_url": g.source_url,
            }
            for g in load_gpus().values()
        ]
    }


def run_startup(args: argparse.Namespace) -> dict[str, Any]:
    """The engine's start-up for these settings: its printed lines and its numbers (kvcore.engines.engine_startup)."""
    model = resolve_model(args)
    gpu = resolve_gpu(args)
    if gpu is None and args.gpu_memory_gib:
        gpu = _custom_gpu(args)
    if not args.max_model_len and not model.max_position_embeddings:
        args.max_model_len = args.context  # typed numbers carry no longest context: take --context's
    startup = engine_startup(args.engine, model, gpu=gpu, flags=_ENGINE_FLAGS[args.engine](args))
    return {"model": model.name, **startup.as_json(), "lines": startup.lines()}


def _vllm_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "version": args.vllm_version,
        "utilization": args.gpu_memory_utilization,
        "max_model_len": args.max_model_len,
        "max_num_batched_tokens": args.max_num_batched_tokens,
        "max_num_seqs": args.max_num_seqs,
        "kv_dtype": args.kv_cache_dtype or "auto",
        "weights_dtype": args.weight_dtype,
        "enforce_eager": args.enforce_eager,
        "entry": args.entry,
        "block_size": args.block_size,
        "tp": args.tp,
        "pp": args.pp,
    }


def _trtllm_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "tp": args.tp,
        "free_gpu_memory_fraction": args.free_gpu_memory_fraction,
        "tokens_per_block": args.tokens_per_block,
        "max_tokens_in_paged_kv_cache": args.max_tokens_in_paged_kv_cache,
        "kv_cache_dtype": args.kv_cache_dtype or "auto",
        "release": args.trtllm_version,
        "backend": args.backend,
        "max_seq_len": args.max_model_len,
        "weights_dtype": args.weight_dtype,
    }


def _flash(args: argparse.Namespace) -> bool | None:
    return None if args.flash_attn == "auto" else args.flash_attn == "on"


def _sglang_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "tp": args.tp,
        "mem_fraction_static": args.mem_fraction_static,
        "page_size": args.page_size,
        "kv_cache_dtype": args.kv_cache_dtype or "auto",
        "max_total_tokens": args.max_total_tokens,
        "context_length": args.context_length or args.max_model_len,
        "release": args.sglang_version,
    }


def _llamacpp_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "ctx_size": args.ctx_size or 4096,
        "parallel": args.parallel or 1,
        "cache_type_k": args.cache_type_k or "f16",
        "cache_type_v": args.cache_type_v or "f16",
        "ubatch_size": args.ubatch_size,
        "batch_size": args.batch_size,
        "flash_attn": _flash(args),
        "swa_full": args.swa_full,
        "kv_unified": True if args.kv_unified else None,
        "build": args.llamacpp_build,
        "gpu_count": args.gpus or args.tp,
        "n_gpu_layers": args.n_gpu_layers,
        "weights_bytes": args.weights_gib * units.GiB if args.weights_gib is not None else None,
    }


def _ollama_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "num_ctx": args.ctx_size,
        "num_parallel": args.parallel,
        "kv_cache_type": args.cache_type_k or "f16",
        "flash_attention": _flash(args),
        "gpu_count": args.gpus or args.tp,
        "version": args.ollama_version,
        "weights_bytes": args.weights_gib * units.GiB if args.weights_gib is not None else None,
    }


#: --engine → the keyword arguments of that engine's start-up, from the command line.
_ENGINE_FLAGS: Mapping[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "vllm": _vllm_flags,
    "trtllm": _trtllm_flags,
    "sglang": _sglang_flags,
    "llama.cpp": _llamacpp_flags,
    "ollama": _ollama_flags,
}


RUNNERS = {
    "kv": run_kv,
    "capacity": run_capacity,
    "decode": run_decode,
    "prefill": run_prefill,
    "models": run_models,
    "gpus": run_gpus,
    "startup": run_startup,
}


def render_text(command: str, result: dict[str, Any]) -> str:
    """A few readable lines for a result (memory in GiB, rates in decimal units)."""
    if command == "startup":
        return "\n".join(result["lines"])
    if command == "models" and "models" in result:
        return "\n".join(
            f"{m['id']:<22} {m['attention']:<4} {m['layers']:>4} layers  "
            f"{units.format_bytes(m['bf16_bytes_per_token'])}/token (BF16)"
            for m in result["models"]
        )
    if command == "gpus":
        return "\n".join(
            f"{g['id']:<18} {units.format_gib(g['memory_bytes'], decimals=0):>9}  "
            f"{units.format_bandwidth(g['bandwidth_bytes_per_s'])}"
            for g in result["gpus"]
        )
    lines = [f"{key}: {_show_value(key, value)}" for key, value in result.items() if key != "assumptions"]
    lines += [f"assumed: {assumption['message']}" for assumption in result.get("assumptions", [])]
    return "\n".join(lines)


def _show_value(key: str, value: Any) -> str:
    """One value with its unit: bytes in binary and decimal units, rates in decimal units."""
    if isinstance(value, int) and not isinstance(value, bool) and key.endswith("_params"):
        return f"{value:,}"
    if not isinstance(value, float) or isinstance(value, bool):
        return str(value)
    if not math.isfinite(value):
        return "—"
    if key.endswith("_bytes_per_s"):
        return units.format_bandwidth(value)
    if key.endswith("_flop_per_s"):
        return units.format_flops(value)
    if key.endswith("_per_s") or key.endswith("_per_s_total"):
        return f"{value:,.2f} tokens/s"
    if "bytes" in key:
        return f"{value:,.0f} B ({units.format_bytes(value)}, {units.format_bytes_decimal(value)})"
    if key.endswith("_s"):
        return units.format_seconds(value)
    if key == "flops":
        return f"{value:.4g} FLOP"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.4g}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, compute, print; ValueError → one line on stderr and exit 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = RUNNERS[args.command](args)
    except ValueError as error:
        sys.stderr.write(f"python -m kvcore {args.command}: error: {worded(error)}\n")
        return EXIT_BAD_INPUT
    reading = getattr(args, "config_reading", None)
    if reading is not None:
        result["assumptions"] = [
            {"code": a.code, "field": a.field, "value": a.value, "message": a.message} for a in reading.assumptions
        ]
    if args.json:
        sys.stdout.write(json.dumps(_json_safe(result)) + "\n")
    else:
        sys.stdout.write(render_text(args.command, result) + "\n")
    return 0


def worded(error: Exception) -> str:
    """The error on one line, in the CLI's words: a KvError's flag in front (FLAGS), what to give after (REMEDIES).

    >>> worded(KvError("not_positive", "context tokens must be a finite number greater than zero, got 0",
    ...                name="context tokens", value=0))
    '--context: context tokens must be a finite number greater than zero, got 0'
    """
    line = _one_line(error)
    if not isinstance(error, KvError):
        return line
    name = str(error.fields.get("name", ""))
    flag = FLAGS.get((error.code, name)) or (FLAGS.get((None, name)) if name else None)
    remedy = REMEDIES.get(error.code)
    return f"{flag + ': ' if flag else ''}{line}{': ' + remedy if remedy else ''}"


def _one_line(error: Exception) -> str:
    """The error's message on one line (a config's text may carry newlines into it)."""
    return " ".join(str(error).split())


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    return value
