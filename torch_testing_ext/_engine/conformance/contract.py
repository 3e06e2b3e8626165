"""The conformance kit's contract: its items, what an item runs with, and how a wrong result reads.

An :class:`Item` is one promise of a c10d backend, checked on every rank of a world: a body
that calls the public ``torch.distributed`` API through a :class:`Context` and raises
:class:`ContractFailure` (through :func:`expect_equal`, :func:`expect_raises`...) when the
backend breaks it. Items are registered by the :func:`item` decorator, once for each dtype and
reduce op it takes, under an id that says all of it::

    @item("collectives", "all_reduce", dtypes=FLOATS + INTEGERS, reduce_ops=("SUM", "MAX"))
    def all_reduce(ctx: Context) -> None:
        tensor = ctx.full((3,), ctx.rank + 1)
        dist.all_reduce(tensor, op=ctx.reduce_op, group=ctx.group)
        expect_equal(tensor, ctx.full((3,), ctx.reduce_of(lambda r: r + 1)), ctx.call("all_reduce", tensor))

registers ``collectives.all_reduce[SUM-float32]``, ``collectives.all_reduce[MAX-float32]``...
The kit's version (:data:`KIT_VERSION`) is in every report: an item's meaning changes only
with it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from .vocabulary import AREAS, DTYPES, FLOATS, INTEGERS, KIT_VERSION, REDUCE_OPS

__all__ = ["KIT_VERSION", "AREAS", "REDUCE_OPS", "FLOATS", "INTEGERS", "DTYPES", "Item", "Context",
           "ContractFailure", "item", "registered", "expect_equal", "expect_group_works", "expect_true",
           "expect_raises", "describe"]


class ContractFailure(AssertionError):
    """A backend broke a promise of the contract; the message names the call (its arguments) and,
    for a wrong result, the first wrong element."""


ContractFailure.__module__ = "torch_testing_ext.conformance"  # public there, as tracebacks show it


@dataclasses.dataclass(frozen=True)
class Item:
    """One promise: ``id`` (``area.op[REDUCE-dtype]``), its area and op, the dtype and reduce op
    it is checked with (None: not a matter for it), the smallest world it means something in,
    and the body each rank runs."""

    id: str
    area: str
    op: str
    body: Callable[[Context], None]
    dtype: str | None = None
    reduce_op: str | None = None
    min_world_size: int = 2
    doc: str = ""


class Context:
    """What an item's body runs with on one rank: ``rank``, ``world_size``, ``backend`` (its name),
    ``device`` (a ``torch.device``), ``group`` (the default group of the backend), and the item's
    ``dtype`` and ``reduce_op`` (torch's objects; None when the item takes none)."""

    def __init__(self, rank: int, world_size: int, backend: str, device: torch.device, group: Any,
                 item: Item | None = None, timeout: float = 30.0) -> None:
        self.rank = rank
        self.world_size = world_size
        self.backend = backend
        self.device = device
        self.group = group
        self.item = item
        self.timeout = timeout  # seconds the item has: for items that set timeouts of their own
        self.dtype: torch.dtype = getattr(torch, item.dtype) if item and item.dtype else torch.float32
        self.reduce_op: Any = None
        if item is not None and item.reduce_op is not None:
            import torch.distributed as dist

            self.reduce_op = getattr(dist.ReduceOp, item.reduce_op)

    def full(self, shape: Sequence[int], value: float, dtype: torch.dtype | None = None) -> torch.Tensor:
        """A tensor of ``shape`` filled with ``value``, on the rank's device, of the item's dtype."""
        return torch.full(tuple(shape), value, dtype=dtype or self.dtype, device=self.device)

    def tensor(self, values: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
        """``values`` as a tensor on the rank's device, of the item's dtype."""
        return torch.tensor(values, dtype=dtype or self.dtype, device=self.device)

    def reduce_of(self, value_of_rank: Callable[[int], float]) -> float:
        """What the item's reduce op makes of ``value_of_rank(r)`` over every rank."""
        values = [value_of_rank(rank) for rank in range(self.world_size)]
        name = (self.item.reduce_op if self.item else None) or "SUM"
        if name == "SUM":
            return sum(values)
        if name == "AVG":
            return sum(values) / len(values)
        if name == "PRODUCT":
            return math.prod(values)
        if name == "MIN":
            return min(values)
        if name == "MAX":
            return max(values)
        reduced = int(values[0])
        for value in values[1:]:
            reduced = {"BAND": reduced & int(value), "BOR": reduced | int(value), "BXOR": reduced ^ int(value)}[name]
        return reduced

    def call(self, op: str, *tensors: Any, **arguments: Any) -> str:
        """``all_reduce(op=SUM, dtype=float32, shape=(3,), root=1) on rank 1 of 2``: how a
        failure names the call."""
        return describe(op, self, *tensors, **arguments)


def describe(op: str, ctx: Context, *tensors: Any, **arguments: Any) -> str:
    """How a failure names a call: the op, the item's reduce op and dtype, the tensors' shapes,
    the other arguments, and the rank."""
    parts = []
    if ctx.item is not None and ctx.item.reduce_op:
        parts.append(f"op={ctx.item.reduce_op}")
    shapes = [tuple(t.shape) for t in tensors if isinstance(t, torch.Tensor)]
    if tensors:
        parts.append(f"dtype={str(next((t.dtype for t in tensors if isinstance(t, torch.Tensor)), ctx.dtype))[6:]}")
    if shapes:
        parts.append("shape=" + ", ".join(map(str, shapes)))
    parts += [f"{name}={value!r}" for name, value in arguments.items()]
    return f"{op}({', '.join(parts)}) on rank {ctx.rank} of {ctx.world_size}"


_REGISTRY: dict[str, Item] = {}


def registered() -> dict[str, Item]:
    """Every item registered so far, by id (``items.all_items()`` imports the contract's first)."""
    return dict(_REGISTRY)


def item(area: str, op: str, *, dtypes: Iterable[str | None] = (None,), reduce_ops: Iterable[str | None] = (None,),
         name: str | None = None, min_world_size: int = 2,
         when: Callable[[str | None, str | None], bool] | None = None) -> Callable[[Callable[[Context], None]],
                                                                                  Callable[[Context], None]]:
    """Register the decorated body as one item per (reduce op, dtype) pair (``when(dtype,
    reduce_op)`` False leaves a pair out: bitwise ops on floats)."""
    if area not in AREAS:
        raise ValueError(f"item({area!r}, ...): no such area; the areas are {', '.join(AREAS)}")
    dtypes, reduce_ops = tuple(dtypes), tuple(reduce_ops)

    def register(body: Callable[[Context], None]) -> Callable[[Context], None]:
        for reduce_op in reduce_ops:
            for dtype in dtypes:
                if when is not None and not when(dtype, reduce_op):
                    continue
                detail = "-".join(part for part in (reduce_op, dtype) if part)
                item_id = f"{area}.{name or op}" + (f"[{detail}]" if detail else "")
                if item_id in _REGISTRY:
                    raise ValueError(f"the item {item_id} is registered twice")
                _REGISTRY[item_id] = Item(item_id, area, op, body, dtype, reduce_op, min_world_size,
                                          (body.__doc__ or "").strip().split("\n")[0])
        return body

    return register


def _first_wrong(actual: torch.Tensor, expected: torch.Tensor, close: torch.Tensor) -> str:
    index = tuple(int(i) for i in (~close).nonzero()[0]) if close.dim() else ()
    where = f"element {index}" if index else "the value"
    wrong = int((~close).sum())
    return (f"{where} is {actual[index].item()!r}, expected {expected[index].item()!r} "
            f"({wrong} of {close.numel()} elements wrong)")


def expect_equal(actual: Any, expected: Any, call: str, rtol: float | None = None, atol: float | None = None) -> None:
    """``actual`` must be ``expected`` (a tensor: the same shape, dtype and values; floats within
    their dtype's rounding, or ``rtol``/``atol``); :class:`ContractFailure` naming ``call`` and
    the first wrong element otherwise."""
    __tracebackhide__ = True
    if not isinstance(actual, torch.Tensor) or not isinstance(expected, torch.Tensor):
        if actual != expected:
            raise ContractFailure(f"{call}: got {actual!r}, expected {expected!r}")
        return
    if actual.shape != expected.shape:
        raise ContractFailure(f"{call}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}")
    if actual.dtype != expected.dtype:
        raise ContractFailure(f"{call}: dtype {actual.dtype}, expected {expected.dtype}")
    one, other = actual.detach().cpu(), expected.detach().cpu()
    if one.is_floating_point() or one.is_complex():
        default_rtol, default_atol = _TOLERANCES.get(one.dtype, (1e-6, 1e-6))
        close = torch.isclose(one.to(torch.complex128 if one.is_complex() else torch.float64),
                              other.to(torch.complex128 if one.is_complex() else torch.float64),
                              rtol=default_rtol if rtol is None else rtol, atol=default_atol if atol is None else atol)
    else:
        close = one == other
    if not bool(close.all()):
        raise ContractFailure(f"{call}: {_first_wrong(one, other, close)}")


# Rounding allowed by dtype (a reduction over a few ranks of small integers is exact in all).
_TOLERANCES = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1e-2, 1e-2), torch.float32: (1e-6, 1e-6),
               torch.float64: (1e-12, 1e-12), torch.complex64: (1e-6, 1e-6)}


