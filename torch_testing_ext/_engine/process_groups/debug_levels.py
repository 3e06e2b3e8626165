"""``with_dist_debug_levels``: run a test once per ``TORCH_DISTRIBUTED_DEBUG`` level."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import torch.distributed as dist

__all__ = ["with_dist_debug_levels"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
DEBUG_ENV = "TORCH_DISTRIBUTED_DEBUG"


def with_dist_debug_levels(levels: Iterable[str]) -> Callable[[_F], _F]:
    """Decorator: run the test once for each level (``"OFF"``, ``"INFO"``, ``"DETAIL"``).

    Between runs every rank waits at a barrier of the default group, if there is one. The
    variable and torch's debug level are restored afterwards, whatever the outcome; the value
    of the last run is returned.
    """
    levels = list(levels)

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def each_level(*args: Any, **kwargs: Any) -> Any:
            before = os.environ.get(DEBUG_ENV)
            result = None
            try:
                for level in levels:
                    os.environ[DEBUG_ENV] = level
                    dist.set_debug_level_from_env()
                    result = fn(*args, **kwargs)
                    if dist.is_initialized():
                        dist.barrier()
            finally:
                if before is None:
                    os.environ.pop(DEBUG_ENV, None)
                else:
                    os.environ[DEBUG_ENV] = before
                dist.set_debug_level_from_env()
            return result

        return each_level  # type: ignore[return-value]  # functools.wraps keeps fn's signature

    return decorate
