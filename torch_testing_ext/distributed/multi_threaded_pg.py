"""The threaded process group's names, as in ``torch.testing._internal.distributed.multi_threaded_pg``.

The definitions live in ``threads/``. ``ProcessLocalGroup`` is our ``ThreadedProcessGroup``
(the class of every ``threaded`` group); ``_install_threaded_pg()`` gives every thread its own
c10d world and returns it, ``_uninstall_threaded_pg()`` puts the process's world back. Threads
started by hand after ``_install_threaded_pg()`` may create ``threaded`` groups with a shared
store; outside a threaded test they meet in one process-wide exchange.
"""

from __future__ import annotations

from .._torch_private import set_thread_isolated_group_registry
from ..threads.thread_world import (
    ThreadLocalWorld,
    install_thread_local_world,
    uninstall_thread_local_world,
)
from ..threads.threaded_pg import ThreadedProcessGroup, register_threaded_backend, set_active_exchange

__all__ = ["ProcessLocalGroup", "ThreadLocalWorld", "_install_threaded_pg", "_uninstall_threaded_pg"]

# The upstream names.
ProcessLocalGroup = ThreadedProcessGroup


def _install_threaded_pg() -> ThreadLocalWorld:
    """Give every thread its own c10d world, and its own registry of group names (what upstream
    callers do by hand with ``_set_thread_isolation_mode(True)``); register the ``threaded``
    backend. Returns the world."""
    register_threaded_backend()
    set_thread_isolated_group_registry(True)
    return install_thread_local_world()


def _uninstall_threaded_pg() -> None:
    """Put the process's own c10d world and group registry back; tear down the process-wide
    exchange (a thread still waiting in it raises ``CollectiveAborted``)."""
    uninstall_thread_local_world()
    set_thread_isolated_group_registry(False)
    set_active_exchange(None)
