"""DTensor over the backend: distribute_tensor with Shard(0) and Replicate on a 1-D device mesh, and
the basic redistributions, each giving back the original by full_tensor()."""

from __future__ import annotations

import torch
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Placement, Replicate, Shard, distribute_tensor

from ..contract import Context, expect_equal, item


def _mesh(ctx: Context) -> DeviceMesh:
    """A 1-D mesh of every rank over the default group the kit made."""
    return init_device_mesh(ctx.device.type, (ctx.world_size,))


def _original(ctx: Context) -> torch.Tensor:
    """The same tensor on every rank, with 2 rows per rank and an uneven count of columns."""
    return (torch.arange(2 * ctx.world_size * 3, device=ctx.device).reshape(2 * ctx.world_size, 3)).to(ctx.dtype)


def _check(ctx: Context, tensor: DTensor, placement: Placement, what: str) -> None:
    expect_equal(tuple(tensor.placements), (placement,), ctx.call(what, tensor.to_local()) + " placements")
    expect_equal(tensor.full_tensor(), _original(ctx), ctx.call(what, tensor.to_local()) + " full_tensor()")


@item("dtensor", "distribute_shard", dtypes=("float32",))
def distribute_shard(ctx: Context) -> None:
    """distribute_tensor with Shard(0) leaves rank r rows 2r and 2r+1; full_tensor() is the original."""
    sharded = distribute_tensor(_original(ctx), _mesh(ctx), [Shard(0)])
    expect_equal(sharded.to_local(), _original(ctx)[2 * ctx.rank: 2 * ctx.rank + 2],
                 ctx.call("distribute_tensor", sharded.to_local(), placement="Shard(0)"))
    _check(ctx, sharded, Shard(0), "distribute_tensor(Shard(0))")


@item("dtensor", "distribute_replicate", dtypes=("float32",))
def distribute_replicate(ctx: Context) -> None:
    """distribute_tensor with Replicate leaves every rank the whole tensor."""
    replicated = distribute_tensor(_original(ctx), _mesh(ctx), [Replicate()])
    expect_equal(replicated.to_local(), _original(ctx), ctx.call("distribute_tensor", placement="Replicate()"))
    _check(ctx, replicated, Replicate(), "distribute_tensor(Replicate())")


@item("dtensor", "shard_to_replicate", dtypes=("float32", "int64"))
def shard_to_replicate(ctx: Context) -> None:
    """redistribute Shard(0) to Replicate gives every rank the whole tensor (an all_gather)."""
    replicated = distribute_tensor(_original(ctx), _mesh(ctx), [Shard(0)]).redistribute(placements=[Replicate()])
    expect_equal(replicated.to_local(), _original(ctx), ctx.call("redistribute", placement="Shard(0)->Replicate()"))
    _check(ctx, replicated, Replicate(), "redistribute(Shard(0)->Replicate())")


@item("dtensor", "replicate_to_shard", dtypes=("float32",))
def replicate_to_shard(ctx: Context) -> None:
    """redistribute Replicate to Shard(0) leaves rank r its rows."""
    sharded = distribute_tensor(_original(ctx), _mesh(ctx), [Replicate()]).redistribute(placements=[Shard(0)])
    expect_equal(sharded.to_local(), _original(ctx)[2 * ctx.rank: 2 * ctx.rank + 2],
                 ctx.call("redistribute", sharded.to_local(), placement="Replicate()->Shard(0)"))
    _check(ctx, sharded, Shard(0), "redistribute(Replicate()->Shard(0))")


@item("dtensor", "shard0_to_shard1", dtypes=("float32",))
def shard0_to_shard1(ctx: Context) -> None:
    """redistribute Shard(0) to Shard(1) (an all_to_all) keeps the tensor whole, uneven columns too."""
    moved = distribute_tensor(_original(ctx), _mesh(ctx), [Shard(0)]).redistribute(placements=[Shard(1)])
    _check(ctx, moved, Shard(1), "redistribute(Shard(0)->Shard(1))")


@item("dtensor", "partial_to_replicate", dtypes=("float32", "int64"))
def partial_to_replicate(ctx: Context) -> None:
    """A Partial (sum) DTensor whose ranks hold parts of the original becomes it by redistribute to Replicate."""
    original = _original(ctx)
    # rank r > 0 holds 10 * r everywhere, rank 0 the original less all of those: they sum to it
    others = 10 * sum(range(1, ctx.world_size))
    part = original - others if ctx.rank == 0 else torch.full_like(original, 10 * ctx.rank)
    partial = DTensor.from_local(part, _mesh(ctx), [Partial()])
    replicated = partial.redistribute(placements=[Replicate()])
    expect_equal(replicated.to_local(), original, ctx.call("redistribute", placement="Partial()->Replicate()"))
