"""kvcore: what LLM inference costs in GPU memory and time, architecture by architecture.

Pure Python (standard library + numpy). Everything is in base units: bytes,
seconds, bytes/s, FLOP/s, tokens. Formatting to GiB or GB/s happens at the edges
(:mod:`kvcore.units`).

Each module owns its public names in its ``__all__``; this package re-exports them
all, so ``kvcore.kv_bytes_per_token`` and ``kvcore.kv.kv_bytes_per_token`` are the
same function.
"""

from types import ModuleType

from . import transformers_cache  # noqa: F401 (what transformers holds differently; no names re-exported)
from .agent import *  # noqa: F403
from .attention import *  # noqa: F403
from .budget import *  # noqa: F403
from .capacity import *  # noqa: F403
from .config_fields import *  # noqa: F403
from .data import *  # noqa: F403
from .dtypes import *  # noqa: F403
from .engines import *  # noqa: F403
from .errors import *  # noqa: F403
from .hardware import *  # noqa: F403
from .hf_config import *  # noqa: F403
from .kv import *  # noqa: F403
from .llamacpp import *  # noqa: F403
from .log_lines import *  # noqa: F403
from .memory import *  # noqa: F403
from .model import *  # noqa: F403
from .model_code import *  # noqa: F403
from .ollama import *  # noqa: F403
from .paging import *  # noqa: F403
from .params import *  # noqa: F403
from .quantization import *  # noqa: F403
from .reads import *  # noqa: F403
from .scheduler import *  # noqa: F403
from .sglang import *  # noqa: F403
from .timing import *  # noqa: F403
from .trtllm import *  # noqa: F403
from .units import *  # noqa: F403
from .variants import *  # noqa: F403
from .vllm_log import *  # noqa: F403
from .vllm_pool import *  # noqa: F403
from .vllm_runs import *  # noqa: F403
from .vllm_startup import *  # noqa: F403
from .vllm_versions import *  # noqa: F403

#: The modules whose names the package re-exports: each submodule imported above that declares an ``__all__``
#: (``from .x import *`` also binds ``kvcore.x``).
_MODULES = tuple(
    module
    for module in dict(globals()).values()
    if isinstance(module, ModuleType) and module.__name__.startswith(f"{__name__}.") and hasattr(module, "__all__")
)

__all__ = [name for module in _MODULES for name in module.__all__]
