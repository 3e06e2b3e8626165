"""Layouts: non-contiguous inputs (transposed, strided slices) and zero-size tensors in all_reduce,
broadcast and all_gather."""

from __future__ import annotations

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, expect_group_works, expect_true, item

SOME = ("float32", "int64")


def _grid(ctx: Context, rank: int) -> torch.Tensor:
    """A 3x4 grid, distinct for each rank."""
    return (torch.arange(12, device=ctx.device).reshape(3, 4) + 100 * rank).to(ctx.dtype)


@item("layouts", "all_reduce_transposed", dtypes=SOME)
def all_reduce_transposed(ctx: Context) -> None:
    """all_reduce of a transposed (non-contiguous) view reduces it in place, the base seeing it."""
    base = _grid(ctx, ctx.rank)
    view = base.t()
    expect_true(not view.is_contiguous(), ctx.call("transpose", view), "the view is contiguous")
    dist.all_reduce(view, group=ctx.group)
    expected = sum(_grid(ctx, rank) for rank in range(ctx.world_size))
    expect_equal(base, expected, ctx.call("all_reduce", view, layout="transposed"))


@item("layouts", "all_reduce_strided", dtypes=SOME)
def all_reduce_strided(ctx: Context) -> None:
    """all_reduce of every other element reduces those and leaves the others alone."""
    base = torch.arange(8, device=ctx.device).to(ctx.dtype) + 10 * ctx.rank
    dist.all_reduce(base[::2], group=ctx.group)
    expected = torch.arange(8, device=ctx.device).to(ctx.dtype) + 10 * ctx.rank
    expected[::2] = sum(torch.arange(0, 8, 2, device=ctx.device).to(ctx.dtype) + 10 * rank
                        for rank in range(ctx.world_size))
    expect_equal(base, expected, ctx.call("all_reduce", base[::2], layout="base[::2]"))


@item("layouts", "broadcast_strided", dtypes=SOME)
def broadcast_strided(ctx: Context) -> None:
    """broadcast into a column slice (non-contiguous) from each root writes the column only."""
    for root in range(ctx.world_size):
        base = _grid(ctx, ctx.rank)
        dist.broadcast(base[:, 1], src=root, group=ctx.group)
        expected = _grid(ctx, ctx.rank)
        expected[:, 1] = _grid(ctx, root)[:, 1]
        expect_equal(base, expected, ctx.call("broadcast", base[:, 1], root=root, layout="column"))


@item("layouts", "all_gather_noncontiguous", dtypes=SOME)
def all_gather_noncontiguous(ctx: Context) -> None:
    """all_gather of a transposed input into transposed outputs gathers the values as seen."""
    outputs = [ctx.full((4, 3), -1).t() for _ in range(ctx.world_size)]
    dist.all_gather(outputs, _grid(ctx, ctx.rank).t().contiguous().t(), group=ctx.group)
    for rank, output in enumerate(outputs):
        expect_equal(output, _grid(ctx, rank), ctx.call("all_gather", output, slot=rank, layout="transposed"))


@item("layouts", "zero_size", dtypes=SOME)
def zero_size(ctx: Context) -> None:
    """Zero-size tensors, (0,) and (0, 3), go through all_reduce, broadcast and all_gather unchanged."""
    for shape in ((0,), (0, 3)):
        tensor = ctx.full(shape, 1)
        dist.all_reduce(tensor, group=ctx.group)
        expect_equal(tensor, ctx.full(shape, 1), ctx.call("all_reduce", tensor))
        dist.broadcast(tensor, src=ctx.world_size - 1, group=ctx.group)
        expect_equal(tensor, ctx.full(shape, 1), ctx.call("broadcast", tensor))
        outputs = [ctx.full(shape, 1) for _ in range(ctx.world_size)]
        dist.all_gather(outputs, tensor, group=ctx.group)
        expect_equal([tuple(o.shape) for o in outputs], [shape] * ctx.world_size, ctx.call("all_gather", tensor))
    expect_group_works(ctx, "zero-size tensors")
