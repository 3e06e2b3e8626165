"""``with_comms`` for ``ShardedTensorTestBase``: the test method runs between
``self.init_comms(...)`` and ``self.destroy_comms(...)``.

Every upstream form works::

    @with_comms                                      # RPC, then a group on nccl
    @with_comms(init_rpc=False)                      # the group only (nccl)
    @with_comms(init_rpc=False, backend="gloo")      # the group only, on gloo: runs on CPU ranks
    @with_comms(backend="gloo")                      # RPC and a gloo group

A test whose backend needs accelerators (nccl, xccl, hccl) that the machine lacks, fewer than
``world_size`` devices or another kind, is skipped before any rank starts, with the reason
(upstream: each rank exits with the multi-GPU skip code). When the test fails, RPC and the
groups are dropped without a barrier (the other ranks may never get there).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..skips.skip_checks import skip_when
from .sharded_test_base import KNOWN_BACKENDS, abandon_comms, accelerator_backend_shortfall

__all__ = ["with_comms"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])


def _with_comms(func: _F, init_rpc: bool, backend: str) -> _F:
    @functools.wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.init_comms(init_rpc=init_rpc, backend=backend)
        try:
            result = func(self, *args, **kwargs)
        except BaseException:
            abandon_comms()
            raise
        self.destroy_comms(destroy_rpc=init_rpc)
        return result

    skip = skip_when(lambda test: accelerator_backend_shortfall(backend, int(test.world_size)))
    return skip(wrapper)  # type: ignore[return-value]  # functools.wraps keeps func's signature


def with_comms(func: Callable[..., Any] | None = None, init_rpc: bool = True, backend: str = "nccl") -> Any:
    """Decorate a test method of a ``ShardedTensorTestBase`` so that it runs with RPC (unless
    ``init_rpc=False``) and the default group on ``backend`` (see above)."""
    if not isinstance(init_rpc, bool):
        raise TypeError(f"with_comms: init_rpc must be a bool, not {type(init_rpc).__name__}")
    if backend not in KNOWN_BACKENDS:
        raise ValueError(f"with_comms: backend {backend!r} not supported: expected one of "
                         f"{', '.join(KNOWN_BACKENDS)}")
    if func is None:
        return functools.partial(_with_comms, init_rpc=init_rpc, backend=backend)
    if not callable(func):
        raise TypeError(f"with_comms: decorates a test method, not {type(func).__name__} "
                        "(pass init_rpc= and backend= by keyword)")
    return _with_comms(func, init_rpc, backend)
