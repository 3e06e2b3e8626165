"""Tensors with a shape of properties, as linear-algebra and OpInfo tests need them.

Example::

    a = random_hermitian_pd_matrix(3, 2, dtype=torch.float64, device="cpu")  # 2 x 3 x 3
    t = noncontiguous_like(torch.ones(4))  # same values, not contiguous
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.testing import make_tensor

__all__ = ["noncontiguous_like", "is_iterable_of_tensors", "random_symmetric_pd_matrix",
           "random_hermitian_pd_matrix", "random_well_conditioned_matrix",
           "make_fullrank_matrices_with_distinct_singular_values"]


def noncontiguous_like(t: torch.Tensor) -> torch.Tensor:
    """``t``'s values in a tensor that is not contiguous (``t`` itself if it is not): every
    value has a neighbour in memory that the view skips, NaN for floating and complex types,
    ``True`` for bool, 12 otherwise. Keeps ``requires_grad``."""
    if not t.is_contiguous():
        return t
    if t.dtype.is_floating_point or t.dtype.is_complex:
        filler: Any = math.nan
    else:
        filler = True if t.dtype == torch.bool else 12
    storage = t.new_empty((*t.shape, 2))
    storage.select(-1, 0).fill_(filler)
    storage.select(-1, 1).copy_(t.detach())
    result = storage.select(-1, 1)
    result.requires_grad_(t.requires_grad)
    return result


def is_iterable_of_tensors(iterable: Any, include_empty: bool = False) -> bool:
    """Whether ``iterable`` is a sized iterable (not a tensor) of tensors only; an empty one
    counts as ``include_empty``."""
    if isinstance(iterable, torch.Tensor):
        return False
    try:
        if len(iterable) == 0:
            return include_empty
        return all(isinstance(item, torch.Tensor) for item in iterable)
    except TypeError:
        return False


def random_symmetric_pd_matrix(matrix_size: int, *batch_dims: int, dtype: torch.dtype = torch.float64,
                               device: Any = "cpu") -> torch.Tensor:
    """Symmetric positive-definite matrices ``A A^T + 1e-5 I`` of shape ``batch_dims + (n, n)``."""
    a = torch.randn(*batch_dims, matrix_size, matrix_size, dtype=dtype, device=device)
    return a @ a.mT + 1e-5 * torch.eye(matrix_size, dtype=dtype, device=device)


def random_hermitian_pd_matrix(matrix_size: int, *batch_dims: int, dtype: torch.dtype,
                               device: Any) -> torch.Tensor:
    """Hermitian positive-definite matrices ``A A^H + I`` of shape ``batch_dims + (n, n)``."""
    a = torch.randn(*batch_dims, matrix_size, matrix_size, dtype=dtype, device=device)
    return a @ a.mH + torch.eye(matrix_size, dtype=dtype, device=device)


def random_well_conditioned_matrix(*shape: int, dtype: torch.dtype, device: Any, mean: float = 1.0,
                                   sigma: float = 0.001) -> torch.Tensor:
    """Matrices of ``shape`` whose singular values are drawn from a normal distribution of
    ``mean`` and ``sigma`` (a small ``sigma``: a condition number near 1)."""
    x = torch.rand(shape, dtype=dtype, device=device)
    u, _, vh = torch.linalg.svd(x, full_matrices=False)
    real = x.real.dtype if x.is_complex() else x.dtype
    count = min(x.shape[-2], x.shape[-1])
    singular = torch.randn(*shape[:-2], count, dtype=real, device=device) * sigma + mean
    singular = singular.sort(-1, descending=True).values.to(dtype)
    return (u * singular.unsqueeze(-2)) @ vh


def make_fullrank_matrices_with_distinct_singular_values(*shape: int, device: Any, dtype: torch.dtype,
                                                         requires_grad: bool = False) -> torch.Tensor:
    """Matrices of ``shape`` (square or not) with singular values ``1 + 1/2, 1 - 1/3, 1 + 1/4, ...``:
    all distinct, between 2/3 and 3/2 (a condition number of at most 9/4)."""
    with torch.no_grad():
        t = make_tensor(shape, device=device, dtype=dtype)
        u, _, vh = torch.linalg.svd(t, full_matrices=False)
        real = t.real.dtype if t.is_complex() else t.dtype
        count = min(shape[-1], shape[-2])
        steps = torch.arange(2, count + 2, dtype=real, device=device)
        signs = torch.ones(count, dtype=real, device=device)
        signs[1::2] = -1
        singular = 1 + signs / steps
        x = (u * singular.to(u.dtype)) @ vh
    x.requires_grad_(requires_grad)
    return x
