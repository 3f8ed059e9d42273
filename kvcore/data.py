"""Load and validate data/models.csv and data/gpus.csv.

Loaded by a function, never at import time; every row is checked on the way in
and a bad one raises KvError (a ValueError) naming the file, the row and the field:
codes ``data_unreadable``, ``data_bad_header``, ``data_field_count``, ``data_no_rows``,
``data_duplicate_id``, ``data_empty_field``, ``data_not_a_number``, ``data_not_positive``,
``data_not_whole``, ``data_bad_url``, ``data_bad_category`` and ``data_bad_row``. An error
of the spec itself (a ModelSpec or GpuSpec check) keeps its own code. Once the row is
known, every one carries it in ``row`` (file, line and id).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from .dtypes import dtype_name
from .errors import KvError
from .hardware import GpuSpec, gpu
from .model import ModelSpec

__all__ = [
    "load_gpus",
    "load_models",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
MODELS_CSV = DATA_DIR / "models.csv"
GPUS_CSV = DATA_DIR / "gpus.csv"

MODEL_COLUMNS = [
    "id",
    "name",
    "hf_id",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "hidden_size",
    "vocab_size",
    "intermediate_size",
    "moe_intermediate_size",
    "tie_word_embeddings",
    "layer_pattern",
    "sliding_window",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "linear_state_values",
    "max_position_embeddings",
    "total_params_b",
    "active_params_b",
    "num_experts",
    "num_experts_per_tok",
    "torch_dtype",
    "weights_dtype",
    "source_url",
    "notes",
]
GPU_COLUMNS = [
    "id",
    "name",
    "vendor",
    "category",
    "memory_gib",
    "memory_type",
    "bandwidth_gb_s",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "l2_cache_mib",
    "sm_count",
    "sram_per_sm_kib",
    "source_url",
    "notes",
    "torch_memory_gib",
    "torch_memory_source",
]
GPU_CATEGORIES = ("consumer", "datacenter", "apple")

Spec = TypeVar("Spec", ModelSpec, GpuSpec)


def load_models(path: str | Path = MODELS_CSV) -> dict[str, ModelSpec]:
    """Every model of the CSV, keyed by id, in file order."""
    return _load(path, MODEL_COLUMNS, _model_from_row)


def load_gpus(path: str | Path = GPUS_CSV) -> dict[str, GpuSpec]:
    """Every GPU of the CSV, keyed by id, in file order."""
    return _load(path, GPU_COLUMNS, _gpu_from_row)


def _load(path: str | Path, columns: list[str], from_row: Callable[[dict[str, str]], Spec]) -> dict[str, Spec]:
    """Rows → specs keyed by id; the first bad row raises KvError naming its line and field."""
    specs: dict[str, Spec] = {}
    for where, row in _rows(path, columns):
        try:
            spec = from_row(row)
        except KvError as error:
            raise KvError(error.code, f"{where}: {error}", **{**error.fields, "row": where}) from None
        except ValueError as error:  # not raised by kvcore's checks today; still named by its row
            raise KvError("data_bad_row", f"{where}: {error}", row=where, detail=str(error)) from None
        if spec.id in specs:
            raise KvError("data_duplicate_id", f"{where}: duplicate id {spec.id!r}", row=where, id=spec.id)
        specs[spec.id] = spec
    if not specs:
        raise KvError("data_no_rows", f"{Path(path).name}: no rows", file=Path(path).name)
    return specs


def _rows(path: str | Path, columns: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise KvError(
            "data_unreadable", f"cannot read {path}: {error.strerror}", file=str(path), reason=str(error.strerror)
        ) from None
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames != columns:
        raise KvError(
            "data_bad_header",
            f"{path.name}: the header must be exactly: {','.join(columns)}",
            file=path.name,
            columns=",".join(columns),
        )
    for number, row in enumerate(reader, start=2):
        if None in row or any(value is None for value in row.values()):
            raise KvError(
                "data_field_count",
                f"{path.name} line {number}: expected {len(columns)} fields",
                file=path.name,
                line=number,
                expected=len(columns),
            )
        yield f"{path.name} line {number} ({row.get('id', '?')})", row


def _model_from_row(row: dict[str, str]) -> ModelSpec:
    _require(
        row,
        (
            "id",
            "name",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "layer_pattern",
            "max_position_embeddings",
            "total_params_b",
            "active_params_b",
            "source_url",
        ),
    )
    total = _number(row, "total_params_b") * 1e9
    return ModelSpec(
        id=row["id"],
        name=row["name"],
        hf_id=row["hf_id"],
        num_hidden_layers=_int(row, "num_hidden_layers"),
        num_attention_heads=_int(row, "num_attention_heads"),
        num_key_value_heads=_int(row, "num_key_value_heads"),
        head_dim=_int(row, "head_dim"),
        hidden_size=_int(row, "hidden_size", default=0),
        vocab_size=_int(row, "vocab_size", default=0),
        intermediate_size=_int(row, "intermediate_size", default=0),
        moe_intermediate_size=_int(row, "moe_intermediate_size", default=0),
        tie_word_embeddings=_flag(row, "tie_word_embeddings"),
        layer_pattern=row["layer_pattern"],
        sliding_window=_int(row, "sliding_window", default=0) or None,
        kv_lora_rank=_int(row, "kv_lora_rank", default=0),
        qk_rope_head_dim=_int(row, "qk_rope_head_dim", default=0),
        linear_state_values=_int(row, "linear_state_values", default=0),
        max_position_embeddings=_int(row, "max_position_embeddings"),
        total_params=total,
        active_params=_number(row, "active_params_b") * 1e9,
        num_experts=_int(row, "num_experts", default=0),
        num_experts_per_tok=_int(row, "num_experts_per_tok", default=0),
        torch_dtype=row["torch_dtype"],
        weights_dtype=dtype_name(row["weights_dtype"] or "bf16"),
        source_url=_url(row),
        notes=row["notes"],
    )


def _gpu_from_row(row: dict[str, str]) -> GpuSpec:
    _require(
        row, ("id", "name", "vendor", "category", "memory_gib", "bandwidth_gb_s", "bf16_dense_tflops", "source_url")
    )
    if row["category"] not in GPU_CATEGORIES:
        raise KvError(
            "data_bad_category",
            f"category must be one of {', '.join(GPU_CATEGORIES)}, got {row['category']!r}",
            field="category",
            value=row["category"],
            known=", ".join(GPU_CATEGORIES),
        )
    return gpu(
        id=row["id"],
        name=row["name"],
        vendor=row["vendor"],
        category=row["category"],
        memory_type=row["memory_type"],
        memory_gib=_number(row, "memory_gib"),
        bandwidth_gb_s=_number(row, "bandwidth_gb_s"),
        bf16_dense_tflops=_number(row, "bf16_dense_tflops"),
        fp8_dense_tflops=_number(row, "fp8_dense_tflops", default=math.nan),
        l2_cache_mib=_number(row, "l2_cache_mib", default=math.nan),
        sm_count=_number(row, "sm_count", default=math.nan),
        sram_per_sm_kib=_number(row, "sram_per_sm_kib", default=math.nan),
        torch_memory_gib=_number(row, "torch_memory_gib", default=math.nan),
        source_url=_url(row),
        notes=row["notes"],
        torch_memory_source=row["torch_memory_source"],
    )


def _require(row: dict[str, str], names: tuple[str, ...]) -> None:
    for name in names:
        if not row[name].strip():
            raise KvError("data_empty_field", f"field {name!r} is empty", field=name)


def _number(row: dict[str, str], name: str, *, default: float | None = None) -> float:
    text = row[name].strip()
    if not text or text.lower() in ("null", "none"):
        if default is None:
            raise KvError("data_empty_field", f"field {name!r} is empty", field=name)
        return default
    try:
        value = float(text)
    except ValueError:
        raise KvError(
            "data_not_a_number", f"field {name!r} must be a number, got {text!r}", field=name, value=text
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise KvError(
            "data_not_positive", f"field {name!r} must be a finite number > 0, got {text!r}", field=name, value=text
        )
    return value


def _int(row: dict[str, str], name: str, *, default: int | None = None) -> int:
    value = _number(row, name, default=None if default is None else float(default))
    if value != int(value):
        raise KvError(
            "data_not_whole", f"field {name!r} must be a whole number, got {row[name]!r}", field=name, value=row[name]
        )
    return int(value)


def _flag(row: dict[str, str], name: str) -> bool:
    """``true`` → True; ``false`` or empty → False; anything else is a bad row (data_bad_row)."""
    text = row[name].strip().lower()
    if text not in ("", "true", "false"):
        raise ValueError(f"field {name!r} must be true or false, got {row[name]!r}")
    return text == "true"


def _url(row: dict[str, str]) -> str:
    url = row["source_url"].strip()
    if not url.startswith("https://"):
        raise KvError(
            "data_bad_url", f"source_url must be an https:// address, got {url!r}", field="source_url", value=url
        )
    return url
