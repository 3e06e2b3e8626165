"""Checks of DTensor sharding rules, named as in ``common_dtensor``: does a placement rule give
the right answer for one sample, forward and backward; and a rule swapped in for one block.

``validate_sharding_rule_sample(op, args, kwargs, input_placements, output_placements, mesh)``
shards each tensor argument by its placement, runs ``op`` on the local shards and on the full
tensors, and says whether the shards, read with ``output_placements``, make the full result.
``validate_sharding_rule_sample_backward`` compares the gradients ``op`` gives with DTensor
inputs to the plain ones (None when there is nothing to compare).

Example::

    ok = validate_sharding_rule_sample(torch.ops.aten.add.Tensor, (x, y), {},
                                       [Shard(0), Shard(0)], [Shard(0)], mesh)
    with op_strategy_context(torch.ops.aten.add.Tensor, my_strategy):
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.distributed.tensor import DTensor, Replicate, distribute_tensor

from .._torch_private import dtensor_op_strategy, tree_flatten, tree_unflatten

__all__ = ["validate_sharding_rule_sample", "validate_sharding_rule_sample_backward", "op_strategy_context"]

op_strategy_context = dtensor_op_strategy

# Where a DTensor op does not support an input or has no rule: nothing to compare.
_UNSUPPORTED = ("does not have a sharding strategy registered", "got mixed torch.Tensor and DTensor")


def _tensors(args: Any, kwargs: Any) -> list[torch.Tensor]:
    """The tensors among ``args`` then ``kwargs``, in pytree order."""
    return [leaf for leaf in (*tree_flatten(args)[0], *tree_flatten(kwargs)[0]) if isinstance(leaf, torch.Tensor)]


def _with_tensors(args: Any, kwargs: Any, tensors: Sequence[Any]) -> tuple[Any, Any]:
    """``(args, kwargs)`` with their tensors replaced, in order, by ``tensors``."""
    replacements = iter(tensors)
    leaves, spec = tree_flatten((args, kwargs))
    return tree_unflatten([next(replacements) if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves], spec)


def validate_sharding_rule_sample(op: Callable[..., Any], full_args: Any, full_kwargs: Any,
                                  input_placements: Sequence[Any], output_placements: Sequence[Any],
                                  device_mesh: Any) -> bool:
    """Whether running ``op`` on each rank's shards (inputs placed by ``input_placements`` on
    a one-dimensional ``device_mesh``) gives, read with ``output_placements``, the full result:
    same shapes, values within 1e-5 (NaN equal to NaN)."""
    shards = [distribute_tensor(tensor, device_mesh, (placement,)).to_local()
              for tensor, placement in zip(_tensors(full_args, full_kwargs), input_placements, strict=False)]
    local_args, local_kwargs = _with_tensors(full_args, full_kwargs, shards)
    expected = _tensors(op(*full_args, **full_kwargs), {})
    produced = _tensors(op(*local_args, **local_kwargs), {})
    for want, local, placement in zip(expected, produced, output_placements, strict=False):
        whole = DTensor.from_local(local, device_mesh, (placement,)).redistribute(
            device_mesh, (Replicate(),)).to_local()
        if want.shape != whole.shape or not torch.allclose(want, whole, atol=1e-5, rtol=1e-5, equal_nan=True):
            return False
    return True


def _leaves_requiring_grad(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    copies = [tensor.detach().clone() for tensor in tensors]
    for copy in copies:
        if copy.is_floating_point():
            copy.requires_grad_(True)
    return copies


def _backward_of_sum(output: Any) -> bool:
    """Backward of the sum of ``output``'s floating tensors that need a gradient; False if none."""
    outputs = [t for t in _tensors(output, {}) if t.is_floating_point() and t.requires_grad]
    if not outputs:
        return False
    sum(t.sum() for t in outputs).backward()  # type: ignore[union-attr]
    return True


def validate_sharding_rule_sample_backward(op: Callable[..., Any], full_args: Any, full_kwargs: Any,
                                           input_placements: Sequence[Any], device_mesh: Any) -> bool | None:
    """Whether the gradients of the sum of ``op``'s output are the same with DTensor inputs
    (placed by ``input_placements``) as with plain ones (within ``atol=1e-5``,
    ``rtol=1.3e-6``). None when there is nothing to compare: no floating input, no
    differentiable output, or DTensor has no rule for the op or refuses the mix of inputs."""
    full = _tensors(full_args, full_kwargs)
    if not any(tensor.is_floating_point() for tensor in full):
        return None
    plain = _leaves_requiring_grad(full)
    plain_args, plain_kwargs = _with_tensors(full_args, full_kwargs, plain)
    try:
        if not _backward_of_sum(op(*plain_args, **plain_kwargs)):
            return None
    except RuntimeError:
        return None
    if len(input_placements) != len(full):
        raise AssertionError(f"{len(input_placements)} placements for {len(full)} tensor arguments")
    distributed = [distribute_tensor(copy, device_mesh, (placement,))
                   for copy, placement in zip(_leaves_requiring_grad(full), input_placements, strict=True)]
    args, kwargs = _with_tensors(full_args, full_kwargs, distributed)
    try:
        if not _backward_of_sum(op(*args, **kwargs)):
            return None
    except Exception as error:
        if any(words in str(error) for words in _UNSUPPORTED):
            return None
        raise
    for want, got in zip(plain, distributed, strict=True):
        if not want.is_floating_point() or want.grad is None:
            continue
        if got.grad is None:
            return False
        grad = got.grad.full_tensor() if isinstance(got.grad, DTensor) else got.grad
        if want.grad.shape != grad.shape or not torch.allclose(want.grad, grad, atol=1e-5, rtol=1.3e-6,
                                                                equal_nan=True):
            return False
    return True
