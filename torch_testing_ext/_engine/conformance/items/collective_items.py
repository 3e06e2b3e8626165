"""Collectives: all_reduce with each reduce op and dtype, gathers, reduce-scatters, all-to-alls with
uneven splits, rooted collectives from every root, and a barrier that waits."""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, expect_true, item
from ..vocabulary import FLOATS, INTEGERS, REDUCE_OPS

SOME = ("float32", "float64", "int64")
BITWISE = ("BAND", "BOR", "BXOR")


def _valid(dtype: str | None, reduce_op: str | None) -> bool:
    """Bitwise ops on integers and bool only; bool takes nothing else; AVG on floats only."""
    if reduce_op in BITWISE:
        return dtype in INTEGERS or dtype == "bool"
    if dtype == "bool":
        return False
    if reduce_op == "AVG":
        return dtype in FLOATS
    return True


def _value(ctx: Context, rank: int) -> float:
    """A rank's value: small enough for int8/uint8 products and exact in bfloat16."""
    if ctx.dtype == torch.bool:
        return float(rank % 2 == 0)
    return float(rank + 1)


@item("collectives", "all_reduce", dtypes=(*FLOATS, *INTEGERS, "bool"), reduce_ops=REDUCE_OPS, when=_valid)
def all_reduce(ctx: Context) -> None:
    """all_reduce leaves every rank with the reduce op over every rank's tensor."""
    tensor = ctx.full((5,), _value(ctx, ctx.rank))
    dist.all_reduce(tensor, op=ctx.reduce_op, group=ctx.group)
    expected = ctx.reduce_of(lambda rank: _value(ctx, rank))
    expect_equal(tensor, ctx.full((5,), expected), ctx.call("all_reduce", tensor))


# A fraction each dtype holds next to 1 and the next narrower dtype loses: float64's 1e-10 is below
# float32's resolution (6e-8), float32's 1e-4 below float16's (1e-3).
_FINE = {"float64": 1e-10, "float32": 1e-4}


@item("collectives", "all_reduce", name="all_reduce_precision", dtypes=tuple(_FINE))
def all_reduce_precision(ctx: Context) -> None:
    """all_reduce computes in the tensor's own dtype: a difference a narrower dtype would round away stays."""
    fine = _FINE[str(ctx.dtype).removeprefix("torch.")]
    tensor = ctx.full((4,), 1.0 + (ctx.rank + 1) * fine)
    dist.all_reduce(tensor, group=ctx.group)
    expected = ctx.world_size + fine * ctx.world_size * (ctx.world_size + 1) / 2
    expect_equal(tensor, ctx.full((4,), expected), ctx.call("all_reduce", tensor), rtol=fine / 100, atol=0)


def _rows(ctx: Context, rank: int, n: int = 3) -> torch.Tensor:
    """arange(n) + 10 * rank: a rank's contribution, telling ranks and positions apart."""
    return (torch.arange(n, device=ctx.device) + 10 * rank).to(ctx.dtype)


@item("collectives", "all_gather", dtypes=SOME)
def all_gather(ctx: Context) -> None:
    """all_gather puts rank r's tensor in slot r of every rank's list."""
    outputs = [ctx.full((3,), -1) for _ in range(ctx.world_size)]
    dist.all_gather(outputs, _rows(ctx, ctx.rank), group=ctx.group)
    for rank, output in enumerate(outputs):
        expect_equal(output, _rows(ctx, rank), ctx.call("all_gather", output, slot=rank))


@item("collectives", "all_gather_into_tensor", dtypes=SOME)
def all_gather_into_tensor(ctx: Context) -> None:
    """all_gather_into_tensor concatenates every rank's tensor in rank order."""
    output = ctx.full((3 * ctx.world_size,), -1)
    dist.all_gather_into_tensor(output, _rows(ctx, ctx.rank), group=ctx.group)
    expected = torch.cat([_rows(ctx, rank) for rank in range(ctx.world_size)])
    expect_equal(output, expected, ctx.call("all_gather_into_tensor", output))


def _chunk(ctx: Context, source: int, chunk: int) -> torch.Tensor:
    """What ``source`` contributes to ``chunk``: distinct for every (source, chunk) pair."""
    return (torch.arange(2, device=ctx.device) + 10 * source + 100 * chunk).to(ctx.dtype)


@item("collectives", "reduce_scatter", dtypes=SOME)
def reduce_scatter(ctx: Context) -> None:
    """reduce_scatter leaves rank r with the sum over ranks of their r-th input."""
    inputs = [_chunk(ctx, ctx.rank, chunk) for chunk in range(ctx.world_size)]
    output = ctx.full((2,), -1)
    dist.reduce_scatter(output, inputs, group=ctx.group)
    expected = sum(_chunk(ctx, source, ctx.rank) for source in range(ctx.world_size))
    expect_equal(output, expected, ctx.call("reduce_scatter", output))


@item("collectives", "reduce_scatter_tensor", dtypes=SOME)
def reduce_scatter_tensor(ctx: Context) -> None:
    """reduce_scatter_tensor leaves rank r with the sum over ranks of their r-th chunk."""
    source = torch.cat([_chunk(ctx, ctx.rank, chunk) for chunk in range(ctx.world_size)])
    output = ctx.full((2,), -1)
    dist.reduce_scatter_tensor(output, source, group=ctx.group)
    expected = sum(_chunk(ctx, rank, ctx.rank) for rank in range(ctx.world_size))
    expect_equal(output, expected, ctx.call("reduce_scatter_tensor", output))


def _split(source: int, dest: int) -> int:
    """How many elements ``source`` sends ``dest``: uneven, zero for some pairs."""
    return (source + 2 * dest) % 3


