"""Context managers that swap a collective, or one step of ``fully_shard``, for the test's own
function (to count calls, check arguments or add delays), and restore it afterwards.

Each one reads the original, waits at a barrier of the default group (if there is one),
swaps, and on leaving waits at the barrier again before restoring: in a threaded world all
ranks share one module, so every rank must see the same original and use the replacement
throughout. (After an exception the original is restored without the second barrier: a
failing rank must not wait for peers that will never arrive.)

The collectives are swapped on ``torch.distributed`` under the name ``fully_shard`` calls
(``all_gather_single`` and ``reduce_scatter_single`` in torch 2.13; the older
``all_gather_into_tensor`` and ``reduce_scatter_tensor`` where those are absent). A
replacement usually ends by calling the original it saved::

    calls = 0
    original = dist.all_gather_single

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    with patch_all_gather(counted):
        model(inp)
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import torch.distributed as dist

from .._torch_private import (
    fsdp_param_group_class,
    fsdp_param_group_module,
    fsdp_post_backward_function_class,
)

__all__ = [
    "patch_all_gather",
    "patch_reduce_scatter",
    "patch_all_reduce",
    "patch_foreach_all_gather",
    "patch_foreach_reduce",
    "patch_unshard",
    "patch_reshard",
    "patch_post_backward",
    "patch_register_post_backward_hook_backward",
    "ALL_GATHER_NAME",
    "REDUCE_SCATTER_NAME",
]

__unittest = True

_Replacement = Callable[..., Any]
_Patch = contextlib.AbstractContextManager[None]


def _first_present(*names: str) -> str:
    return next(name for name in names if hasattr(dist, name))


# The torch.distributed functions fully_shard's collectives call (looked up at call time).
ALL_GATHER_NAME = _first_present("all_gather_single", "all_gather_into_tensor")
REDUCE_SCATTER_NAME = _first_present("reduce_scatter_single", "reduce_scatter_tensor")


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


@contextlib.contextmanager
def _swapped(owner: Any, name: str, replacement: _Replacement) -> Iterator[None]:
    """``owner.name`` is ``replacement`` for the block (a plain function: on a class it
    becomes a method), then exactly what it was (a staticmethod stays one)."""
    if not callable(replacement):
        raise TypeError(f"the replacement for {name} must be callable, not {replacement!r}")
    original = inspect.getattr_static(owner, name)
    _barrier()
    setattr(owner, name, replacement)
    try:
        yield
    except BaseException:
        setattr(owner, name, original)
        raise
    _barrier()
    setattr(owner, name, original)


def patch_all_gather(new_all_gather_into_tensor: _Replacement) -> _Patch:
    """``fully_shard``'s all-gather (``dist.all_gather_single``) is the given function."""
    return _swapped(dist, ALL_GATHER_NAME, new_all_gather_into_tensor)


def patch_reduce_scatter(new_reduce_scatter_tensor: _Replacement) -> _Patch:
    """``fully_shard``'s reduce-scatter (``dist.reduce_scatter_single``) is the given function."""
    return _swapped(dist, REDUCE_SCATTER_NAME, new_reduce_scatter_tensor)


def patch_all_reduce(new_all_reduce: _Replacement) -> _Patch:
    """``dist.all_reduce`` (HSDP's reduction across replicas) is the given function."""
    return _swapped(dist, "all_reduce", new_all_reduce)


def patch_foreach_all_gather(new_foreach_all_gather: _Replacement) -> _Patch:
    """The all-gather of a whole parameter group (``foreach_all_gather``) is the given function."""
    return _swapped(fsdp_param_group_module(), "foreach_all_gather", new_foreach_all_gather)


def patch_foreach_reduce(new_foreach_reduce: _Replacement) -> _Patch:
    """The gradient reduction of a parameter group (``foreach_reduce``) is the given function."""
    return _swapped(fsdp_param_group_module(), "foreach_reduce", new_foreach_reduce)


def patch_unshard(new_unshard: _Replacement) -> _Patch:
    """``FSDPParamGroup.unshard(self, async_op=False)`` is the given function."""
    return _swapped(fsdp_param_group_class(), "unshard", new_unshard)


def patch_reshard(new_reshard: _Replacement) -> _Patch:
    """``FSDPParamGroup.reshard(self)`` is the given function."""
    return _swapped(fsdp_param_group_class(), "reshard", new_reshard)


def patch_post_backward(new_post_backward: _Replacement) -> _Patch:
    """``FSDPParamGroup.post_backward(self, *unused)`` is the given function."""
    return _swapped(fsdp_param_group_class(), "post_backward", new_post_backward)


def patch_register_post_backward_hook_backward(new_backward: _Replacement) -> _Patch:
    """The autograd ``backward(ctx, *grads)`` that runs the post-backward hook is the given
    function."""
    return _swapped(fsdp_post_backward_function_class(), "backward", new_backward)
