"""What each collective does to the ranks' tensors, once every rank of the group has called it.

Each function receives ``contributions``: the group rank -> what that rank passed to the
process group method (its output and input tensors), and writes every rank's outputs. They
run in one thread (the last rank to arrive) while the other ranks wait, so they may read and
write any rank's tensors. Outputs are written under ``no_grad`` through ``detach()``: a
collective's result is data, not a differentiable step (as with real backends, whose writes
autograd never sees). Shapes are checked, since ``copy_`` would otherwise broadcast silently.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["reduce_op_name", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
           "scatter", "gather", "reduce"]

__unittest = True

Contributions = dict[int, Any]


def _bitwise(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda stacked: functools.reduce(op, stacked.unbind(0))


def _average(stacked: torch.Tensor) -> torch.Tensor:
    total = stacked.sum(0)
    if total.is_floating_point() or total.is_complex():
        return total / stacked.shape[0]
    return torch.div(total, stacked.shape[0], rounding_mode="trunc")


# Reduce a stack of the ranks' tensors (dimension 0) to one tensor.
_REDUCERS: dict[Any, Callable[[torch.Tensor], torch.Tensor]] = {
    dist.ReduceOp.SUM: lambda stacked: stacked.sum(0),
    dist.ReduceOp.AVG: _average,
    dist.ReduceOp.PRODUCT: lambda stacked: stacked.prod(0),
    dist.ReduceOp.MIN: lambda stacked: stacked.amin(0),
    dist.ReduceOp.MAX: lambda stacked: stacked.amax(0),
    dist.ReduceOp.BAND: _bitwise(torch.bitwise_and),
    dist.ReduceOp.BOR: _bitwise(torch.bitwise_or),
    dist.ReduceOp.BXOR: _bitwise(torch.bitwise_xor),
}


def _op_type(op: Any) -> Any:
    """The ``RedOpType`` of a ``ReduceOp`` object (what options carry) or of a ``RedOpType``."""
    return getattr(op, "op", op)


def reduce_op_name(op: Any) -> str:
    """``"SUM"``, ``"MAX"``...; a ValueError for an operation threaded ranks cannot do."""
    kind = _op_type(op)
    if kind not in _REDUCERS:
        raise ValueError(f"threaded ranks cannot reduce with {kind} (supported: "
                         f"{', '.join(k.name for k in _REDUCERS)})")
    return kind.name


def _reduced(tensors: Sequence[torch.Tensor], op: Any, device: torch.device) -> torch.Tensor:
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) > 1:
        raise ValueError(f"the ranks' tensors differ in shape: {sorted(shapes)}")
    return _REDUCERS[_op_type(op)](torch.stack([t.to(device) for t in tensors]))


def _write(writes: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    """Copy each value into its output; every value is read before any output is written, since
    outputs may be the inputs (in-place collectives) or views of them."""
    for output, value in writes:
        if output.numel() != value.numel():
            raise ValueError(f"output of shape {tuple(output.shape)} cannot hold a tensor of "
                             f"shape {tuple(value.shape)}")
    with torch.no_grad():
        values = [value.detach().clone() for _, value in writes]
        for (output, _), value in zip(writes, values, strict=True):
            output.detach().copy_(value.reshape(output.shape))


def _flat_chunks(tensor: torch.Tensor, count: int) -> list[torch.Tensor]:
    """``tensor`` viewed as ``count`` equal consecutive pieces (it must be contiguous)."""
    if not tensor.is_contiguous():
        raise ValueError("the tensor must be contiguous")
    if tensor.numel() % count:
        raise ValueError(f"a tensor of {tensor.numel()} elements does not split into {count} "
                         "equal pieces")
    return list(tensor.view(-1).chunk(count))


def all_reduce(contributions: Contributions, op: Any) -> None:
    """Each rank passed a list of tensors; position i becomes the reduction of every rank's i."""
    ranks = sorted(contributions)
    writes = []
    for i in range(len(contributions[ranks[0]])):
        value = _reduced([contributions[r][i] for r in ranks], op, contributions[ranks[0]][i].device)
        writes += [(contributions[r][i], value) for r in ranks]
    _write(writes)


