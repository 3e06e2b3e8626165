"""The values ``compare`` takes, on their way from a rank to the test process.

In a rank, :func:`to_payload` turns a value into plain data that pickles: a tensor becomes a
detached CPU copy (a functional collective's ``AsyncCollectiveTensor``, as a tensor parallel
module returns, the copy of its waited result); a DTensor becomes this rank's :class:`Shard`
(its local tensor, its mesh and placements), because its full tensor would cost a collective;
numbers, ``None`` and strings stay; lists, tuples and dicts are converted item by item.
Anything else is a ``TypeError`` naming where in the value it is. The copies are made with torch functions and dispatch
disabled, so the test's modes (``CommDebugMode``, a ``TorchDispatchMode``) see nothing of them,
and without autograd.

In the test process, :func:`assemble` gives each rank's value with every ``Shard`` replaced by
the DTensor's full tensor, put together from the shards of the ranks of its mesh (the value
``full_tensor()`` would return on that rank), without any collective.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from .._torch_private import async_collective_result, torch_dispatch_disabled, torch_function_disabled

__all__ = ["Shard", "AssemblyError", "to_payload", "assemble", "leaves", "path_text", "PACKED_TENSORS",
           "unpack_tensor"]

_SCALARS = (bool, int, float, complex, str, type(None))


class AssemblyError(ValueError):
    """The shards of a DTensor could not be put together (a rank of its mesh did not record
    its shard, or recorded something else); the message says which."""


@dataclasses.dataclass(frozen=True)
class Shard:
    """One rank's part of a DTensor: its local tensor, the global ranks of its mesh (row-major),
    the mesh's shape, this rank's coordinate in it, the placements (``("shard", dim)``,
    ``("replicate", None)`` or ``("partial", reduce_op)``, one per mesh dimension) and the
    DTensor's global shape."""

    local: torch.Tensor
    mesh_ranks: tuple[int, ...]
    mesh_shape: tuple[int, ...]
    coordinate: tuple[int, ...] | None
    placements: tuple[tuple[str, Any], ...]
    shape: tuple[int, ...]


def unpack_tensor(dtype: str, shape: tuple[int, ...], data: bytes) -> torch.Tensor:
    """A tensor of ``dtype`` (its name in ``torch``) and ``shape`` from its bytes."""
    kind = getattr(torch, dtype)
    if not data:
        return torch.empty(shape, dtype=kind)
    return torch.frombuffer(bytearray(data), dtype=kind).reshape(shape)


def _pack_tensor(tensor: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    compact = tensor.contiguous()  # a CPU copy of the rank's own (``to_payload``)
    size = compact.numel() * compact.element_size()
    data = ctypes.string_at(compact.data_ptr(), size) if size else b""  # (bytes(storage) is a hundred times slower)
    return unpack_tensor, (str(compact.dtype).removeprefix("torch."), tuple(compact.shape), data)


#: How a record's tensors are pickled (a pickler's ``dispatch_table``): as their bytes, dtype and
#: shape, which loads some thirty times faster than torch's own pickling of a tensor.
PACKED_TENSORS: dict[type, Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]] = {torch.Tensor: _pack_tensor}


def path_text(path: tuple[Any, ...]) -> str:
    """``[0]['w']``: where a leaf is in a value (empty for the value itself)."""
    return "".join(f"[{key!r}]" for key in path)


@contextlib.contextmanager
def _unseen() -> Iterator[None]:
    """A block whose tensor work the test's modes and autograd do not see."""
    with torch.no_grad(), torch_function_disabled(), torch_dispatch_disabled():
        yield


def _plain_copy(tensor: torch.Tensor) -> torch.Tensor:
    with _unseen():
        return tensor.detach().to("cpu", copy=True)


def _is_plain(tensor: torch.Tensor) -> bool:
    return type(tensor) is torch.Tensor or type(tensor) is torch.nn.Parameter \
        or type(tensor).__name__ == "Buffer" and type(tensor).__module__.startswith("torch.nn")


def _placement(placement: Any, ndim: int) -> tuple[str, Any]:
    from torch.distributed.tensor.placement_types import Partial, Replicate
    from torch.distributed.tensor.placement_types import Shard as ShardPlacement

    if type(placement) is ShardPlacement:
        return "shard", placement.dim % ndim if ndim else placement.dim
    if type(placement) is Replicate:
        return "replicate", None
    if type(placement) is Partial:
        return "partial", placement.reduce_op
    raise TypeError(f"a DTensor placed as {placement!r}, which compare cannot put together without a "
                    "collective; pass value.full_tensor() (that is a collective of the test)")


def _shard(value: Any) -> Shard:
    with _unseen():
        mesh = value.device_mesh
        placements = tuple(_placement(p, value.ndim) for p in value.placements)
        coordinate = mesh.get_coordinate()
        local = value.to_local().detach().to("cpu", copy=True)
        ranks = tuple(int(rank) for rank in mesh.mesh.flatten().tolist())
        return Shard(local, ranks, tuple(mesh.mesh.shape), None if coordinate is None else tuple(coordinate),
                     placements, tuple(value.shape))


