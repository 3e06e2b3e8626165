"""NCCL's blocking-wait mode for one test, named as in ``common_distributed``.

Example::

    @with_nccl_blocking_wait
    def test_timeout(self): ...   # TORCH_NCCL_BLOCKING_WAIT=1 inside, restored after
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["with_nccl_blocking_wait"]

_F = TypeVar("_F", bound=Callable[..., Any])
_BLOCKING_WAIT = "TORCH_NCCL_BLOCKING_WAIT"
_ASYNC_ERROR_HANDLING = "TORCH_NCCL_ASYNC_ERROR_HANDLING"


def with_nccl_blocking_wait(fn: _F) -> _F:
    """Run ``fn`` with ``TORCH_NCCL_BLOCKING_WAIT=1`` and ``TORCH_NCCL_ASYNC_ERROR_HANDLING``
    unset (the two modes exclude each other); both variables are as before afterwards, also
    when ``fn`` raises. Process groups made inside read them; on gloo they change nothing."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        saved = {name: os.environ.get(name) for name in (_BLOCKING_WAIT, _ASYNC_ERROR_HANDLING)}
        os.environ.pop(_ASYNC_ERROR_HANDLING, None)
        os.environ[_BLOCKING_WAIT] = "1"
        try:
            return fn(*args, **kwargs)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    return wrapper  # type: ignore[return-value]  # a wrapper with fn's signature