def reduce(contributions: Contributions, op: Any, root: int) -> None:
    """Like all_reduce, but only ``root``'s tensors receive the result."""
    ranks = sorted(contributions)
    _write([(out, _reduced([contributions[r][i] for r in ranks], op, out.device))
            for i, out in enumerate(contributions[root])])


def broadcast(contributions: Contributions, root: int) -> None:
    """Each rank passed a list of tensors; every rank's list becomes a copy of ``root``'s."""
    _write([(out, value) for rank, tensors in contributions.items() if rank != root
            for out, value in zip(tensors, contributions[root], strict=True)])


def all_gather(contributions: Contributions) -> None:
    """Rank r passed ``([outputs], [input])``: every rank's ``outputs[s]`` gets rank s's input."""
    _write([(outputs[0][source], inputs[0]) for outputs, _ in contributions.values()
            for source, (_, inputs) in contributions.items()])


def all_gather_into_tensor(contributions: Contributions) -> None:
    """Rank r passed ``(output, input)``: output is the ranks' inputs, concatenated in order."""
    _write([(piece, contributions[source][1]) for output, _ in contributions.values()
            for source, piece in enumerate(_flat_chunks(output, len(contributions)))])


def reduce_scatter(contributions: Contributions, op: Any) -> None:
    """Rank r passed ``([output], [inputs])``: its output is the reduction of every ``inputs[r]``."""
    _write([(outputs[0], _reduced([inputs[0][rank] for _, inputs in contributions.values()], op,
                                  outputs[0].device))
            for rank, (outputs, _) in contributions.items()])


def reduce_scatter_tensor(contributions: Contributions, op: Any) -> None:
    """Rank r passed ``(output, input)``: its output is the reduction of piece r of every input."""
    count = len(contributions)
    chunks = {rank: _flat_chunks(inp, count) for rank, (_, inp) in contributions.items()}
    _write([(output, _reduced([chunks[s][rank] for s in sorted(chunks)], op, output.device))
            for rank, (output, _) in contributions.items()])


def all_to_all(contributions: Contributions) -> None:
    """Rank r passed ``(outputs, inputs)``: its ``outputs[s]`` gets rank s's ``inputs[r]``."""
    _write([(outputs[source], inputs[rank]) for rank, (outputs, _) in contributions.items()
            for source, (_, inputs) in contributions.items()])


def _split(tensor: torch.Tensor, sizes: Sequence[int] | torch.Tensor | None,
           count: int) -> list[torch.Tensor]:
    if sizes is None or len(sizes) == 0:  # sizes may be a tensor
        if tensor.shape[0] % count:
            raise ValueError(f"dimension 0 of size {tensor.shape[0]} does not split into {count}")
        sizes = [tensor.shape[0] // count] * count
    return list(tensor.split([int(s) for s in sizes]))


def all_to_all_single(contributions: Contributions) -> None:
    """Rank r passed ``(output, input, output_splits, input_splits)``, splits along dimension 0:
    its output piece s gets input piece r of rank s."""
    count = len(contributions)
    inputs = {rank: _split(inp, in_splits, count)
              for rank, (_, inp, _, in_splits) in contributions.items()}
    _write([(piece, inputs[source][rank])
            for rank, (output, _, out_splits, _) in contributions.items()
            for source, piece in enumerate(_split(output, out_splits, count))])


def scatter(contributions: Contributions, root: int) -> None:
    """Rank r passed ``([output], inputs)``; ``root``'s ``inputs[0][r]`` goes to rank r's output."""
    pieces = contributions[root][1][0]
    _write([(outputs[0], pieces[rank]) for rank, (outputs, _) in contributions.items()])


def gather(contributions: Contributions, root: int) -> None:
    """Rank r passed ``(outputs, [input])``; rank r's input goes to ``root``'s ``outputs[0][r]``."""
    targets = contributions[root][0][0]
    _write([(targets[rank], inputs[0]) for rank, (_, inputs) in contributions.items()])
