"""The one place that destroys process groups.

Whoever drops the last reference to a gloo group runs its destructor, which joins the group's
worker threads. A worker that finishes a collective drops tensors that have Python objects,
for which it needs the GIL. A ``ProcessGroup`` Python object drops its reference with the GIL
released, but a DDP ``Reducer`` drops its group with the GIL held: if a test's DDP module
outlives the destroyed group (freed with the test's locals, or by gc) and its Reducer holds
the last reference while a worker is still finishing a collective, the rank deadlocks in the
join (torch 2.13). So inside a rank, :func:`destroy_process_groups` first *retires* the live
groups (keeps them referenced), and the rank drops them with
:func:`release_retired_process_groups` only at its very end. Outside a rank nothing would ever
drop them, so there groups are destroyed without being retired.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .._torch_private import live_process_groups
from ..worlds.rank_facts import rank_process_facts

__all__ = ["destroy_process_groups", "destroy_groups_made_since", "release_retired_process_groups"]

__unittest = True

_retired: list[Any] = []


def destroy_process_groups() -> None:
    """Destroy the default process group and its subgroups, if there is one.

    In a rank the groups stay referenced until :func:`release_retired_process_groups`.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    if rank_process_facts() is not None:
        _retired.extend(live_process_groups())
    dist.destroy_process_group()


def destroy_groups_made_since(before: Collection[Any]) -> None:
    """Destroy the process groups made since ``before`` (a list of :func:`live_process_groups`
    taken earlier) other than the default group: the subgroups of device meshes a test made,
    in a rank that runs the next test too. In a rank they stay referenced, as above."""
    import torch.distributed as dist

    made = [g for g in live_process_groups() if g not in before and g is not dist.group.WORLD]
    if rank_process_facts() is not None:
        _retired.extend(made)
    for group in made:
        dist.destroy_process_group(group)


def release_retired_process_groups() -> None:
    """Drop the groups :func:`destroy_process_groups` kept referenced (the end of a rank).

    If the test's objects still hold some, the rank's ``os._exit`` leaves them; pybind drops
    the references here with the GIL released.
    """
    _retired.clear()
