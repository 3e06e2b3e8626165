"""``spawn_threads_and_init_comms``: one method of a plain TestCase on N rank threads.

Both of upstream's forms::

    class TestObjects(TestCase):
        @spawn_threads_and_init_comms
        def test_default(self):               # 4 rank threads
            ...

        @spawn_threads_and_init_comms(world_size=2, timeout=30)
        def test_two(self):
            object_list = [dist.get_rank()]
            dist.broadcast_object_list(object_list, src=1)
            self.assertEqual(object_list, [1])

The rank threads share the one TestCase instance; ``dist.get_rank()`` tells them apart. The
outcome rules are ``MultiThreadedTestCase``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..worlds import settings
from .rank_threads import raise_for_outcome, run_rank_threads

__all__ = ["spawn_threads_and_init_comms"]

__unittest = True


def spawn_threads_and_init_comms(func: Callable[..., Any] | None = None,
                                 timeout: float = settings.DEFAULT_TEST_TIMEOUT,
                                 world_size: int = settings.DEFAULT_WORLD_SIZE) -> Any:
    """Decorator: run the method on ``world_size`` rank threads, each in the default
    ``threaded`` group, within ``timeout`` seconds (``TORCH_TESTING_EXT_TIMEOUT`` overrides)."""
    if func is None:
        return functools.partial(spawn_threads_and_init_comms, timeout=timeout,
                                 world_size=world_size)
    if not callable(func):
        raise TypeError(f"spawn_threads_and_init_comms: expected a test method, got {func!r} "
                        "(pass timeout= and world_size= by keyword)")

    @functools.wraps(func)
    def run_on_threads(self: Any, *args: Any, **kwargs: Any) -> None:
        where = f"spawn_threads_and_init_comms on {func.__qualname__}"
        seconds = settings.timeout_seconds(f"{where}: timeout", timeout)
        size = settings.positive_integer(f"{where}: world_size", world_size)
        run = run_rank_threads(lambda rank: func(self, *args, **kwargs), size, seconds,
                               func.__qualname__, func, type(self))
        raise_for_outcome(run)

    return run_on_threads
