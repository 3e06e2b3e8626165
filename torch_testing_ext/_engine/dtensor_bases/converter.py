"""``DTensorConverter``: an op's arguments as DTensors, once per way of placing them.

Each tensor argument is either replicated or sharded evenly on one of its dimensions; the
converter yields ``(args, kwargs)`` for every combination of those choices::

    converter = DTensorConverter(mesh, (x, y), {})
    for dist_args, dist_kwargs in converter:
        self.assertEqual(torch.add(*dist_args).full_tensor(), torch.add(x, y))
    self.assertTrue(converter.successful())   # every tensor could be converted
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Placement, Replicate, Shard, distribute_tensor

from .._torch_private import is_functional_tensor, local_tensor_api, tree_flatten, tree_unflatten

__all__ = ["DTensorConverter"]

__unittest = True


def _plain_tensor_types() -> tuple[type, ...]:
    """Tensor types converted as they are: plain tensors, parameters and LocalTensors."""
    api = local_tensor_api()
    local = getattr(api, "LocalTensor", None)
    return (torch.Tensor, nn.Parameter) + ((local,) if local is not None else ())


class DTensorConverter:
    """Iterate over ``(args, kwargs)`` with every tensor made a DTensor on ``mesh``.

    ``hit`` counts the tensors converted, ``miss`` those left as they are (sparse, quantized,
    nested, meta... or tensor subclasses); :meth:`successful` says whether all were converted.
    With ``replicate_only`` every tensor is replicated.
    """

    def __init__(self, mesh: DeviceMesh, args: tuple[object, ...], kwargs: dict[str, object],
                 replicate_only: bool = False) -> None:
        self.hit = 0
        self.miss = 0
        self.mesh = mesh
        self.args = args
        self.kwargs = kwargs
        self.replicate_only = replicate_only
        self.flatten_args, self.flatten_args_spec = tree_flatten(args)
        self.flatten_kwargs, self.flatten_kwargs_spec = tree_flatten(kwargs)
        tensors = [leaf for leaf in (*self.flatten_args, *self.flatten_kwargs)
                   if isinstance(leaf, torch.Tensor)]
        choices = [self.gen_sharding_choices_for_arg(tensor) for tensor in tensors]
        self.sharding_combs: Iterator[Sequence[Placement]] = iter(itertools.product(*choices))

    def successful(self) -> bool:
        """Whether some tensor was converted and none had to be left as it was."""
        return self.hit > 0 and self.miss == 0

    def is_supported_tensor(self, t: torch.Tensor) -> bool:
        """Whether a DTensor can hold ``t`` (not sparse, quantized, nested, mkldnn, lazy...)."""
        unsupported = (t.is_sparse, t.is_sparse_csr, t.is_quantized, t.is_nested, t.is_mkldnn,
                       t.is_neg(), t.is_conj(), t.device.type in ("lazy", "meta"))
        return not any(unsupported) and not is_functional_tensor(t)

    def gen_sharding_choices_for_arg(self, arg: torch.Tensor) -> Sequence[Placement]:
        """Replicate, and Shard(d) for each dimension ``d`` the mesh divides (not for bool
        tensors, which collectives do not take)."""
        choices: list[Placement] = [Replicate()]
        if self.replicate_only or arg.dtype == torch.bool:
            return choices
        size = self.mesh.size()
        return choices + [Shard(dim) for dim, length in enumerate(arg.shape)
                          if length > 1 and length % size == 0]

    def __iter__(self) -> DTensorConverter:
        return self

    def __next__(self) -> tuple[tuple[object, ...], dict[str, object]]:
        placements = iter(next(self.sharding_combs))

        def convert(leaves: list[Any]) -> list[Any]:
            return [self.to_dist_tensor(leaf, self.mesh, [next(placements)])
                    if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]

        args = tree_unflatten(convert(self.flatten_args), self.flatten_args_spec)
        kwargs = tree_unflatten(convert(self.flatten_kwargs), self.flatten_kwargs_spec)
        return args, kwargs

    def to_dist_tensor(self, t: torch.Tensor, mesh: DeviceMesh,
                       placements: list[Placement]) -> torch.Tensor:
        """``t`` distributed with ``placements`` (replicated if 0-d), or ``t`` itself, counted
        as a miss, when a DTensor cannot hold it."""
        if type(t) not in _plain_tensor_types():
            if torch.overrides.is_tensor_like(t):
                self.miss += 1  # a tensor subclass: not wrapped in a DTensor
                return t
            raise TypeError(f"DTensorConverter: cannot make a DTensor of {type(t).__name__}")
        if not self.is_supported_tensor(t):
            self.miss += 1
            return t
        self.hit += 1
        chosen = [Replicate()] * mesh.ndim if t.ndim == 0 else placements
        converted = distribute_tensor(t, mesh, chosen)
        if isinstance(t, nn.Parameter):
            return nn.Parameter(converted, requires_grad=converted.requires_grad)
        return converted
