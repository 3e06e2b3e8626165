"""Free TCP ports, for tests that must rendezvous over TCP, and retrying when one was taken.

The harness's own rendezvous needs no port (see :mod:`.rendezvous`). A test that starts a
``TCPStore`` itself asks :func:`find_free_port` for a port, and since another process may take
the port before the store binds it, it retries with :func:`retry_on_connect_failures`::

    @retry_on_connect_failures
    def test_store(self):
        store = dist.TCPStore("localhost", find_free_port(), 1, is_master=True)
"""

from __future__ import annotations

import functools
import random
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["find_free_port", "retry_on_connect_failures", "ADDRESS_IN_USE", "CONNECT_TIMEOUT"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])

# Messages of the RuntimeErrors that c10d raises when a port was taken or a connection stalled.
ADDRESS_IN_USE = "Address already in use"
CONNECT_TIMEOUT = "connect() timed out."
CONNECT_RETRIES = 10  # calls in all, the first one included


def find_free_port() -> int:
    """A TCP port on localhost that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("localhost", 0))
        return int(sock.getsockname()[1])


def _pause() -> None:
    time.sleep(random.random())  # up to a second, so that competing retries spread out


def retry_on_connect_failures(
    func: _F | None = None, connect_errors: str | Iterable[str] = (ADDRESS_IN_USE,)
) -> Any:
    """Decorator: call ``func`` again (up to 10 calls in all) while it raises a ``RuntimeError``
    whose message contains one of ``connect_errors``; other errors pass through at once.

    Use it bare (``@retry_on_connect_failures``) or with arguments
    (``@retry_on_connect_failures(connect_errors=(ADDRESS_IN_USE, CONNECT_TIMEOUT))``).
    """
    messages = (connect_errors,) if isinstance(connect_errors, str) else tuple(connect_errors)
    if func is None:
        return functools.partial(retry_on_connect_failures, connect_errors=messages)

    @functools.wraps(func)
    def retrying(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(1, CONNECT_RETRIES + 1):
            try:
                return func(*args, **kwargs)
            except RuntimeError as error:
                if not any(message in str(error) for message in messages):
                    raise
                if attempt == CONNECT_RETRIES:
                    raise RuntimeError(f"Failing after {CONNECT_RETRIES} retries with error: {error}") \
                        from error
                _pause()
        raise AssertionError("unreachable")

    return retrying
