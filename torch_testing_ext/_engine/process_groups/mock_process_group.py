"""A default process group with no peers: a world of any size in one process, for code that only
asks the group its rank and size (checkpoint planners, sharding metadata).

``with_fake_comms`` (a test decorator) and ``with_dist`` (a context manager) make the default
group a ``MockProcessGroup`` of the asked rank and world size, on a ``HashStore``, and destroy
it afterwards; a collective on it raises ``RuntimeError``. Importing this module registers the
backend as ``mock_process_group`` (as upstream's import does), so
``dist.init_process_group("mock_process_group", store=..., ...)`` works too.

Example::

    class TestPlanner(TestCase):
        @with_fake_comms(rank=1, world_size=4)
        def test_plan(self):
            assert dist.get_world_size() == 4 and dist.get_rank() == 1
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, TypeVar, overload

import torch.distributed as dist

__all__ = ["MockProcessGroup", "create_mock_pg", "mock_init_dist", "with_dist", "with_fake_comms",
           "MOCK_BACKEND", "register_mock_backend"]

__unittest = True

MOCK_BACKEND = "mock_process_group"
_F = TypeVar("_F", bound=Callable[..., Any])


class MockProcessGroup(dist.ProcessGroup):
    """A ``ProcessGroup`` that knows its rank and size and nothing else."""

    def getBackendName(self) -> str:
        return MOCK_BACKEND


def create_mock_pg(prefix_store: dist.Store, rank: int, world_size: int,
                   timeout: timedelta) -> MockProcessGroup:
    """The backend's constructor, as ``dist.Backend.register_backend`` calls it."""
    return MockProcessGroup(rank, world_size)  # type: ignore[call-arg]  # the (rank, size) overload the stubs lack


def register_mock_backend() -> None:
    """Register ``mock_process_group`` with ``torch.distributed`` (once; again is a no-op)."""
    if MOCK_BACKEND not in dist.Backend.backend_list:
        dist.Backend.register_backend(MOCK_BACKEND, create_mock_pg, devices=["cpu", "cuda"])


def mock_init_dist(rank: int, world_size: int) -> None:
    """Make the default group a ``MockProcessGroup`` of ``world_size`` with this process as
    ``rank`` (1 s timeout; nothing waits for the other ranks, which do not exist). Refused with
    ``RuntimeError`` when a default group exists."""
    if dist.is_initialized():
        raise RuntimeError("mock_init_dist: a default process group already exists")
    if not 0 <= rank < world_size:
        raise ValueError(f"mock_init_dist: rank {rank} is not in a world of size {world_size}")
    register_mock_backend()
    dist.init_process_group(backend=MOCK_BACKEND, rank=rank, world_size=world_size,
                            store=dist.HashStore(), group_name="fake",
                            timeout=timedelta(seconds=1))


@contextlib.contextmanager
def with_dist(rank: int = 0, world_size: int = 2) -> Iterator[None]:
    """A mock default group (see :func:`mock_init_dist`) for the block, destroyed after it."""
    mock_init_dist(rank=rank, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


@overload
def with_fake_comms(func: _F, rank: int = 0, world_size: int = 2) -> _F: ...
@overload
def with_fake_comms(func: None = None, rank: int = 0,
                    world_size: int = 2) -> Callable[[_F], _F]: ...


def with_fake_comms(func: _F | None = None, rank: int = 0,
                    world_size: int = 2) -> _F | Callable[[_F], _F]:
    """Run a test method inside :func:`with_dist` (rank 0 of 2 by default); usable bare
    (``@with_fake_comms``) or with arguments (``@with_fake_comms(rank=1, world_size=4)``).
    The method's return value is dropped, as upstream."""
    if func is None:
        return functools.partial(with_fake_comms, rank=rank, world_size=world_size)

    @functools.wraps(func)
    def in_fake_world(self: Any, *args: Any, **kwargs: Any) -> None:
        with with_dist(rank, world_size):
            func(self, *args, **kwargs)

    return in_fake_world  # type: ignore[return-value]  # wraps keeps func's signature
