"""Shard orders: which mesh dimensions shard a tensor dimension, and in what order.

``Shard`` placements alone say which tensor dimension each mesh dimension shards; when two mesh
dimensions shard the same tensor dimension, the order in which they split it is a *shard
order*, a tuple of ``ShardOrderEntry(tensor_dim, mesh_dims)``. These helpers distribute and
redistribute DTensors to a given shard order (DTensor's public API has no argument for it)::

    for order in generate_shard_orders(mesh, tensor_rank=2):
        dt = patched_distribute_tensor(x, mesh, None, order)   # placements from the order
        self.assertEqual(make_full_tensor(dt), x)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Placement, Replicate, Shard, distribute_tensor

from .._torch_private import redistribute_to_shard_order, shard_order_entry, use_plain_shard_order

__all__ = ["shard_order_to_placement", "redistribute", "patched_distribute_tensor",
           "make_full_tensor", "generate_shard_orders"]

__unittest = True


def _shard_order_from_dict(shard_order: dict[int, Sequence[int]]) -> tuple[Any, ...]:
    """``{tensor_dim: mesh_dims}`` as a shard order (tuple of ``ShardOrderEntry``)."""
    return tuple(shard_order_entry(dim, tuple(mesh_dims)) for dim, mesh_dims in shard_order.items())


def shard_order_to_placement(shard_order: Any, mesh: DeviceMesh) -> tuple[Placement, ...]:
    """The placements a shard order implies: ``Shard(d)`` on each mesh dimension sharding
    tensor dimension ``d``, ``Replicate()`` on the others."""
    placements: list[Placement] = [Replicate()] * mesh.ndim
    for entry in shard_order or ():
        for mesh_dim in entry.mesh_dims:
            placements[mesh_dim] = Shard(entry.tensor_dim)
    return tuple(placements)


def redistribute(dtensor_input: Any, device_mesh: DeviceMesh,
                 placements: Sequence[Placement] | None, shard_order: Any,
                 use_graph_based_transform: bool = True) -> Any:
    """``dtensor_input`` moved to ``placements`` in ``shard_order`` (forward only; placements
    default to those of the shard order)."""
    if placements is None:
        placements = shard_order_to_placement(shard_order, device_mesh)
    return redistribute_to_shard_order(dtensor_input, tuple(placements), shard_order,
                                       use_graph_based_transform)


def patched_distribute_tensor(input_tensor: torch.Tensor, device_mesh: DeviceMesh,
                              placements: Sequence[Placement] | None, shard_order: Any,
                              use_graph_based_transform: bool = True,
                              src_data_rank: int | None = 0) -> Any:
    """``distribute_tensor`` to ``placements`` in ``shard_order``."""
    if placements is None:
        placements = shard_order_to_placement(shard_order, device_mesh)
    dtensor = distribute_tensor(input_tensor, device_mesh, tuple(placements),
                                src_data_rank=src_data_rank)
    use_plain_shard_order(dtensor)
    return redistribute(dtensor, device_mesh, placements, shard_order, use_graph_based_transform)


def make_full_tensor(dtensor_input: Any) -> torch.Tensor:
    """The whole tensor, on every rank, whatever the shard order."""
    return redistribute(dtensor_input, dtensor_input.device_mesh, None, ()).to_local()


def _splits(items: list[int], parts: int) -> Iterator[list[list[int]]]:
    """Every way to cut ``items`` into ``parts`` non-empty consecutive runs."""
    for cuts in itertools.combinations(range(1, len(items)), parts - 1):
        bounds = (0, *cuts, len(items))
        yield [items[a:b] for a, b in itertools.pairwise(bounds)]


def generate_shard_orders(mesh: DeviceMesh, tensor_rank: int) -> Iterator[tuple[Any, ...]]:
    """Every shard order of a ``tensor_rank``-dimensional tensor over all of ``mesh``'s
    dimensions: each ordering of the mesh dimensions, cut into runs, each run given to a
    distinct tensor dimension (in increasing order)."""
    mesh_dims = list(range(mesh.ndim))
    for ordering in itertools.permutations(mesh_dims):
        for parts in range(1, mesh.ndim + 1):
            for runs in _splits(mesh_dims, parts):
                for tensor_dims in itertools.combinations(range(tensor_rank), parts):
                    yield _shard_order_from_dict({
                        dim: ordering[run[0]:run[-1] + 1] for dim, run in zip(tensor_dims, runs, strict=True)})
