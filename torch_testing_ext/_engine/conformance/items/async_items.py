"""Async work: async_op=True returns a work whose wait() completes it, is_completed() after,
get_future() carrying the result; outstanding works waited in any order."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, expect_true, item


@item("async", "wait", dtypes=("float32", "int64"))
def wait(ctx: Context) -> None:
    """all_reduce(async_op=True).wait() leaves the result in place and the work completed."""
    tensor = ctx.full((4,), ctx.rank + 1)
    work = dist.all_reduce(tensor, group=ctx.group, async_op=True)
    expect_true(work is not None, ctx.call("all_reduce", tensor, async_op=True), "returned no work")
    work.wait()
    expect_true(work.is_completed(), ctx.call("all_reduce", tensor, async_op=True), "not completed after wait()")
    expect_equal(tensor, ctx.full((4,), ctx.reduce_of(lambda rank: rank + 1)), ctx.call("all_reduce", tensor))


@item("async", "get_future")
def get_future(ctx: Context) -> None:
    """The future of an async all_reduce gives the reduced tensor."""
    tensor = ctx.full((3,), ctx.rank + 1)
    work = dist.all_reduce(tensor, group=ctx.group, async_op=True)
    value = work.get_future().wait()
    result = value[0] if isinstance(value, (list, tuple)) else value
    expect_true(isinstance(result, torch.Tensor), ctx.call("get_future().wait()"), f"gave {type(value).__name__}")
    expect_equal(result, ctx.full((3,), ctx.reduce_of(lambda rank: rank + 1)), ctx.call("get_future().wait()", result))
    work.wait()


@item("async", "reverse_order")
def reverse_order(ctx: Context) -> None:
    """Several outstanding works (all_reduce, broadcast, all_gather) waited in the reverse order."""
    summed = ctx.full((3,), ctx.rank + 1)
    broadcasted = ctx.full((3,), ctx.rank + 7)
    gathered = [ctx.full((2,), -1) for _ in range(ctx.world_size)]
    works = [dist.all_reduce(summed, group=ctx.group, async_op=True),
             dist.broadcast(broadcasted, src=ctx.world_size - 1, group=ctx.group, async_op=True),
             dist.all_gather(gathered, ctx.full((2,), ctx.rank), group=ctx.group, async_op=True)]
    for work in reversed(works):
        work.wait()
    for work in works:
        expect_true(work.is_completed(), ctx.call("wait"), "a work not completed after wait()")
    expect_equal(summed, ctx.full((3,), ctx.reduce_of(lambda rank: rank + 1)), ctx.call("all_reduce", summed))
    expect_equal(broadcasted, ctx.full((3,), ctx.world_size + 6), ctx.call("broadcast", broadcasted))
    for rank, output in enumerate(gathered):
        expect_equal(output, ctx.full((2,), rank), ctx.call("all_gather", output, slot=rank))


@item("async", "isend_irecv_work")
def isend_irecv_work(ctx: Context) -> None:
    """The works of isend/irecv complete on wait(), the message in place."""
    peer = 1 - ctx.rank if ctx.rank < 2 else None
    if peer is None:
        return
    buffer = ctx.full((2,), -1)
    works: list[Any] = [dist.isend(ctx.full((2,), ctx.rank + 5), dst=peer, group=ctx.group),
             dist.irecv(buffer, src=peer, group=ctx.group)]
    for work in reversed(works):
        work.wait()
        expect_true(work.is_completed(), ctx.call("irecv", buffer, src=peer), "not completed after wait()")
    expect_equal(buffer, ctx.full((2,), peer + 5), ctx.call("irecv", buffer, src=peer))
