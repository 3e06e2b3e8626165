"""What a test may leave behind in a rank that runs the next test too, found and named.

A kept rank takes a :class:`RankState` once its world is made, and after every test lists
what differs: process groups made and not destroyed (or the class's default group destroyed;
the groups of device meshes are not the test's, see ``mesh_groups``), environment variables
set, changed or removed, the settings of ``global_state`` (torch's defaults and modes,
``torch.backends`` flags, the working directory, ``sys.path``...), Python threads still
running, and on an accelerator a current stream other than the default one and device memory
above the world's starting point. The test that left something fails with the list, and the
world is started afresh for the next test, so nothing is repaired in place and no later test
inherits it. Random state needs no check: every test starts from the same seeds.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import threading
from typing import Any

from .._torch_private import clear_accelerator_workspaces, live_process_groups, made_by_device_mesh
from .global_state import GlobalState

__all__ = ["RankState", "find_leaks"]

__unittest = True


def _group_name(group: Any) -> str:
    return f"process group {getattr(group, 'group_name', '?')!r} of {group.size()} ranks"


def _accelerator(device: str) -> Any:
    """torch's module for ``device``'s type, or None on CPU."""
    import torch

    device_type = device.split(":")[0]
    return None if device_type == "cpu" else torch.get_device_module(device_type)


def _allocated_bytes(device: str) -> int | None:
    module = _accelerator(device)
    if module is None:
        return None
    gc.collect()
    clear_accelerator_workspaces(device)
    return int(module.memory_allocated(device))


def _current_stream_is_default(device: str) -> bool:
    module = _accelerator(device)
    return module is None or module.current_stream(device) == module.default_stream(device)


@dataclasses.dataclass(frozen=True)
class RankState:
    """What a rank holds between tests: taken once, after the class's world is made."""

    groups: tuple[Any, ...]
    default_group: Any
    environ: dict[str, str]
    threads: frozenset[int]
    device: str
    allocated_bytes: int | None
    global_state: GlobalState

    @classmethod
    def take(cls, device: str) -> RankState:
        import torch.distributed as dist

        default = dist.group.WORLD if dist.is_initialized() else None
        return cls(tuple(live_process_groups()), default, dict(os.environ),
                   frozenset(t.ident for t in threading.enumerate() if t.ident is not None),
                   device, _allocated_bytes(device), GlobalState.take(device))


def _environment_changes(before: dict[str, str]) -> list[str]:
    now = os.environ
    changes = [f"{name} set" for name in sorted(now.keys() - before.keys())]
    changes += [f"{name} removed" for name in sorted(before.keys() - now.keys())]
    changes += [f"{name} changed" for name in sorted(before.keys() & now.keys()) if before[name] != now[name]]
    return changes


def find_leaks(before: RankState) -> list[str]:
    """What this rank holds now that it did not hold in ``before``, one line per kind."""
    import torch.distributed as dist

    leaks = []
    default = dist.group.WORLD if dist.is_initialized() else None
    if before.default_group is not None and default is not before.default_group:
        leaks.append("the class's default process group was destroyed or replaced")
    made = [g for g in live_process_groups()
            if g not in before.groups and g is not default and not made_by_device_mesh(g)]
    if made:
        leaks.append("left " + ", ".join(_group_name(g) for g in made) + " (destroy it in the test)")
    changes = _environment_changes(before.environ)
    if changes:
        leaks.append("changed the environment: " + ", ".join(changes) + " (restore it in the test)")
    leaks += GlobalState.take(before.device).changes_since(before.global_state)
    threads = [t for t in threading.enumerate() if t.ident not in before.threads and t.is_alive()]
    if threads:
        leaks.append("left threads running: " + ", ".join(repr(t.name) for t in threads))
    if not _current_stream_is_default(before.device):
        leaks.append(f"left a non-default current stream on {before.device}")
    allocated = _allocated_bytes(before.device)
    if allocated is not None and before.allocated_bytes is not None and allocated > before.allocated_bytes:
        leaks.append(f"left {allocated - before.allocated_bytes} bytes allocated on {before.device} "
                     f"(the world started with {before.allocated_bytes})")
    return leaks
