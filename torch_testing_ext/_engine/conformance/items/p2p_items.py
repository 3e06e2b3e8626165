"""Point to point: send/recv, isend/irecv, batch_isend_irecv, a ring, any source, and messages
received in another order than sent."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from ..contract import Context, expect_equal, item

SOME = ("float32", "int64")


def _message(ctx: Context, source: int, dest: int, tag: int = 0) -> torch.Tensor:
    """What ``source`` sends ``dest`` (under ``tag``): distinct for each."""
    return (torch.arange(4, device=ctx.device) + 10 * source + 100 * dest + 1000 * tag).to(ctx.dtype)


@item("p2p", "send_recv", dtypes=SOME)
def send_recv(ctx: Context) -> None:
    """send from rank 0 to each other rank arrives whole, by recv."""
    for dest in range(1, ctx.world_size):
        if ctx.rank == 0:
            dist.send(_message(ctx, 0, dest), dst=dest, group=ctx.group)
        elif ctx.rank == dest:
            buffer = ctx.full((4,), -1)
            dist.recv(buffer, src=0, group=ctx.group)
            expect_equal(buffer, _message(ctx, 0, dest), ctx.call("recv", buffer, src=0))


@item("p2p", "isend_irecv", dtypes=SOME)
def isend_irecv(ctx: Context) -> None:
    """isend/irecv between every pair of ranks: every message arrives after wait()."""
    works: list[Any] = []
    buffers: dict[int, torch.Tensor] = {}
    for peer in range(ctx.world_size):
        if peer == ctx.rank:
            continue
        buffers[peer] = ctx.full((4,), -1)
        works.append(dist.irecv(buffers[peer], src=peer, group=ctx.group))
        works.append(dist.isend(_message(ctx, ctx.rank, peer), dst=peer, group=ctx.group))
    for work in works:
        work.wait()
    for peer, buffer in buffers.items():
        expect_equal(buffer, _message(ctx, peer, ctx.rank), ctx.call("irecv", buffer, src=peer))


@item("p2p", "batch_isend_irecv", dtypes=SOME)
def batch_isend_irecv(ctx: Context) -> None:
    """batch_isend_irecv of P2POps to both ring neighbours: both messages arrive."""
    right, left = (ctx.rank + 1) % ctx.world_size, (ctx.rank - 1) % ctx.world_size
    from_left, from_right = ctx.full((4,), -1), ctx.full((4,), -1)
    ops = [dist.P2POp(dist.isend, _message(ctx, ctx.rank, right), right, ctx.group),
           dist.P2POp(dist.irecv, from_left, left, ctx.group)]
    if ctx.world_size > 2:  # with two ranks, left and right are the same peer
        ops += [dist.P2POp(dist.isend, _message(ctx, ctx.rank, left, 1), left, ctx.group, 1),
                dist.P2POp(dist.irecv, from_right, right, ctx.group, 1)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    expect_equal(from_left, _message(ctx, left, ctx.rank), ctx.call("batch_isend_irecv", from_left, src=left))
    if ctx.world_size > 2:
        expect_equal(from_right, _message(ctx, right, ctx.rank, 1),
                     ctx.call("batch_isend_irecv", from_right, src=right, tag=1))


@item("p2p", "ring", dtypes=SOME)
def ring(ctx: Context) -> None:
    """A ring: each rank passes on what it got, so after world_size - 1 steps every rank saw every value."""
    right, left = (ctx.rank + 1) % ctx.world_size, (ctx.rank - 1) % ctx.world_size
    current = _message(ctx, ctx.rank, 0)
    for step in range(1, ctx.world_size):
        incoming = ctx.full((4,), -1)
        works: list[Any] = [dist.isend(current, dst=right, group=ctx.group),
                            dist.irecv(incoming, src=left, group=ctx.group)]
        for work in works:
            work.wait()
        origin = (ctx.rank - step) % ctx.world_size
        expect_equal(incoming, _message(ctx, origin, 0), ctx.call("ring", incoming, step=step, src=left))
        current = incoming


@item("p2p", "recv_any_source")
def recv_any_source(ctx: Context) -> None:
    """recv(src=None) on rank 0 takes each other rank's message and returns its sender."""
    if ctx.rank == 0:
        seen = {}
        for _ in range(1, ctx.world_size):
            buffer = ctx.full((4,), -1)
            sender = dist.recv(buffer, src=None, group=ctx.group)
            expect_equal(buffer, _message(ctx, sender, 0), ctx.call("recv", buffer, src=None, sender=sender))
            seen[sender] = True
        expect_equal(sorted(seen), list(range(1, ctx.world_size)), ctx.call("recv", src=None))
    else:
        dist.send(_message(ctx, ctx.rank, 0), dst=0, group=ctx.group)


@item("p2p", "tags_out_of_order")
def tags_out_of_order(ctx: Context) -> None:
    """Two messages under different tags, received in the reverse order of their sending."""
    if ctx.rank == 0:
        works: list[Any] = [dist.isend(_message(ctx, 0, 1, tag), dst=1, group=ctx.group, tag=tag) for tag in (1, 2)]
        for work in works:
            work.wait()
    elif ctx.rank == 1:
        for tag in (2, 1):
            buffer = ctx.full((4,), -1)
            dist.recv(buffer, src=0, group=ctx.group, tag=tag)
            expect_equal(buffer, _message(ctx, 0, 1, tag), ctx.call("recv", buffer, src=0, tag=tag))


@item("p2p", "peers_out_of_order", min_world_size=3)
def peers_out_of_order(ctx: Context) -> None:
    """Rank 0 receives from the highest rank first, whatever order the others sent in."""
    if ctx.rank == 0:
        for source in reversed(range(1, ctx.world_size)):
            buffer = ctx.full((4,), -1)
            dist.recv(buffer, src=source, group=ctx.group)
            expect_equal(buffer, _message(ctx, source, 0), ctx.call("recv", buffer, src=source))
    else:
        dist.send(_message(ctx, ctx.rank, 0), dst=0, group=ctx.group)
