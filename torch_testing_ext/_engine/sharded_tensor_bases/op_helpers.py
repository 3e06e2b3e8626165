"""Helpers the sharded-op tests build their cases with.

- :func:`clone_module_parameter`: a detached copy of a module's parameter, as a new
  ``nn.Parameter`` (the full weight a sharded one is compared with);
- :func:`gen_binary_op_func`: a two-argument function for a Python binary operator
  (``"+"``, ``"<="``...), its in-place form (``"+"`` with ``inplace=True``: ``lhs += rhs``),
  or a torch function named by its dotted path (``"torch.add"``).

Example::

    add = gen_binary_op_func("+")
    assert torch.equal(add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["clone_module_parameter", "gen_binary_op_func", "BINARY_OPERATORS", "INPLACE_OPERATORS"]

# Python's binary operators, by their spelling.
BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}

# Their augmented assignments (``lhs op= rhs``): the arithmetic and bitwise ones.
INPLACE_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
    "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "@": operator.imatmul,
    "&": operator.iand, "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift,
    ">>": operator.irshift,
}


def clone_module_parameter(module: torch.nn.Module, param_name: str) -> torch.nn.Parameter:
    """A new ``nn.Parameter`` holding a detached copy of ``module``'s attribute ``param_name``."""
    return torch.nn.Parameter(getattr(module, param_name).detach().clone())


def _torch_function(path: str) -> Callable[[Any, Any], Any]:
    target: Any = torch
    for part in path.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            raise ValueError(f"gen_binary_op_func: torch has no {path!r}")
    if not callable(target):
        raise ValueError(f"gen_binary_op_func: {path!r} is not callable")
    function: Callable[[Any, Any], Any] = target
    return function


def gen_binary_op_func(python_op: str, inplace: bool = False) -> Callable[[Any, Any], Any]:
    """``f(lhs, rhs)`` applying ``python_op`` (see the module's doc); ValueError for an
    operator it does not know, or ``inplace`` with a comparison."""
    if python_op.startswith("torch."):
        function = _torch_function(python_op)

        def call_torch(lhs: Any, rhs: Any) -> Any:
            return function(lhs, rhs)

        call_torch.__name__ = python_op.rsplit(".", 1)[-1]
        return call_torch
    table = INPLACE_OPERATORS if inplace else BINARY_OPERATORS
    op = table.get(python_op.strip())
    if op is None:
        kind = "an in-place" if inplace else "a binary"
        raise ValueError(f"gen_binary_op_func: {python_op!r} is not {kind} operator: expected one of "
                         f"{' '.join(table)}, or a torch function such as 'torch.add'")

    def apply(lhs: Any, rhs: Any) -> Any:
        return op(lhs, rhs)

    apply.__name__ = f"binary_op_{'inplace_' if inplace else ''}{op.__name__}"
    return apply
