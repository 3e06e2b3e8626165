"""The sharding specs the sharded-tensor tests iterate over, and where a rank's chunk starts.

Placements are ``"rank:<r>/<device>"`` for ranks 0-3: the machine's accelerator device ``r``
(``cuda:<r>`` on a CUDA machine, upstream's spelling), or ``cpu`` on a machine without one,
so that a test on CPU ranks with gloo can use the same specs. Tests that need the accelerator
say so with their own skip decorators.

Example::

    for spec in generate_chunk_sharding_specs_for_test(0):     # three rank orders, dim 0
        st = sharded_tensor.rand(spec, 16, 4)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from ... import devices
from .._torch_private import sharding_spec_api

__all__ = ["DEFAULT_GPU_NUM", "PLACEMENTS", "placement", "chunk_sizes",
           "_chunk_sharding_specs_list_for_test", "generate_chunk_sharding_specs_for_test",
           "generate_enumerable_sharding_specs_for_test", "generate_local_weight_sharding_params_for_test"]

# How many ranks the specs place shards on.
DEFAULT_GPU_NUM = 4


def placement(rank: int) -> str:
    """``"rank:<rank>/<device>"``: the accelerator's device ``rank``, or ``cpu`` without one."""
    return f"rank:{rank}/{devices.rank_device(rank)}"


# Ranks 0-3 in order (a fresh list for each spec below; shuffling it changes none of them).
PLACEMENTS = [placement(rank) for rank in range(DEFAULT_GPU_NUM)]


def _chunk_sharding_specs_list_for_test(sharding_dims: Sequence[int], seed: int = 0) -> list[Any]:
    """One chunk spec per entry of ``sharding_dims``, on that dim, over ranks 0-3 in a seeded
    order: spec ``i``'s order is spec ``i - 1``'s (ranks 0-3 for the first) shuffled by
    ``random.Random(seed + i)``.

    Upstream shuffles one module-level list in place, so a call's orders also depend on the
    calls before it in the process; here every call starts from ranks 0-3, which is what
    upstream gives on a process's first call.
    """
    order = [placement(rank) for rank in range(DEFAULT_GPU_NUM)]
    specs = []
    for index, dim in enumerate(sharding_dims):
        random.Random(seed + index).shuffle(order)
        specs.append(sharding_spec_api().ChunkShardingSpec(dim=dim, placements=list(order)))
    return specs


def generate_chunk_sharding_specs_for_test(sharding_dim: int) -> list[Any]:
    """Three chunk specs on ``sharding_dim`` over ranks 0-3: in order, then starting at rank
    2 (2, 3, 0, 1), then starting at rank 3 (3, 0, 1, 2)."""
    specs = sharding_spec_api()
    ranks = range(DEFAULT_GPU_NUM)
    return [specs.ChunkShardingSpec(dim=sharding_dim, placements=[placement((first + k) % len(ranks)) for k in ranks])
            for first in (0, 2, 3)]


def generate_enumerable_sharding_specs_for_test() -> list[Any]:
    """One enumerable spec: a 10x10 tensor in four 5x5 blocks, column by column (rank 0 at
    (0, 0), rank 1 at (5, 0), rank 2 at (0, 5), rank 3 at (5, 5))."""
    corners = [(0, 0), (5, 0), (0, 5), (5, 5)]
    specs = sharding_spec_api()
    return [specs.EnumerableShardingSpec([specs.ShardMetadata(shard_offsets=[row, col], shard_sizes=[5, 5],
                                                              placement=placement(rank))
                                          for rank, (row, col) in enumerate(corners)])]


def chunk_sizes(dim_size: int, chunks: int) -> list[int]:
    """The sizes ``torch.chunk`` cuts ``dim_size`` into when asked for ``chunks`` pieces, padded
    with zeros to ``chunks`` entries (the chunk spec's rule for each placement)."""
    step = -(-dim_size // chunks)
    return [max(0, min(dim_size, step * (i + 1)) - step * i) for i in range(chunks)]


def generate_local_weight_sharding_params_for_test(local_weight: torch.Tensor, sharded_dim: int, gpu_num: int,
                                                   spec: Any, rank: int) -> tuple[int, int]:
    """``(start, length)`` of ``rank``'s chunk of ``local_weight`` along ``sharded_dim`` when a
    chunk spec over ``gpu_num`` ranks shards it: ``local_weight.narrow(sharded_dim, start,
    length)`` is what that rank holds. ValueError if ``rank`` has no placement in ``spec``
    (upstream answers the last placement's size at offset 0)."""
    sizes = chunk_sizes(local_weight.size(sharded_dim), gpu_num)
    start = 0
    for index, where in enumerate(spec.placements):
        if where.rank() == rank:
            return start, sizes[index]
        start += sizes[index]
    raise ValueError(f"rank {rank} has no placement in {spec}")
