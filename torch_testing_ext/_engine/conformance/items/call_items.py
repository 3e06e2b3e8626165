"""Calls: every collective accepts its arguments, returns outputs of the right shapes and dtypes, and
its work completes; no values checked (for backends where nothing travels, as the fake one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, expect_true, item

SOME = ("float32", "int64")


def _completes(ctx: Context, op: str, start: Callable[[], Any], *outputs: torch.Tensor,
               shapes: list[tuple[int, ...]]) -> None:
    """``start()`` gives a work whose wait() returns, and leaves outputs of ``shapes`` and the item's dtype."""
    work = start()
    call = ctx.call(op, *outputs, async_op=True)
    expect_true(work is not None, call, "returned no work")
    work.wait()
    expect_equal([tuple(output.shape) for output in outputs], shapes, call + " shapes")
    expect_equal([output.dtype for output in outputs], [ctx.dtype] * len(outputs), call + " dtypes")


@item("calls", "all_reduce", dtypes=SOME)
def all_reduce(ctx: Context) -> None:
    """all_reduce(async_op=True) completes, its tensor's shape and dtype kept."""
    tensor = ctx.full((4,), 1)
    _completes(ctx, "all_reduce", lambda: dist.all_reduce(tensor, group=ctx.group, async_op=True), tensor,
               shapes=[(4,)])


@item("calls", "broadcast", dtypes=SOME)
def broadcast(ctx: Context) -> None:
    """broadcast(async_op=True) from the last rank completes."""
    tensor = ctx.full((2, 3), 1)
    _completes(ctx, "broadcast", lambda: dist.broadcast(tensor, src=ctx.world_size - 1, group=ctx.group,
                                                        async_op=True), tensor, shapes=[(2, 3)])


@item("calls", "reduce", dtypes=SOME)
def reduce(ctx: Context) -> None:
    """reduce(async_op=True) to rank 0 completes."""
    tensor = ctx.full((3,), 1)
    _completes(ctx, "reduce", lambda: dist.reduce(tensor, dst=0, group=ctx.group, async_op=True), tensor,
               shapes=[(3,)])


@item("calls", "all_gather", dtypes=SOME)
def all_gather(ctx: Context) -> None:
    """all_gather(async_op=True) completes with a list of world_size outputs."""
    outputs = [ctx.full((3,), 0) for _ in range(ctx.world_size)]
    _completes(ctx, "all_gather", lambda: dist.all_gather(outputs, ctx.full((3,), 1), group=ctx.group,
                                                          async_op=True), *outputs, shapes=[(3,)] * ctx.world_size)


@item("calls", "all_gather_into_tensor", dtypes=SOME)
def all_gather_into_tensor(ctx: Context) -> None:
    """all_gather_into_tensor(async_op=True) completes."""
    output = ctx.full((3 * ctx.world_size,), 0)
    _completes(ctx, "all_gather_into_tensor", lambda: dist.all_gather_into_tensor(
        output, ctx.full((3,), 1), group=ctx.group, async_op=True), output, shapes=[(3 * ctx.world_size,)])


@item("calls", "reduce_scatter_tensor", dtypes=SOME)
def reduce_scatter_tensor(ctx: Context) -> None:
    """reduce_scatter_tensor(async_op=True) completes."""
    output = ctx.full((2,), 0)
    _completes(ctx, "reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(
        output, ctx.full((2 * ctx.world_size,), 1), group=ctx.group, async_op=True), output, shapes=[(2,)])


@item("calls", "all_to_all_single", dtypes=SOME)
def all_to_all_single(ctx: Context) -> None:
    """all_to_all_single(async_op=True) completes."""
    output = ctx.full((2 * ctx.world_size,), 0)
    _completes(ctx, "all_to_all_single", lambda: dist.all_to_all_single(
        output, ctx.full((2 * ctx.world_size,), 1), group=ctx.group, async_op=True), output,
        shapes=[(2 * ctx.world_size,)])


@item("calls", "gather", dtypes=SOME)
def gather(ctx: Context) -> None:
    """gather(async_op=True) to rank 0 completes."""
    outputs = [ctx.full((2,), 0) for _ in range(ctx.world_size)] if ctx.rank == 0 else None
    _completes(ctx, "gather", lambda: dist.gather(ctx.full((2,), 1), outputs, dst=0, group=ctx.group,
                                                  async_op=True), *(outputs or []),
               shapes=[(2,)] * (ctx.world_size if outputs else 0))


@item("calls", "scatter", dtypes=SOME)
def scatter(ctx: Context) -> None:
    """scatter(async_op=True) from rank 0 completes."""
    output = ctx.full((2,), 0)
    inputs = [ctx.full((2,), 1) for _ in range(ctx.world_size)] if ctx.rank == 0 else None
    _completes(ctx, "scatter", lambda: dist.scatter(output, inputs, src=0, group=ctx.group, async_op=True),
               output, shapes=[(2,)])


@item("calls", "barrier")
def barrier(ctx: Context) -> None:
    """barrier(async_op=True) completes."""
    work = dist.barrier(group=ctx.group, async_op=True)
    expect_true(work is not None, ctx.call("barrier", async_op=True), "returned no work")
    work.wait()


_STARTS: dict[str, Callable[[Context, torch.Tensor, torch.Tensor], Any]] = {
    "all_reduce": lambda ctx, tensor, output: dist.all_reduce(tensor, group=ctx.group, async_op=True),
    "broadcast": lambda ctx, tensor, output: dist.broadcast(tensor, src=0, group=ctx.group, async_op=True),
    "all_gather_into_tensor": lambda ctx, tensor, output: dist.all_gather_into_tensor(output, tensor, group=ctx.group,
                                                                                      async_op=True),
    "reduce_scatter_tensor": lambda ctx, tensor, output: dist.reduce_scatter_tensor(tensor, output, group=ctx.group,
                                                                                    async_op=True),
    "all_to_all_single": lambda ctx, tensor, output: dist.all_to_all_single(output, output.clone(), group=ctx.group,
                                                                            async_op=True),
    "barrier": lambda ctx, tensor, output: dist.barrier(group=ctx.group, async_op=True),
}


def _is_completed(op: str) -> Callable[[Context], None]:
    def body(ctx: Context) -> None:
        work = _STARTS[op](ctx, ctx.full((2,), 1), ctx.full((2 * ctx.world_size,), 0))
        work.wait()
        expect_true(work.is_completed(), ctx.call(op, async_op=True), "is_completed() is False after wait()")

    body.__doc__ = f"The work of {op}(async_op=True) says is_completed() once its wait() returned."
    return body


for _op in _STARTS:
    item("calls", _op, name=f"{_op}_is_completed")(_is_completed(_op))
