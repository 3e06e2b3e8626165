"""Helpers FSDP1 (``FullyShardedDataParallel``) tests use on module states: compare them across
ranks, zero them, take and broadcast a state dict, move or wrap a model, and name a subtest.

Upstream's private names (``_assert_module_states``, ``_zero_model``...), kept because test files
import them. Every device move goes to the tests' device type (``cpu`` without accelerators).

Example::

    model = _maybe_wrap_fsdp(_move_to_device(nn.Linear(4, 4), True), wrap_fsdp=True)
    _assert_module_states(model, dist.group.WORLD, self.assertEqual)  # same on every rank
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn

from ... import devices
from ...cpu_compat import fsdp_device_id

__all__ = [
    "_assert_module_states",
    "_zero_model",
    "_get_state_dict",
    "subtest_name",
    "_broadcast_state_dict",
    "_move_to_device",
    "_maybe_wrap_fsdp",
    "fsdp_wrap",
]

__unittest = True


def _named_states(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    states = [(name, p.detach().cpu()) for name, p in model.named_parameters()]
    return states + [(name, b.detach().cpu()) for name, b in model.named_buffers()]


def _assert_module_states(model: nn.Module, process_group: dist.ProcessGroup | None,
                          assert_fn: Callable[[torch.Tensor, torch.Tensor], Any]) -> None:
    """Gather every rank's parameters and buffers (as CPU tensors, in ``named_parameters`` then
    ``named_buffers`` order) and call ``assert_fn(rank 0's, rank r's)`` for each state of each
    rank r > 0. A failing ``assert_fn`` is re-raised naming the state and the rank; ranks
    whose states differ in names or number fail naming both lists. Collective: every rank of
    ``process_group`` calls it."""
    mine = _named_states(model)
    gathered: list[Any] = [None] * dist.get_world_size(process_group)
    dist.all_gather_object(gathered, mine, group=process_group)
    reference = gathered[0]
    for rank, states in enumerate(gathered[1:], start=1):
        names0, names = [n for n, _ in reference], [n for n, _ in states]
        if names0 != names:
            raise AssertionError(f"rank 0 and rank {rank} have different module states: "
                                 f"{names0} vs {names}")
        for (name, expected), (_, actual) in zip(reference, states, strict=True):
            try:
                assert_fn(expected, actual)
            except AssertionError as error:
                raise AssertionError(f"module state {name!r} differs between rank 0 and "
                                     f"rank {rank}: {error}") from error


def _zero_model(model: nn.Module, zero_buffers: bool = False, summon_full: bool = True) -> None:
    """Set every parameter (and with ``zero_buffers`` every buffer) of ``model`` to zero in
    place; with ``summon_full`` inside ``FullyShardedDataParallel.summon_full_params`` so an
    FSDP1 model's sharded parameters are zeroed whole."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    full = (FullyShardedDataParallel.summon_full_params(model) if summon_full
            else contextlib.nullcontext())
    with full, torch.no_grad():
        for param in model.parameters():
            param.zero_()
        if zero_buffers:
            for buffer in model.buffers():
                buffer.zero_()


def _get_state_dict(model: nn.Module, cpu_offload: bool = False,
                    half: bool = False) -> dict[str, Any]:
    """``model.state_dict()``, after moving ``model`` (in place) to the tests' device type
    unless ``cpu_offload``, and casting it to half precision if ``half``."""
    if not cpu_offload:
        model = model.to(devices.device_type())
    if half:
        model.half()
    return model.state_dict()


def subtest_name(test_name_mapping: Mapping[str, str], *args: Any) -> str:
    """The name of a subtest from its arguments: each ``test_name_mapping[str(arg)]`` (``none``
    for None), joined by ``_``. An argument missing from the mapping raises ``KeyError``."""
    return "_".join("none" if arg is None else test_name_mapping[str(arg)] for arg in args)


def _broadcast_state_dict(rank: int, state_dict: dict[str, Any] | None) -> dict[str, Any]:
    """Rank 0's ``state_dict`` on every rank (``rank`` is the caller's rank in the default
    group; the others' ``state_dict`` is ignored), its tensors on the tests' device type.
    Rank 0's tensors go through CPU; its dict is changed in place to hold CPU tensors."""
    if rank == 0:
        assert state_dict is not None, "rank 0 must give the state dict to broadcast"
        for name, value in state_dict.items():
            state_dict[name] = value.cpu()
    box: list[Any] = [state_dict if rank == 0 else None]
    dist.broadcast_object_list(box)
    received: dict[str, Any] = box[0]
    device = devices.device_type()
    return {name: value.to(device) for name, value in received.items()}


def _move_to_device(model: nn.Module, move_to_device: bool) -> nn.Module:
    """``model`` moved to the tests' device type if ``move_to_device``, else unchanged."""
    return model.to(devices.device_type()) if move_to_device else model


def fsdp_wrap(module: nn.Module, *args: Any, **fsdp_kwargs: Any) -> nn.Module:
    """``FullyShardedDataParallel(module, *args, **fsdp_kwargs)``, with ``device_id=cpu`` on
    a CPU-only machine unless given."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    if "device_id" not in fsdp_kwargs and fsdp_device_id() is not None:
        fsdp_kwargs["device_id"] = fsdp_device_id()
    return FullyShardedDataParallel(module, *args, **fsdp_kwargs)


def _maybe_wrap_fsdp(model: nn.Module, wrap_fsdp: bool, *args: Any, **kwargs: Any) -> nn.Module:
    """``fsdp_wrap(model, *args, **kwargs)`` if ``wrap_fsdp``, else ``model``."""
    return fsdp_wrap(model, *args, **kwargs) if wrap_fsdp else model
