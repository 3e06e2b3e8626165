"""The threaded process group's names, as in ``torch.testing._internal.distributed.multi_threaded_pg``.

The definitions live in ``_engine/threads/``. ``ProcessLocalGroup`` is our ``ThreadedProcessGroup``
(the class of every ``threaded`` group). ``_install_threaded_pg()`` gives every thread its own
c10d world and registry of group names (what upstream callers do by hand with
``_set_thread_isolation_mode(True)``), registers the ``threaded`` backend and returns the world;
``_uninstall_threaded_pg()`` puts the process's own world and registry back and tears down the
exchange (a thread still waiting in it raises ``CollectiveAborted``). Threads started by hand
after ``_install_threaded_pg()`` may create ``threaded`` groups with a shared store; outside a
threaded test they meet in one process-wide exchange.
"""

from __future__ import annotations

from .._engine.process_groups.c10d_world_per_thread import (
    ThreadLocalWorld,
    install_thread_local_world,
    uninstall_thread_local_world,
)
from .._engine.process_groups.threaded_pg import ThreadedProcessGroup

__all__ = ["ProcessLocalGroup", "ThreadLocalWorld", "_install_threaded_pg", "_uninstall_threaded_pg"]

# The upstream names.
ProcessLocalGroup = ThreadedProcessGroup
_install_threaded_pg = install_thread_local_world
_uninstall_threaded_pg = uninstall_thread_local_world
