"""``with_comms``: run a DTensor test method between ``self.init_pg()`` and ``self.destroy_pg()``.

Every upstream form works::

    @with_comms                              # lazily bound group on the default backend
    @with_comms()                            # the same
    @with_comms(eager_init=True)             # bind the group to the rank's device at once
    @with_comms(True)                        # the same, positionally
    @with_comms(backend="gloo")              # another backend (or "cpu:gloo,cuda:nccl")

On a test class without ``init_pg`` (``DTensorOpTestBase``, whose ranks have a group
already) the method runs as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..process_groups.teardown import destroy_process_groups

__all__ = ["with_comms"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])


def _with_group(func: _F, eager_init: bool, backend: str | None) -> _F:
    @functools.wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self, "init_pg"):
            return func(self, *args, **kwargs)
        self.init_pg(eager_init, backend)
        try:
            result = func(self, *args, **kwargs)
        except BaseException:
            destroy_process_groups()  # no barrier: the other ranks may never get there
            raise
        self.destroy_pg()
        return result

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps func's signature


def with_comms(eager_init: bool | Callable[..., Any] = False,
               backend: str | None = None) -> Any:
    """Decorate a test method so that it runs with the default process group (see above)."""
    if callable(eager_init):
        if backend is not None:
            raise TypeError("with_comms: pass backend= only in the form @with_comms(backend=...)")
        return _with_group(eager_init, False, None)
    if not isinstance(eager_init, bool):
        raise TypeError(f"with_comms: eager_init must be a bool, not {type(eager_init).__name__}")
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"with_comms: backend must be a str, not {type(backend).__name__}")
    return functools.partial(_with_group, eager_init=eager_init, backend=backend)
