"""Checks that a sharded model matches its replicated reference, and argument checks for
swapped collectives."""

from __future__ import annotations

import copy
import unittest
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn

__all__ = ["check_sharded_parity", "reduce_scatter_with_assert", "get_full_params"]

__unittest = True


def check_sharded_parity(cls: unittest.TestCase, replicated_module: nn.Module,
                         sharded_module: nn.Module,
                         prefixes_to_ignore: tuple[str, ...] = ()) -> None:
    """Assert (with ``cls``'s asserts) that each parameter of ``sharded_module`` (a DTensor,
    as ``fully_shard`` makes them) holds this rank's shard of the same-named parameter of
    ``replicated_module``, and likewise for gradients (None where the reference has none).

    Names are compared after removing each of ``prefixes_to_ignore`` from the sharded name
    (e.g. an activation-checkpointing wrapper's prefix).
    """
    from torch.distributed.tensor import DTensor, Shard, distribute_tensor

    replicated = list(replicated_module.named_parameters())
    sharded = list(sharded_module.named_parameters())
    if len(replicated) != len(sharded):
        raise AssertionError(f"the replicated module has {len(replicated)} parameters, the "
                             f"sharded one {len(sharded)}")
    for (name, reference), (sharded_name, param) in zip(replicated, sharded, strict=True):
        for prefix in prefixes_to_ignore:
            sharded_name = sharded_name.replace(prefix, "")
        cls.assertEqual(name, sharded_name)
        if not isinstance(param, DTensor):
            cls.fail(f"{sharded_name} is not sharded (a {type(param).__name__}, not a DTensor)")
        mesh, placements = param.device_mesh, param.placements
        if tuple(placements) == (Shard(0), Shard(0)):
            # fully_shard lays out dim 0 over two mesh dims differently from distribute_tensor.
            raise AssertionError(f"{sharded_name}: cannot compare a (Shard(0), Shard(0)) "
                                 "parameter with distribute_tensor's layout")
        expected = distribute_tensor(reference, mesh, placements).to_local()
        cls.assertEqual(param.to_local(), expected, msg=f"parameter {sharded_name} differs")
        grad = param.grad
        if reference.grad is None:
            cls.assertIsNone(grad, f"{sharded_name} has a gradient; the reference none")
            continue
        if grad is None:
            cls.fail(f"{sharded_name} has no gradient; the reference has one")
        if not isinstance(grad, DTensor):
            cls.fail(f"the gradient of {sharded_name} is not sharded (a {type(grad).__name__})")
        expected_grad = distribute_tensor(reference.grad, mesh, placements).to_local()
        cls.assertEqual(grad.to_local(), expected_grad,
                        msg=f"gradient of {sharded_name} differs")


def reduce_scatter_with_assert(cls: unittest.TestCase, orig_reduce_scatter: Callable[..., Any],
                               assert_fn: Callable[[torch.Tensor], Any], *args: Any,
                               **kwargs: Any) -> Any:
    """Call ``assert_fn(output)`` on a reduce-scatter's output tensor (first argument or
    ``output=``), then the reduce-scatter itself. Bind the first three with
    ``functools.partial`` and give the result to ``patch_reduce_scatter``."""
    try:
        output = args[0] if args else kwargs["output"]
    except KeyError:
        raise AssertionError(f"no reduce-scatter output among args {args!r} and kwargs "
                             f"{kwargs!r}") from None
    assert_fn(output)
    return orig_reduce_scatter(*args, **kwargs)


def get_full_params(model: nn.Module, recurse: bool = True) -> list[nn.Parameter]:
    """Copies of ``model``'s unsharded parameters (a FullyShardedDataParallel model, FSDP1);
    with ``recurse=False`` only those of ``model``'s own FSDP unit are unsharded."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    with FullyShardedDataParallel.summon_full_params(model, recurse=recurse):
        return copy.deepcopy(list(model.parameters()))
