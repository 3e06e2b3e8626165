"""A c10d world per thread: installing and uninstalling the thread-local world.

``torch.distributed`` keeps its process groups (the default group, names, rank maps...) in one
object per process. Rank threads each need their own, so that in each thread
``dist.get_rank()``, ``dist.all_reduce(t)`` and ``dist.group.WORLD`` act as that thread's rank.
:func:`install_thread_local_world` replaces the process's world with a
:class:`ThreadLocalWorld` (every thread, the main one included, starts with an empty world of
its own), makes the C++ registry of group names per thread too, (re-)registers the
``threaded`` backend, and turns off autograd's device threads, so that a backward pass runs in
the rank thread that started it and sees its world. :func:`uninstall_thread_local_world` tears
down the exchange threaded groups meet in and puts the process's world back as it was, with
any group the main thread had before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any

import torch

from .._torch_private import c10d_world, set_c10d_world, set_thread_isolated_group_registry
from . import threaded_pg

__all__ = ["ThreadLocalWorld", "install_thread_local_world", "uninstall_thread_local_world"]

__unittest = True


@dataclasses.dataclass
class _WorldState:
    """One thread's c10d state (the fields of torch's ``_World``)."""

    default_pg: Any = None
    pg_map: dict = dataclasses.field(default_factory=dict)
    pg_names: dict = dataclasses.field(default_factory=dict)
    pg_group_ranks: dict = dataclasses.field(default_factory=dict)
    pg_backend_config: dict = dataclasses.field(default_factory=dict)
    group_count: int = 0
    tags_to_pg: dict = dataclasses.field(default_factory=dict)
    pg_to_tag: dict = dataclasses.field(default_factory=dict)
    pg_coalesce_state: dict = dataclasses.field(default_factory=dict)
    pg_flight_recorder_hooks: dict = dataclasses.field(default_factory=dict)  # torch >= 2.15
    comms: list = dataclasses.field(default_factory=list)


def _field(name: str, settable: bool = False) -> property:
    def get(world: ThreadLocalWorld) -> Any:
        return getattr(world.state(), name)

    def set_(world: ThreadLocalWorld, value: Any) -> None:
        setattr(world.state(), name, value)

    return property(get, set_ if settable else None, doc=f"This thread's ``{name}``.")


class ThreadLocalWorld:
    """Stands for torch's c10d ``_World``; each thread sees only its own groups."""

    _local = threading.local()

    def state(self) -> _WorldState:
        """This thread's state, created empty on first use."""
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _WorldState()
        return state

    default_pg = _field("default_pg", settable=True)
    group_count = _field("group_count", settable=True)
    pg_map = _field("pg_map")
    pg_names = _field("pg_names")
    pg_group_ranks = _field("pg_group_ranks")
    pg_backend_config = _field("pg_backend_config")
    tags_to_pg = _field("tags_to_pg")
    pg_to_tag = _field("pg_to_tag")
    pg_coalesce_state = _field("pg_coalesce_state")
    pg_flight_recorder_hooks = _field("pg_flight_recorder_hooks")
    comms = _field("comms")

    @property
    def pg_config_info(self) -> list[dict[str, Any]]:
        """This thread's groups as torch describes them (name, backend, ranks, size)."""
        state = self.state()
        world_size = state.default_pg.size() if state.default_pg is not None else 0
        return [{"pg_name": state.pg_names[pg], "pg_desc": pg.group_desc,
                 "backend_config": state.pg_backend_config[pg],
                 "ranks": list(ranks) if len(ranks) != world_size else [],
                 "group_size": len(ranks), "group_count": state.group_count}
                for pg, ranks in state.pg_group_ranks.items()]


_installed: list[tuple[Any, contextlib.ExitStack]] = []  # the replaced world, what to undo
_install_lock = threading.Lock()


def install_thread_local_world() -> ThreadLocalWorld:
    """Give every thread its own c10d world and group-name registry, and register the
    ``threaded`` backend (the world stays as it is if it is already thread-local); returns it."""
    threaded_pg.register_threaded_backend()  # every time: the last registration of the name wins
    with _install_lock:
        current = c10d_world()
        if isinstance(current, ThreadLocalWorld):
            return current
        undo = contextlib.ExitStack()
        undo.enter_context(torch.autograd.set_multithreading_enabled(False))
        set_thread_isolated_group_registry(True)
        undo.callback(set_thread_isolated_group_registry, False)
        world = ThreadLocalWorld()
        _installed.append((current, undo))
        set_c10d_world(world)
        return world


def uninstall_thread_local_world() -> None:
    """Tear down the active exchange (a thread still waiting in it raises ``CollectiveAborted``);
    put back the process's own c10d world, group-name registry and autograd's threads (if
    installed)."""
    threaded_pg.set_active_exchange(None)
    with _install_lock:
        if not _installed:
            return
        previous, undo = _installed.pop()
        set_c10d_world(previous)
        undo.close()

