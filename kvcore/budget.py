"""One memory budget per GPU: what is left for the KV pool once every other use has its share.

    KV pool = M · u − Σ terms

M the GPU's memory, u the share the engine may use (vLLM's ``gpu_memory_utilization``),
and the terms what comes off before the cache: the weights, the activation peak of the
profiling run, non-torch memory (CUDA context, NCCL buffers), CUDA graphs, or a single
"overhead" that lumps them together. Every term is optional and carries a short name, its
bytes and where the figure comes from, so a chart can draw it and a page can cite it.
The parts (what u holds back, each term, the pool) always add up to M; a negative pool
means the rest does not fit (vLLM: "No available memory for the cache blocks").

Two views of this one budget:

* the seed's sizing rule (seed 000, "A regra de dimensionamento"): weights and one overhead
  (``seed_budget``);
* vLLM's start-up arithmetic (vllm/v1/worker/gpu_worker.py ``determine_available_memory``):
  weights, activation peak, non-torch memory and CUDA graphs
  (``kvcore.vllm_pool.vllm_budget``).

Both are ``MemoryBudget`` values: given the same terms they leave the same pool. An
engine- or version-specific term is one more ``BudgetTerm`` in the list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .units import GiB

__all__ = [
    "ACTIVATION_PEAK",
    "CUDA_GRAPHS",
    "DEFAULT_ASSUMPTIONS",
    "DEFAULT_OVERHEAD_BYTES",
    "DEFAULT_UTILIZATION",
    "HELD_BACK",
    "KV_POOL",
    "NON_TORCH",
    "OVERHEAD",
    "WEIGHTS",
    "WHOLE_CARD",
    "BudgetAssumptions",
    "BudgetFields",
    "BudgetTerm",
    "MemoryBudget",
    "assumed_budget",
    "kv_budget_bytes",
    "kv_pool_bytes",
    "memory_budget",
    "seed_budget",
]

ArrayLike = Any

#: Names of the terms (stable: charts, the CLI's JSON and translations key on them).
HELD_BACK = "utilization"
WEIGHTS = "weights"
ACTIVATION_PEAK = "activation_peak"
NON_TORCH = "non_torch"
CUDA_GRAPHS = "cuda_graphs"
OVERHEAD = "overhead"
KV_POOL = "kv_pool"


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetAssumptions:
    """The assumptions a budget is built on when the user has not chosen: u and the overhead (bytes)."""

    utilization: float
    overhead_bytes: float
    source: str

    def describe(self) -> dict[str, float]:
        """The assumptions as numbers a page states beside its figure: u and the overhead in GiB."""
        return {"utilization": self.utilization, "overhead_gib": self.overhead_bytes / GiB}


#: The one set of defaults every page, exercise and the CLI start from: vLLM's default
#: ``gpu_memory_utilization`` (0.9, vllm/engine/arg_utils.py) and 1 GiB of overhead for
#: activations, buffers and CUDA graphs (seed 000's "overhead real").
DEFAULT_ASSUMPTIONS = BudgetAssumptions(
    utilization=0.9,
    overhead_bytes=1.0 * GiB,
    source="vLLM's default gpu_memory_utilization; seed 000's overhead for activations, buffers and CUDA graphs",
)
DEFAULT_UTILIZATION = DEFAULT_ASSUMPTIONS.utilization
DEFAULT_OVERHEAD_BYTES = DEFAULT_ASSUMPTIONS.overhead_bytes
#: The other named view: every byte of the card, nothing held back and no overhead. What "does it
#: fit at all" means (seed 002's and seed 004's GPU counts: total bytes / memory per GPU); a page
#: that uses it says so beside its number and shows the DEFAULT_ASSUMPTIONS figure too.
WHOLE_CARD = BudgetAssumptions(
    utilization=1.0,
    overhead_bytes=0.0,
    source="the whole card: 100 % of the memory, no overhead (seed 002's and seed 004's GPU counts)",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetTerm:
    """One use of GPU memory that comes off before the KV pool: a stable name, its bytes, its source."""

    name: str
    bytes: float
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryBudget:
    """One GPU's budget: M · u − Σ terms = the KV pool. The parts add up to ``memory_bytes``.

    ``parts`` = (what u holds back, every term, the pool); the pool may be negative.
    """

    memory_bytes: float
    utilization: float
    terms: tuple[BudgetTerm, ...]

    @property
    def usable_bytes(self) -> float:
        """M · u: what the engine may use."""
        return self.memory_bytes * self.utilization

    @property
    def held_back_bytes(self) -> float:
        """M − M · u: what the utilisation keeps away from the engine."""
        return self.memory_bytes - self.usable_bytes

    @property
    def taken_bytes(self) -> float:
        """Σ terms: everything the engine spends before the cache."""
        return _sum(term.bytes for term in self.terms)

    @property
    def kv_pool_bytes(self) -> float:
        """M · u − Σ terms (bytes; negative when the terms do not fit in M · u)."""
        return float(_left_for_kv(self.memory_bytes, self.utilization, [term.bytes for term in self.terms]))

    @property
    def has_pool(self) -> bool:
        """True when something is left for the cache."""
        return self.kv_pool_bytes > 0

    def term_bytes(self, name: str) -> float:
        """Bytes of the term called `name` (0 when the budget has no such term)."""
        return _sum(term.bytes for term in self.terms if term.name == name)

    @property
    def parts(self) -> tuple[BudgetTerm, ...]:
        """What u holds back, each term, then the pool: the parts of M, in waterfall order."""
        held = BudgetTerm(name=HELD_BACK, bytes=self.held_back_bytes, source="(1 − gpu_memory_utilization) · M")
        pool = BudgetTerm(name=KV_POOL, bytes=self.kv_pool_bytes, source="M · u − Σ terms")
        return (held, *self.terms, pool)

    def as_dict(self) -> dict[str, float]:
        """Every part in bytes by name, with the whole memory first (the CLI's ``budget``)."""
        return {"total_memory": self.memory_bytes} | {part.name: part.bytes for part in self.parts}

    def with_term(self, term: BudgetTerm) -> MemoryBudget:
        """The same budget with `term` added (or replacing the term of the same name, in place)."""
        if any(existing.name == term.name for existing in self.terms):
            terms = tuple(term if existing.name == term.name else existing for existing in self.terms)
        else:
            terms = (*self.terms, term)
        return replace(self, terms=_checked_terms(terms))


class BudgetFields:
    """Read-through properties of a result that carries a ``budget``: its memory, u, each term and the pool.

    A mixin (no state of its own) for the results built on one :class:`MemoryBudget`
    (``capacity.SizingSteps``, ``vllm_pool.PoolLog``), so each reads the budget's
    figures in one way. A term the budget lacks reads 0 bytes.
    """

    __slots__ = ()
    budget: MemoryBudget

    @property
    def memory_bytes(self) -> float:
        """The GPU's memory M."""
        return self.budget.memory_bytes

    @property
    def utilization(self) -> float:
        """The share u the engine may use (vLLM's gpu_memory_utilization)."""
        return self.budget.utilization

    @property
    def held_back_bytes(self) -> float:
        """M · (1 − u)."""
        return self.budget.held_back_bytes

    @property
    def usable_bytes(self) -> float:
        """M · u: what the engine may use."""
        return self.budget.usable_bytes

    @property
    def weights_bytes(self) -> float:
        """This GPU's share of the weights, W / (tp · pp)."""
        return self.budget.term_bytes(WEIGHTS)

    @property
    def overhead_bytes(self) -> float:
        """The seed's one overhead (activations, buffers, CUDA graphs)."""
        return self.budget.term_bytes(OVERHEAD)

    @property
    def activation_bytes(self) -> float:
        """The profiling run's activation peak A."""
        return self.budget.term_bytes(ACTIVATION_PEAK)

    @property
    def non_torch_bytes(self) -> float:
        """Non-torch memory N."""
        return self.budget.term_bytes(NON_TORCH)

    @property
    def cuda_graph_bytes(self) -> float:
        """CUDA graphs G."""
        return self.budget.term_bytes(CUDA_GRAPHS)

    @property
    def kv_pool_bytes(self) -> float:
        """M · u − Σ terms (negative when the terms do not fit)."""
        return self.budget.kv_pool_bytes

    @property
    def has_pool(self) -> bool:
        """False when the terms leave nothing: vLLM's 'No available memory for the cache blocks'."""
        return self.budget.has_pool


def memory_budget(*, memory_bytes: float, utilization: float, terms: Iterable[BudgetTerm]) -> MemoryBudget:
    """The budget of one GPU of `memory_bytes` at utilisation u with these `terms` (each ≥ 0 bytes).

    Formula: KV pool = M · u − Σ terms (bytes). Source: seed 000; vLLM ``determine_available_memory``.

    >>> b = memory_budget(memory_bytes=100.0, utilization=0.9, terms=[BudgetTerm(name="weights", bytes=50.0)])
    >>> b.kv_pool_bytes, sum(part.bytes for part in b.parts)
    (40.0, 100.0)
    """
    checks.positive("GPU memory", memory_bytes)
    return MemoryBudget(
        memory_bytes=float(memory_bytes),
        utilization=_utilization(utilization),
        terms=_checked_terms(tuple(terms)),
    )


def seed_budget(
    *,
    memory_bytes: float,
    utilization: float = DEFAULT_UTILIZATION,
    weights_bytes: float,
    overhead_bytes: float = 0.0,
) -> MemoryBudget:
    """Seed 000's view of the budget: VRAM · u − weights − overhead (bytes, one GPU).

    The engine may use a fraction u of the card; the weights (this GPU's share) and
    one overhead for activations, buffers, CUDA graphs and fragmentation come off the top.
    Source: seed 000, "A regra de dimensionamento".
    """
    return memory_budget(
        memory_bytes=memory_bytes,
        utilization=utilization,
        terms=[
            BudgetTerm(name=WEIGHTS, bytes=float(weights_bytes), source="parameters · bytes per parameter / GPUs"),
            BudgetTerm(name=OVERHEAD, bytes=float(overhead_bytes), source="seed 000: activations, buffers, graphs"),
        ],
    )


def assumed_budget(
    *, memory_bytes: float, weights_bytes: float, assumptions: BudgetAssumptions = DEFAULT_ASSUMPTIONS
) -> MemoryBudget:
    """``seed_budget`` on one of the named sets of assumptions: VRAM · u − weights − overhead (bytes, one GPU).

    ``DEFAULT_ASSUMPTIONS`` (u = 0.9, 1 GiB overhead) is a server's view; ``WHOLE_CARD``
    (u = 1, no overhead) asks whether the bytes fit at all. Source: seed 000.

    >>> assumed_budget(memory_bytes=24.0 * GiB, weights_bytes=16.0 * GiB, assumptions=WHOLE_CARD).kv_pool_bytes / GiB
    8.0
    """
    return seed_budget(
        memory_bytes=memory_bytes,
        utilization=assumptions.utilization,
        weights_bytes=weights_bytes,
        overhead_bytes=assumptions.overhead_bytes,
    )


def kv_budget_bytes(
    *, memory_bytes: float, utilization: float = DEFAULT_UTILIZATION, weights_bytes: float, overhead_bytes: float = 0.0
) -> float:
    """Memory left for the KV cache by the seed's rule: VRAM · u − weights − overhead (bytes; negative: no room).

    The pool of ``seed_budget`` (seed 000's numerator): one figure, for callers that need no parts.

    >>> kv_budget_bytes(memory_bytes=80.0, utilization=0.9, weights_bytes=16.0, overhead_bytes=2.0)
    54.0
    """
    budget = seed_budget(
        memory_bytes=memory_bytes, utilization=utilization, weights_bytes=weights_bytes, overhead_bytes=overhead_bytes
    )
    return budget.kv_pool_bytes


def kv_pool_bytes(
    *,
    memory_bytes: float,
    utilization: ArrayLike,
    weights_bytes: ArrayLike = 0.0,
    activation_bytes: ArrayLike = 0.0,
    non_torch_bytes: ArrayLike = 0.0,
    cuda_graph_bytes: ArrayLike = 0.0,
    overhead_bytes: ArrayLike = 0.0,
) -> np.ndarray:
    """The KV pool on one GPU, vectorised: M · u − W − A − N − G − overhead (bytes; negative when nothing is left).

    The arithmetic of ``MemoryBudget.kv_pool_bytes`` over arrays (a curve against u, or
    against the profiling batch). vllm/v1/worker/gpu_worker.py ``determine_available_memory``:
    ``requested_memory − non_kv_cache_memory`` with requested = total · u.

    >>> float(kv_pool_bytes(memory_bytes=100, utilization=0.9, weights_bytes=50, activation_bytes=10,
    ...     non_torch_bytes=5, cuda_graph_bytes=5))
    20.0
    """
    checks.positive("GPU memory", memory_bytes)
    u = np.asarray(utilization, dtype=float)
    for value in np.ravel(u):
        checks.fraction("gpu_memory_utilization", value)
    terms = {
        "weights": weights_bytes,
        "activation peak": activation_bytes,
        "non-torch memory": non_torch_bytes,
        "CUDA graphs": cuda_graph_bytes,
        "overhead": overhead_bytes,
    }
    for name, value in terms.items():
        checks.positive(name, value, allow_zero=True)
    return _left_for_kv(memory_bytes, u, list(terms.values()))


def _left_for_kv(memory_bytes: float, utilization: ArrayLike, taken: Sequence[ArrayLike]) -> np.ndarray:
    """M · u − Σ taken: the one subtraction every view of the budget uses."""
    left = float(memory_bytes) * np.asarray(utilization, dtype=float)
    for value in taken:
        left = left - np.asarray(value, dtype=float)
    return left


def _sum(values: Iterable[float]) -> float:
    total = 0.0
    for value in values:
        total += float(value)
    return total


def _utilization(value: float) -> float:
    return checks.fraction("gpu_memory_utilization", value)


def _checked_terms(terms: tuple[BudgetTerm, ...]) -> tuple[BudgetTerm, ...]:
    names = [term.name for term in terms]
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise KvError(
            "repeated_budget_term", f"each budget term must appear once, got {names}", terms=", ".join(repeated)
        )
    for term in terms:
        checks.positive(term.name.replace("_", " "), term.bytes, allow_zero=True)
    return terms
