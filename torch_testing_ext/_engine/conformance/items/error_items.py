"""Errors: calls whose sizes do not match raise on every rank, none hangs, and the group works after."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch.distributed as dist

from ..contract import Context, expect_group_works, expect_raises, item


def _raises_then_works(ctx: Context, op: str, body: Callable[[], Any], **arguments: Any) -> None:
    """``body()`` raises on this rank; then an all_reduce over the group still sums right."""
    expect_raises((RuntimeError, ValueError), body, ctx.call(op, **arguments))
    expect_group_works(ctx, f"a failed {op}")


@item("errors", "all_gather_into_tensor_size")
def all_gather_into_tensor_size(ctx: Context) -> None:
    """all_gather_into_tensor into an output not world_size times the input raises."""
    output, source = ctx.full((3 * ctx.world_size + 1,), 0), ctx.full((3,), 1)
    _raises_then_works(ctx, "all_gather_into_tensor",
                       lambda: dist.all_gather_into_tensor(output, source, group=ctx.group),
                       output_shape=tuple(output.shape))


@item("errors", "reduce_scatter_tensor_size")
def reduce_scatter_tensor_size(ctx: Context) -> None:
    """reduce_scatter_tensor from an input not world_size times the output raises."""
    output, source = ctx.full((2,), 0), ctx.full((2 * ctx.world_size + 1,), 1)
    _raises_then_works(ctx, "reduce_scatter_tensor",
                       lambda: dist.reduce_scatter_tensor(output, source, group=ctx.group),
                       input_shape=tuple(source.shape))


@item("errors", "all_gather_list_length")
def all_gather_list_length(ctx: Context) -> None:
    """all_gather into a list of world_size + 1 tensors raises."""
    outputs = [ctx.full((2,), 0) for _ in range(ctx.world_size + 1)]
    _raises_then_works(ctx, "all_gather", lambda: dist.all_gather(outputs, ctx.full((2,), 1), group=ctx.group),
                       outputs=len(outputs))


@item("errors", "all_gather_shape")
def all_gather_shape(ctx: Context) -> None:
    """all_gather into outputs of another shape than the input raises."""
    outputs = [ctx.full((3,), 0) for _ in range(ctx.world_size)]
    _raises_then_works(ctx, "all_gather", lambda: dist.all_gather(outputs, ctx.full((2,), 1), group=ctx.group),
                       output_shape=(3,))


@item("errors", "all_to_all_single_splits")
def all_to_all_single_splits(ctx: Context) -> None:
    """all_to_all_single with input splits that do not add up to the input raises."""
    output, source = ctx.full((ctx.world_size,), 0), ctx.full((ctx.world_size,), 1)
    splits = [2] * ctx.world_size
    _raises_then_works(ctx, "all_to_all_single", lambda: dist.all_to_all_single(
        output, source, [1] * ctx.world_size, splits, group=ctx.group), input_split_sizes=splits)


@item("errors", "broadcast_bad_root")
def broadcast_bad_root(ctx: Context) -> None:
    """broadcast from a root outside the group raises."""
    tensor = ctx.full((2,), 1)
    _raises_then_works(ctx, "broadcast", lambda: dist.broadcast(tensor, src=ctx.world_size, group=ctx.group),
                       root=ctx.world_size)
