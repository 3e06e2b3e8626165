"""``TwoTensor``: a tensor subclass that holds two tensors and runs every operation on both
(tests of subclass support in FSDP, DTensor and ``torch.compile`` use it; the face is
``two_tensor``).

Example::

    t = TwoTensor(torch.ones(2), torch.zeros(2))
    (t + 1).a, (t + 1).b        # tensor([2., 2.]), tensor([1., 1.])
"""

from __future__ import annotations

from typing import Any

import torch

from .._torch_private import correct_aliasing, make_wrapper_subclass, tree_flatten, tree_unflatten

__all__ = ["TwoTensor"]


def _same_layout(a: torch.Tensor, b: torch.Tensor) -> None:
    if (a.device, a.layout, a.requires_grad, a.dtype) != (b.device, b.layout, b.requires_grad, b.dtype):
        raise ValueError("TwoTensor: a and b must have the same device, layout, requires_grad "
                         f"and dtype; got {a.device}/{a.layout}/{a.requires_grad}/{a.dtype} and "
                         f"{b.device}/{b.layout}/{b.requires_grad}/{b.dtype}")
    if a.shape != b.shape or a.stride() != b.stride() or a.storage_offset() != b.storage_offset():
        raise ValueError("TwoTensor: a and b must have the same shape, strides and storage offset; "
                         f"got {tuple(a.shape)}/{a.stride()}/{a.storage_offset()} and "
                         f"{tuple(b.shape)}/{b.stride()}/{b.storage_offset()}")


def _side(tree: Any, side: str) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([getattr(x, side) if isinstance(x, TwoTensor) else x for x in leaves], spec)


class TwoTensor(torch.Tensor):
    """A wrapper tensor with the metadata of ``a`` (or ``outer_size``/``outer_stride``) whose
    every operation runs on ``a`` and on ``b``; results that are tensors are TwoTensors of the
    two results, other results are ``a``'s. Traceable by ``torch.compile``
    (``__tensor_flatten__``/``__tensor_unflatten__``)."""

    a: torch.Tensor
    b: torch.Tensor

    @staticmethod
    def __new__(cls, a: torch.Tensor, b: torch.Tensor, outer_size: Any = None,
                outer_stride: Any = None, *, requires_grad: bool | None = None) -> TwoTensor:
        _same_layout(a, b)
        size = a.size() if outer_size is None else outer_size
        strides = a.stride() if outer_stride is None else outer_stride
        return make_wrapper_subclass(cls, size, strides=strides, storage_offset=a.storage_offset(),
                                     device=a.device, layout=a.layout, dtype=a.dtype,
                                     requires_grad=bool(requires_grad or a.requires_grad))

    def __init__(self, a: torch.Tensor, b: torch.Tensor, outer_size: Any = None,
                 outer_stride: Any = None, *, requires_grad: bool | None = None) -> None:
        self.a = a
        self.b = b

    def __repr__(self) -> str:  # type: ignore[override]  # torch.Tensor's takes tensor_contents
        return f"TwoTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors: dict[str, torch.Tensor], meta: None,
                             outer_size: Any, outer_stride: Any) -> TwoTensor:
        if meta is not None:
            raise ValueError(f"TwoTensor carries no metadata, got {meta!r}")
        return TwoTensor(inner_tensors["a"], inner_tensors["b"], outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(  # type: ignore[override]  # torch types it as a disabled default (no func)
            cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out_a = func(*_side(args, "a"), **_side(kwargs, "a"))
        out_b = func(*_side(args, "b"), **_side(kwargs, "b"))
        leaves_a, spec = tree_flatten(out_a)
        leaves_b, _ = tree_flatten(out_b)
        paired = [cls(x, y) if isinstance(x, torch.Tensor) else x
                  for x, y in zip(leaves_a, leaves_b, strict=True)]
        return correct_aliasing(func, args, kwargs, tree_unflatten(paired, spec))

    def get_elem_a(self) -> torch.Tensor:
        """The first of the two tensors."""
        return self.a