def to_payload(value: Any, path: tuple[Any, ...] = ()) -> Any:
    """``value`` as plain data for the test process (see the module docstring); ``TypeError``
    naming where in ``value`` a part is of a kind ``compare`` does not take."""
    if isinstance(value, torch.Tensor):
        with torch_dispatch_disabled():  # (the test's modes see no wait of ours)
            waited = async_collective_result(value)
        if waited is not None:
            return _plain_copy(waited)
        dtensor_api = sys.modules.get("torch.distributed.tensor")  # not imported: no DTensor here
        if dtensor_api is not None and type(value) is dtensor_api.DTensor:
            try:
                return _shard(value)
            except TypeError as error:
                raise TypeError(f"value{path_text(path)}: {error}") from None
        if not _is_plain(value):
            raise TypeError(f"value{path_text(path)} is of type {type(value).__name__}, a tensor subclass compare "
                            "does not take; pass a plain tensor or a DTensor")
        return _plain_copy(value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        converted = [to_payload(item, (*path, index)) for index, item in enumerate(value)]
        return converted if isinstance(value, list) else tuple(converted)
    if isinstance(value, Mapping):
        return {key: to_payload(item, (*path, key)) for key, item in value.items()}
    raise TypeError(f"value{path_text(path)} is of type {type(value).__name__}; compare takes tensors (DTensors too), "
                    "numbers and strings, and lists, tuples and dicts of them")


def leaves(payload: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every leaf of ``payload`` with its path, in order (a dict's in its key order)."""
    if isinstance(payload, (list, tuple)):
        for index, item in enumerate(payload):
            yield from leaves(item, (*path, index))
    elif isinstance(payload, dict):
        for key, item in payload.items():
            yield from leaves(item, (*path, key))
    else:
        yield path, payload


def _replace(payload: Any, path: tuple[Any, ...], full: dict[tuple[Any, ...], torch.Tensor]) -> Any:
    if isinstance(payload, list):
        return [_replace(item, (*path, index), full) for index, item in enumerate(payload)]
    if isinstance(payload, tuple):
        return tuple(_replace(item, (*path, index), full) for index, item in enumerate(payload))
    if isinstance(payload, dict):
        return {key: _replace(item, (*path, key), full) for key, item in payload.items()}
    return full.get(path, payload)


def _leaf(payload: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        try:
            payload = payload[key]
        except (KeyError, IndexError, TypeError):
            return None
    return payload


def _combine(parts: list[torch.Tensor], placement: tuple[str, Any]) -> torch.Tensor:
    kind, detail = placement
    if kind == "shard":
        return torch.cat(parts, dim=detail)
    if kind == "replicate":
        return parts[0]
    stacked = torch.stack(parts)
    reductions = {"sum": lambda: stacked.sum(0), "avg": lambda: stacked.mean(0), "max": lambda: stacked.amax(0),
                  "min": lambda: stacked.amin(0), "product": lambda: stacked.prod(0)}
    if detail not in reductions:
        raise AssemblyError(f"a Partial({detail!r}) placement cannot be reduced here")
    return reductions[detail]().to(parts[0].dtype)


def _full_tensor(pieces: dict[int, Shard], own: Shard) -> torch.Tensor:
    """The full tensor of the DTensor whose shard on one rank is ``own``, from the shards the
    ranks of its mesh recorded (``pieces``, by global rank)."""
    parts: dict[tuple[int, ...], torch.Tensor] = {}
    for rank in own.mesh_ranks:
        piece = pieces.get(rank)
        if piece is None or piece.coordinate is None:
            raise AssemblyError(f"rank {rank} of its mesh did not record its shard")
        if piece.mesh_ranks != own.mesh_ranks or piece.placements != own.placements:
            raise AssemblyError(f"rank {rank} recorded a shard of a DTensor on another mesh or placement "
                                f"({piece.placements} on ranks {list(piece.mesh_ranks)})")
        parts[piece.coordinate] = piece.local
    for dim in reversed(range(len(own.mesh_shape))):  # the innermost placement first
        groups: dict[tuple[int, ...], list[tuple[int, torch.Tensor]]] = {}
        for coordinate, tensor in parts.items():
            groups.setdefault(coordinate[:dim], []).append((coordinate[dim], tensor))
        parts = {outer: _combine([tensor for _, tensor in sorted(group, key=lambda item: item[0])], own.placements[dim])
                 for outer, group in groups.items()}
    (full,) = parts.values()
    if tuple(full.shape) != own.shape:
        raise AssemblyError(f"its shards make a tensor of shape {tuple(full.shape)}, not its shape {own.shape}")
    return full


def assemble(payloads: Mapping[int, Any]) -> dict[int, Any]:
    """Each rank's payload (by global rank) with its DTensor shards replaced by full tensors;
    :class:`AssemblyError` (naming where in the value) if a DTensor's shards do not fit."""
    values: dict[int, Any] = {}
    for rank, payload in payloads.items():
        full: dict[tuple[Any, ...], torch.Tensor] = {}
        for path, leaf in leaves(payload):
            if isinstance(leaf, Shard):
                pieces = {other: piece for other in leaf.mesh_ranks
                          for piece in [_leaf(payloads.get(other), path)] if isinstance(piece, Shard)}
                try:
                    full[path] = _full_tensor(pieces, leaf)
                except AssemblyError as error:
                    raise AssemblyError(f"the DTensor at value{path_text(path)} of rank {rank}: {error}") from None
        values[rank] = _replace(payload, (), full) if full else payload
    return values
