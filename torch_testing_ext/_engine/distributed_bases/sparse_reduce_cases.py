"""Cases for a sparse all-reduce (sum), named as in ``common_distributed``.

Each case is ``(inputs, expected)``: the sparse COO tensors one rank contributes and the sums
every rank should hold afterwards. The cases vary the number of sparse dimensions (1 to 3)
and of dense dimensions (0 to 3); the first sparse dimension of a contribution is
``0..rank``, the others are 0, so any two contributions overlap.

Example::

    for inputs, expected in simple_sparse_reduce_tests(self.rank, self.world_size):
        work = pg.allreduce(inputs)
        work.wait()
        self.assertEqual(work.result(), expected)
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

__all__ = ["simple_sparse_reduce_tests"]


def _contribution(rank: int, world_size: int, sparse_dims: int = 1, dense_dims: int = 0) -> torch.Tensor:
    """Rank ``rank``'s sparse tensor: ``rank + 1`` entries of ones (each a dense block of side
    2 in ``dense_dims`` dimensions) at indices ``0..rank`` of the first sparse dimension."""
    first = torch.arange(rank + 1).reshape(1, rank + 1)
    rows = [first] + [torch.zeros(1, rank + 1, dtype=first.dtype) for _ in range(sparse_dims - 1)]
    indices = torch.cat(rows)
    shape = [world_size] * sparse_dims + [2] * dense_dims
    values = torch.ones([rank + 1] + [2] * dense_dims)
    return torch.sparse_coo_tensor(indices, values, shape, check_invariants=True)


def _total(make: Callable[[int, int], torch.Tensor], world_size: int) -> torch.Tensor:
    result = make(0, world_size)
    for rank in range(1, world_size):
        result = result + make(rank, world_size)
    return result


def simple_sparse_reduce_tests(rank: int, world_size: int, num_inputs: int = 1
                               ) -> list[tuple[list[torch.Tensor], list[torch.Tensor]]]:
    """The sparse sum-reduce cases for ``rank`` of ``world_size``, with ``num_inputs``
    tensors per rank (as if each were a rank of ``num_inputs * world_size``)."""
    makers: list[Callable[[int, int], torch.Tensor]] = [
        functools.partial(_contribution, sparse_dims=1),
        functools.partial(_contribution, sparse_dims=2),
        functools.partial(_contribution, sparse_dims=3),
        functools.partial(_contribution, dense_dims=1),
        functools.partial(_contribution, dense_dims=2),
        functools.partial(_contribution, dense_dims=3),
    ]
    virtual_world = num_inputs * world_size
    cases = []
    for make in makers:
        inputs = [make(num_inputs * rank + i, virtual_world) for i in range(num_inputs)]
        expected = [_total(make, virtual_world) for _ in range(num_inputs)]
        cases.append((inputs, expected))
    return cases