def _piece(ctx: Context, source: int, dest: int) -> torch.Tensor:
    return (torch.arange(_split(source, dest), device=ctx.device) + 10 * source + 100 * dest).to(ctx.dtype)


@item("collectives", "all_to_all", dtypes=SOME)
def all_to_all(ctx: Context) -> None:
    """all_to_all with uneven pieces: rank r's list holds, in slot s, what rank s sent r."""
    inputs = [_piece(ctx, ctx.rank, dest) for dest in range(ctx.world_size)]
    outputs = [ctx.full((_split(source, ctx.rank),), -1) for source in range(ctx.world_size)]
    dist.all_to_all(outputs, inputs, group=ctx.group)
    for source, output in enumerate(outputs):
        expect_equal(output, _piece(ctx, source, ctx.rank), ctx.call("all_to_all", output, slot=source))


@item("collectives", "all_to_all_single", dtypes=SOME)
def all_to_all_single(ctx: Context) -> None:
    """all_to_all_single with uneven input and output splits."""
    world = range(ctx.world_size)
    source = torch.cat([_piece(ctx, ctx.rank, dest) for dest in world])
    in_splits = [_split(ctx.rank, dest) for dest in world]
    out_splits = [_split(rank, ctx.rank) for rank in world]
    output = ctx.full((sum(out_splits),), -1)
    dist.all_to_all_single(output, source, out_splits, in_splits, group=ctx.group)
    expected = torch.cat([_piece(ctx, rank, ctx.rank) for rank in world])
    expect_equal(output, expected, ctx.call("all_to_all_single", output, input_split_sizes=in_splits,
                                            output_split_sizes=out_splits))


@item("collectives", "all_to_all_single", name="all_to_all_single_even", dtypes=SOME)
def all_to_all_single_even(ctx: Context) -> None:
    """all_to_all_single without splits sends chunk d of every rank to rank d."""
    source = torch.cat([_chunk(ctx, ctx.rank, dest) for dest in range(ctx.world_size)])
    output = ctx.full((2 * ctx.world_size,), -1)
    dist.all_to_all_single(output, source, group=ctx.group)
    expected = torch.cat([_chunk(ctx, rank, ctx.rank) for rank in range(ctx.world_size)])
    expect_equal(output, expected, ctx.call("all_to_all_single", output))


@item("collectives", "broadcast", dtypes=SOME)
def broadcast(ctx: Context) -> None:
    """broadcast from each root leaves every rank with the root's tensor."""
    for root in range(ctx.world_size):
        tensor = _rows(ctx, ctx.rank)
        dist.broadcast(tensor, src=root, group=ctx.group)
        expect_equal(tensor, _rows(ctx, root), ctx.call("broadcast", tensor, root=root))


@item("collectives", "reduce", dtypes=SOME, reduce_ops=("SUM", "MAX"))
def reduce(ctx: Context) -> None:
    """reduce to each root leaves the root with the reduce op over every rank's tensor."""
    for root in range(ctx.world_size):
        tensor = ctx.full((3,), ctx.rank + 1)
        dist.reduce(tensor, dst=root, op=ctx.reduce_op, group=ctx.group)
        if ctx.rank == root:
            expect_equal(tensor, ctx.full((3,), ctx.reduce_of(lambda rank: rank + 1)),
                         ctx.call("reduce", tensor, root=root))


@item("collectives", "gather", dtypes=SOME)
def gather(ctx: Context) -> None:
    """gather to each root puts rank r's tensor in slot r of the root's list."""
    for root in range(ctx.world_size):
        outputs = [ctx.full((3,), -1) for _ in range(ctx.world_size)] if ctx.rank == root else None
        dist.gather(_rows(ctx, ctx.rank), outputs, dst=root, group=ctx.group)
        if outputs is not None:
            for rank, output in enumerate(outputs):
                expect_equal(output, _rows(ctx, rank), ctx.call("gather", output, root=root, slot=rank))


@item("collectives", "scatter", dtypes=SOME)
def scatter(ctx: Context) -> None:
    """scatter from each root gives rank r slot r of the root's list."""
    for root in range(ctx.world_size):
        inputs = [_chunk(ctx, root, dest) for dest in range(ctx.world_size)] if ctx.rank == root else None
        output = ctx.full((2,), -1)
        dist.scatter(output, inputs, src=root, group=ctx.group)
        expect_equal(output, _chunk(ctx, root, ctx.rank), ctx.call("scatter", output, root=root))


@item("collectives", "barrier")
def barrier(ctx: Context) -> None:
    """barrier returns on no rank before every rank has entered it."""
    dist.barrier(group=ctx.group)  # every rank is here: the clocks below start together
    start = time.monotonic()
    if ctx.rank == 0:
        time.sleep(0.3)
    dist.barrier(group=ctx.group)
    waited = time.monotonic() - start
    if ctx.rank != 0:
        expect_true(waited >= 0.2, ctx.call("barrier"), f"returned after {waited:.3f} s, before rank 0 entered (0.3 s)")


@item("collectives", "all_to_all", name="all_to_all_even", dtypes=SOME)
def all_to_all_even(ctx: Context) -> None:
    """all_to_all with even pieces: rank r's list holds, in slot s, what rank s sent r."""
    inputs = [_chunk(ctx, ctx.rank, dest) for dest in range(ctx.world_size)]
    outputs = [ctx.full((2,), -1) for _ in range(ctx.world_size)]
    dist.all_to_all(outputs, inputs, group=ctx.group)
    for source, output in enumerate(outputs):
        expect_equal(output, _chunk(ctx, source, ctx.rank), ctx.call("all_to_all", output, slot=source))
