"""Objects: all_gather_object, broadcast_object_list from every root, gather_object and
scatter_object_list from every root."""

from __future__ import annotations

from typing import Any

import torch.distributed as dist

from ..contract import Context, expect_equal, item


def _object(rank: int) -> dict[str, Any]:
    """A rank's picklable object, of a size depending on the rank."""
    return {"rank": rank, "text": "x" * (rank + 1), "values": list(range(rank + 2)), "nested": (rank, None)}


@item("objects", "all_gather_object")
def all_gather_object(ctx: Context) -> None:
    """all_gather_object puts rank r's object in slot r of every rank's list."""
    gathered: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(gathered, _object(ctx.rank), group=ctx.group)
    expect_equal(gathered, [_object(rank) for rank in range(ctx.world_size)], ctx.call("all_gather_object"))


@item("objects", "broadcast_object_list")
def broadcast_object_list(ctx: Context) -> None:
    """broadcast_object_list from each root leaves every rank with the root's objects."""
    for root in range(ctx.world_size):
        objects: list[Any] = [_object(ctx.rank), "end"] if ctx.rank == root else [None, None]
        dist.broadcast_object_list(objects, src=root, group=ctx.group)
        expect_equal(objects, [_object(root), "end"], ctx.call("broadcast_object_list", root=root))


@item("objects", "gather_object")
def gather_object(ctx: Context) -> None:
    """gather_object to each root puts rank r's object in slot r of the root's list."""
    for root in range(ctx.world_size):
        gathered: list[Any] | None = [None] * ctx.world_size if ctx.rank == root else None
        dist.gather_object(_object(ctx.rank), gathered, dst=root, group=ctx.group)
        if ctx.rank == root:
            expect_equal(gathered, [_object(rank) for rank in range(ctx.world_size)],
                         ctx.call("gather_object", root=root))


@item("objects", "scatter_object_list")
def scatter_object_list(ctx: Context) -> None:
    """scatter_object_list from each root gives rank r slot r of the root's list."""
    for root in range(ctx.world_size):
        received: list[Any] = [None]
        sent = [(root, _object(dest)) for dest in range(ctx.world_size)] if ctx.rank == root else None
        dist.scatter_object_list(received, sent, src=root, group=ctx.group)
        expect_equal(received[0], (root, _object(ctx.rank)), ctx.call("scatter_object_list", root=root))