def expect_group_works(ctx: Context, after: str, group: Any = None) -> None:
    """An all_reduce of ones over ``group`` (the item's default group) still sums to the world
    size ``after`` something that may break a backend (an error, a timeout, a destroyed group)."""
    __tracebackhide__ = True
    import torch.distributed as dist

    check = ctx.full((2,), 1)
    dist.all_reduce(check, group=group if group is not None else ctx.group)
    expect_equal(check, ctx.full((2,), dist.get_world_size(group if group is not None else ctx.group)),
                 ctx.call("all_reduce", check, after=after))


def expect_true(condition: bool, call: str, what: str) -> None:
    """``condition`` must hold; :class:`ContractFailure` saying ``call: what`` otherwise."""
    __tracebackhide__ = True
    if not condition:
        raise ContractFailure(f"{call}: {what}")


def expect_raises(errors: type[BaseException] | tuple[type[BaseException], ...], body: Callable[[], Any],
                  call: str) -> BaseException:
    """``body()`` must raise one of ``errors``; the error raised, or :class:`ContractFailure`."""
    __tracebackhide__ = True
    try:
        body()
    except errors as error:
        return error
    raise ContractFailure(f"{call}: returned, expected it to raise {_names(errors)}")


def _names(errors: type[BaseException] | tuple[type[BaseException], ...]) -> str:
    kinds = errors if isinstance(errors, tuple) else (errors,)
    return " or ".join(kind.__name__ for kind in kinds)
