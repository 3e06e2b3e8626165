"""Functional collectives: torch.ops._c10d_functional's all_reduce, all_gather_into_tensor and
reduce_scatter_tensor, each made real by wait_tensor, over the group's name."""

from __future__ import annotations

import torch

from ..._torch_private import functional_collective_ops
from ..contract import Context, expect_equal, item

SOME = ("float32", "int64")



@item("functional", "all_reduce", dtypes=SOME, reduce_ops=("SUM", "MAX"))
def all_reduce(ctx: Context) -> None:
    """_c10d_functional.all_reduce returns a new tensor, the reduction once wait_tensor returns; its input stays."""
    ops = functional_collective_ops()
    source = ctx.full((4,), ctx.rank + 1)
    result = ops.wait_tensor(ops.all_reduce(source, str(ctx.item.reduce_op if ctx.item else "SUM").lower(),
                                            ctx.group.group_name))
    call = ctx.call("_c10d_functional.all_reduce", result)
    expect_equal(result, ctx.full((4,), ctx.reduce_of(lambda rank: rank + 1)), call)
    expect_equal(source, ctx.full((4,), ctx.rank + 1), call + " (its input)")


@item("functional", "all_gather_into_tensor", dtypes=SOME)
def all_gather_into_tensor(ctx: Context) -> None:
    """_c10d_functional.all_gather_into_tensor concatenates every rank's tensor in rank order."""
    ops = functional_collective_ops()
    source = (torch.arange(3, device=ctx.device) + 10 * ctx.rank).to(ctx.dtype)
    result = ops.wait_tensor(ops.all_gather_into_tensor(source, ctx.world_size, ctx.group.group_name))
    expected = torch.cat([(torch.arange(3, device=ctx.device) + 10 * rank).to(ctx.dtype)
                          for rank in range(ctx.world_size)])
    expect_equal(result, expected, ctx.call("_c10d_functional.all_gather_into_tensor", result))


@item("functional", "reduce_scatter_tensor", dtypes=SOME)
def reduce_scatter_tensor(ctx: Context) -> None:
    """_c10d_functional.reduce_scatter_tensor leaves rank r with the sum of every rank's r-th chunk."""
    ops = functional_collective_ops()

    def chunk(source: int, index: int) -> torch.Tensor:
        return (torch.arange(2, device=ctx.device) + 10 * source + 100 * index).to(ctx.dtype)

    source = torch.cat([chunk(ctx.rank, index) for index in range(ctx.world_size)])
    result = ops.wait_tensor(ops.reduce_scatter_tensor(source, "sum", ctx.world_size, ctx.group.group_name))
    expected = sum(chunk(rank, ctx.rank) for rank in range(ctx.world_size))
    expect_equal(result, expected, ctx.call("_c10d_functional.reduce_scatter_tensor", result))


@item("functional", "broadcast", dtypes=SOME)
def broadcast(ctx: Context) -> None:
    """_c10d_functional.broadcast from each root gives every rank the root's tensor."""
    ops = functional_collective_ops()
    for root in range(ctx.world_size):
        result = ops.wait_tensor(ops.broadcast(ctx.full((3,), ctx.rank + 5), root, ctx.group.group_name))
        expect_equal(result, ctx.full((3,), root + 5), ctx.call("_c10d_functional.broadcast", result, root=root))
