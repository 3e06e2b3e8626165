"""Context managers that swap a collective, or one step of ``fully_shard``, for the test's own
function (to count calls, check arguments or add delays), and restore it afterwards.

Each one reads the original, waits at a barrier of the default group (if there is one),
swaps, and on leaving waits at the barrier again before restoring: in a threaded world all
ranks share one module, so every rank must see the same original and use the replacement
throughout. (After an exception the original is restored without the second barrier: a
failing rank must not wait for peers that will never arrive.)

The collectives are swapped on ``torch.distributed`` under the names ``fully_shard`` calls
(``all_gather_single`` and ``reduce_scatter_single``, looked up at call time). A replacement
usually ends by calling the original it saved::

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
import functools
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
]

__unittest = True

_Replacement = Callable[..., Any]
_Patch = contextlib.AbstractContextManager[None]


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


@contextlib.contextmanager
def swapped_on_every_rank(owner: Any, name: str, replacement: Any) -> Iterator[None]:
    """``owner.name`` (``owner[name]`` if ``owner`` is a dict, such as a function's globals)
    is ``replacement`` for the block (a plain function: on a class it becomes a method), then
    exactly what it was (a staticmethod stays one), with the barriers described above."""
    if isinstance(owner, dict):
        original, put = owner[name], owner.__setitem__
    elif isinstance(owner, type):  # as stored, so that a staticmethod is put back as one
        original, put = inspect.getattr_static(owner, name), functools.partial(setattr, owner)
    else:
        original, put = getattr(owner, name), functools.partial(setattr, owner)
    _barrier()
    put(name, replacement)
    try:
        yield
    except BaseException:
        put(name, original)
        raise
    _barrier()
    put(name, original)


def _patched(owner: Any, name: str, replacement: _Replacement) -> _Patch:
    if not callable(replacement):
        raise TypeError(f"the replacement for {name} must be callable, not {replacement!r}")
    return swapped_on_every_rank(owner, name, replacement)


def patch_all_gather(new_all_gather_into_tensor: _Replacement) -> _Patch:
    """``fully_shard``'s all-gather (``dist.all_gather_single``) is the given function."""
    return _patched(dist, "all_gather_single", new_all_gather_into_tensor)


def patch_reduce_scatter(new_reduce_scatter_tensor: _Replacement) -> _Patch:
    """``fully_shard``'s reduce-scatter (``dist.reduce_scatter_single``) is the given function."""
    return _patched(dist, "reduce_scatter_single", new_reduce_scatter_tensor)


def patch_all_reduce(new_all_reduce: _Replacement) -> _Patch:
    """``dist.all_reduce`` (HSDP's reduction across replicas) is the given function."""
    return _patched(dist, "all_reduce", new_all_reduce)


def patch_foreach_all_gather(new_foreach_all_gather: _Replacement) -> _Patch:
    """The all-gather of a whole parameter group (``foreach_all_gather``) is the given function."""
    return _patched(fsdp_param_group_module(), "foreach_all_gather", new_foreach_all_gather)


def patch_foreach_reduce(new_foreach_reduce: _Replacement) -> _Patch:
    """The gradient reduction of a parameter group (``foreach_reduce``) is the given function."""
    return _patched(fsdp_param_group_module(), "foreach_reduce", new_foreach_reduce)


def patch_unshard(new_unshard: _Replacement) -> _Patch:
    """``FSDPParamGroup.unshard(self, async_op=False)`` is the given function."""
    return _patched(fsdp_param_group_class(), "unshard", new_unshard)


def patch_reshard(new_reshard: _Replacement) -> _Patch:
    """``FSDPParamGroup.reshard(self)`` is the given function."""
    return _patched(fsdp_param_group_class(), "reshard", new_reshard)


def patch_post_backward(new_post_backward: _Replacement) -> _Patch:
    """``FSDPParamGroup.post_backward(self, *unused)`` is the given function."""
    return _patched(fsdp_param_group_class(), "post_backward", new_post_backward)


def patch_register_post_backward_hook_backward(new_backward: _Replacement) -> _Patch:
    """The autograd ``backward(ctx, *grads)`` that runs the post-backward hook is the given
    function."""
    return _patched(fsdp_post_backward_function_class(), "backward", new_backward)
