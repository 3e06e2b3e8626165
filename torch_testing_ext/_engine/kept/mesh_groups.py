"""The process groups device meshes make, released after each test on a kept rank.

``init_device_mesh`` makes a process group for each dimension that is not the whole world
(described ``mesh_<dim name>``), and torch keeps it until it is destroyed; DTensor's caches
keep the meshes too. Those groups are the mesh's, not a leak of the test: after a test a kept
rank empties DTensor's caches (a cached result names the mesh it was computed on, so a later
mesh of the same layout would be handed the old one and its destroyed groups) and destroys the
mesh groups made since its world started that no live mesh holds any more. A mesh still alive
(kept by a fixture of a wider scope, or in a global) keeps its groups, which are not reported
either. Groups a test made itself with ``new_group`` are its own (see ``leak_check``).

Finding the live meshes is a walk over the objects the garbage collector tracks (tens of
milliseconds with torch loaded), only after a test whose meshes made groups (or while a mesh kept
alive holds some); a mesh found is then only taken for alive once its young garbage is
collected, and, the first time or once it lost a reference, all of it.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Collection
from typing import Any

from .._torch_private import clear_dtensor_caches, device_mesh_group_names, live_process_groups, made_by_device_mesh
from ..process_groups.teardown import destroy_groups_made_since

__all__ = ["release_mesh_groups"]

__unittest = True

# Meshes found alive after a full collection, by id: a weak reference and how many references
# the mesh had then.
_survivors: dict[int, tuple[weakref.ref[Any], int]] = {}


def _mesh_types() -> set[type]:
    from torch.distributed.device_mesh import DeviceMesh

    types: set[type] = set()
    todo = [DeviceMesh]
    while todo:
        cls = todo.pop()
        types.add(cls)
        todo += cls.__subclasses__()
    return types


def _meshes_holding(names: set[str]) -> list[weakref.ref[Any]]:
    """Weak references to the device meshes of this process that hold a group of ``names``
    (some may be garbage in a reference cycle, not collected yet)."""
    types = _mesh_types()
    # An instance of a class defined in Python refers to its class: the collector's walk finds
    # every mesh, in C, without taking a reference to every object (which, in a rank forked
    # from the server, would also copy every page of memory it shares with the server).
    meshes = [obj for obj in gc.get_referrers(*types) if type(obj) in types]
    return [weakref.ref(mesh) for mesh in meshes if names.intersection(device_mesh_group_names(mesh))]


def _references_to(ref: weakref.ref[Any]) -> int:
    mesh = ref()
    return sys.getrefcount(mesh)


def _still_held_as_before(ref: weakref.ref[Any]) -> bool:
    """Whether ``ref``'s mesh outlived a full collection before and has lost no reference since
    (only a mesh that lost one can have become garbage)."""
    known = _survivors.get(id(ref()))
    return known is not None and known[0]() is ref() and _references_to(ref) >= known[1]


def _survived(meshes: list[weakref.ref[Any]]) -> list[weakref.ref[Any]]:
    """Those of ``meshes`` still alive once garbage is collected: the young generations (where a
    cycle the test made is, such as a flattened mesh and its root, or a cache that refers to
    itself), and everything unless each mesh left outlived that before and lost no reference
    since (a mesh kept by a wider fixture or a global costs a full collection once)."""
    gc.collect(1)
    meshes = [ref for ref in meshes if ref() is not None]
    if not all(_still_held_as_before(ref) for ref in meshes):
        gc.collect()
        meshes = [ref for ref in meshes if ref() is not None]
    _survivors.clear()
    _survivors.update((id(ref()), (ref, _references_to(ref))) for ref in meshes)
    return meshes


def release_mesh_groups(before: Collection[Any]) -> None:
    """Destroy the groups device meshes made since ``before`` (the live groups then) that no
    live mesh holds, and empty DTensor's caches. Costs nothing when no mesh made a group."""
    made = [group for group in live_process_groups() if group not in before and made_by_device_mesh(group)]
    if not made:
        return
    clear_dtensor_caches()
    holding = _meshes_holding({group.group_name for group in made})
    held = {name for ref in _survived(holding) if (mesh := ref()) is not None for name in device_mesh_group_names(mesh)}
    released = [group for group in made if group.group_name not in held]
    if released:
        destroy_groups_made_since([group for group in live_process_groups() if group not in released])
