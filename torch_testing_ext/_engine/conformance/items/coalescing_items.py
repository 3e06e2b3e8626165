"""Coalescing: the public coalesced collectives (all_reduce_coalesced, all_gather_coalesced), which
reduce or gather several tensors of different shapes in one call."""

from __future__ import annotations

import warnings

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, item

SOME = ("float32", "int64")
SHAPES = ((3,), (2, 2), (1,))


@item("coalescing", "all_reduce_coalesced", dtypes=SOME)
def all_reduce_coalesced(ctx: Context) -> None:
    """all_reduce_coalesced reduces each of several tensors of different shapes, every one in place."""
    tensors = [ctx.full(shape, (index + 1) * (ctx.rank + 1)) for index, shape in enumerate(SHAPES)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # deprecated, yet public
        dist.all_reduce_coalesced(tensors, group=ctx.group)
    for index, (tensor, shape) in enumerate(zip(tensors, SHAPES, strict=True)):
        expected = ctx.full(shape, (index + 1) * ctx.reduce_of(lambda rank: rank + 1))
        expect_equal(tensor, expected, ctx.call("all_reduce_coalesced", tensor, index=index))


@item("coalescing", "all_gather_coalesced", dtypes=SOME)
def all_gather_coalesced(ctx: Context) -> None:
    """all_gather_coalesced gathers each of several tensors: slot r of list i holds rank r's tensor i."""
    def value(rank: int, index: int, shape: tuple[int, ...]) -> torch.Tensor:
        return ctx.full(shape, 10 * rank + index)

    inputs = [value(ctx.rank, index, shape) for index, shape in enumerate(SHAPES)]
    outputs = [[ctx.full(shape, -1) for shape in SHAPES] for _ in range(ctx.world_size)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        dist.all_gather_coalesced(outputs, inputs, group=ctx.group)
    for rank, gathered in enumerate(outputs):
        for index, (output, shape) in enumerate(zip(gathered, SHAPES, strict=True)):
            expect_equal(output, value(rank, index, shape), ctx.call("all_gather_coalesced", output, slot=rank,
                                                                     index=index))
