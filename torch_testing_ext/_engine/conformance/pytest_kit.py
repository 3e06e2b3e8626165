"""The kit as pytest tests: one test per item and world size, each on a world of its own.

:func:`parametrize` makes ``test_item[2ranks-collectives.all_reduce[SUM-float32]]`` for every
item of the contract (the areas ``--c10d-only`` names) and world size, each marked
``@pytest.mark.world_size(n, timeout=ITEM_TIMEOUT)``: fresh rank processes (rank threads for the
threaded group), so a stuck collective fails its item alone, named, with the ranks' stacks, and
the next item starts on a fresh world. An item that is not claimed is skipped before any rank
starts, with the reason (``not claimed: the dtype float16``); so is one that needs more ranks.

In a rank, :func:`item_context` imports the module that registers the backend, makes the
backend's default group for the item (the threaded group is there already), hands the item its
:class:`~.contract.Context` and destroys the groups after it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from ..worlds.settings import SettingError
from .claims import Claims, ClaimsError, load_claims
from .kit_ids import param_id
from .kit_settings import OPTIONS, KitSettings, from_environment
from .vocabulary import AREAS

__all__ = ["THREADED", "FAKE", "KitError", "resolve", "kit_of", "asked_for", "skip_or_refuse", "parametrize",
           "item_context", "import_backend_module", "register_builtin"]

THREADED = "threaded"  # our threaded process group: ranks as threads of one process
FAKE = "fake"  # torch's fake process group: calls complete, nothing travels


class KitError(ValueError):
    """The backend cannot be checked as asked (its module does not import, no backend of its name
    is registered, its claims cannot be read); the message is one line."""


def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(f"torch_testing_ext conformance: {message}")


def import_backend_module(name: str | None, flag: str = OPTIONS["import_module"]) -> ModuleType | None:
    """The module that registers the backend, imported (None when there is none to import)."""
    if not name:
        return None
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise KitError(f"{flag} {name}: cannot import it: {error}") from None


def register_builtin(backend: str) -> None:
    """Register the kit's in-process backends by name: the threaded and fake groups."""
    if backend == THREADED:
        from ..process_groups.threaded_pg import register_threaded_backend

        register_threaded_backend()  # (again as each thread world starts)
    elif backend == FAKE:
        from .._torch_private import register_fake_backend

        register_fake_backend()


def resolve(settings: KitSettings, flags: dict[str, str] = OPTIONS) -> Claims:
    """Import the backend's module, check the backend is registered, and read its claims;
    ``KitError`` naming the flag (``flags``: the command line's names) otherwise."""
    module = import_backend_module(settings.import_module, flags["import_module"])
    register_builtin(settings.backend)
    import torch.distributed as dist

    if not dist.is_backend_available(settings.backend):
        hint = "" if settings.import_module else \
            f"; {flags['import_module']} MODULE imports the module that registers it"
        raise KitError(f"{flags['backend']} {settings.backend}: no backend of that name is registered{hint}")
    try:
        return load_claims(settings.backend, settings.claims, getattr(module, "CONFORMANCE_CLAIMS", None))
    except ClaimsError as error:
        raise KitError(str(error)) from None


def kit_of(config: pytest.Config) -> tuple[KitSettings, Claims] | None:
    """This session's run of the kit (its settings and the backend's claims), checked once; None
    when the session does not run it. A problem is a ``pytest.UsageError``, one line."""
    cached = config.stash.get(_KIT, None)
    if cached is not None:
        return cached or None
    try:
        settings = from_environment(os.environ)
        if settings is None:
            config.stash[_KIT] = ()
            return None
        claims = resolve(settings)
    except (SettingError, KitError) as error:
        raise _usage(str(error)) from None
    config.stash[_KIT] = (settings, claims)
    return settings, claims


_KIT = pytest.StashKey[Any]()


def asked_for(config: pytest.Config) -> bool:
    """Whether the session's arguments name the kit (``--pyargs torch_testing_ext.conformance``)."""
    return any("torch_testing_ext.conformance" in arg or "torch_testing_ext/conformance" in arg
               for arg in config.invocation_params.args)


def skip_or_refuse(config: pytest.Config) -> None:
    """A session without a backend: a usage error if it asked for the kit, else a skip of the
    kit's module (a collection that merely walked into it)."""
    if kit_of(config) is not None:
        return
    message = (f"the kit checks one backend: {OPTIONS['backend']} NAME (and {OPTIONS['import_module']} MODULE for one "
               "registered out of tree)")
    if asked_for(config):
        raise _usage(message)
    pytest.skip(message, allow_module_level=True)


def parametrize(metafunc: pytest.Metafunc) -> None:
    """One test per item and world size (see the module docstring)."""
    from .items import all_items

    skip_or_refuse(metafunc.config)
    kit = kit_of(metafunc.config)
    assert kit is not None, "skip_or_refuse leaves a session with a backend"
    settings, claims = kit
    ranks = "threads" if settings.backend == THREADED else "fresh"
    order = {area: index for index, area in enumerate(AREAS)}
    chosen = sorted((item for item in all_items().values() if not settings.only or item.area in settings.only),
                    key=lambda item: (order[item.area], item.id))
    params = []
    for size in settings.world_sizes:
        for item in chosen:
            marks = [pytest.mark.world_size(size, ranks=ranks, timeout=settings.item_timeout)]
            reason = claims.reason_not_claimed(item.id, item.area, item.dtype, item.reduce_op)
            if reason is None and size < item.min_world_size:
                reason = f"needs {item.min_world_size} ranks or more"
            if reason is not None:
                marks.append(pytest.mark.skip(reason=reason))
            params.append(pytest.param(item.id, marks=marks, id=param_id(size, item.id)))
    metafunc.parametrize("c10d_item_id", params)


def _device(settings: KitSettings, claims: Claims, rank: int) -> Any:
    import torch

    from ..worlds.rank_facts import current_rank_facts

    kind = settings.device or (claims.devices[0] if claims.devices else "cpu")
    if kind == "cpu":
        return torch.device("cpu")
    facts = current_rank_facts()
    index = int(facts.device.rsplit(":", 1)[1]) if facts and facts.device.startswith(f"{kind}:") else rank
    torch.accelerator.set_device_index(index)
    return torch.device(kind, index)


@contextlib.contextmanager
def item_context(config: pytest.Config, item_id: str, rank: int, world_size: int) -> Iterator[Any]:
    """In a rank: the backend's default group made for the item, and the item's Context; the
    groups destroyed after it (the thread world makes and destroys the threaded group itself)."""
    import torch.distributed as dist

    from .contract import Context
    from .items import all_items

    kit = kit_of(config)
    assert kit is not None, "a kit test runs in a session of the kit"
    settings, claims = kit
    item = all_items()[item_id]
    device = _device(settings, claims, rank)
    if settings.backend == FAKE:
        from ..process_groups.fake_store import FakeStore

        dist.init_process_group(FAKE, store=FakeStore(), rank=rank, world_size=world_size)
    elif settings.backend != THREADED:
        from ..process_groups.rendezvous import rendezvous_init_method

        dist.init_process_group(settings.backend, init_method=rendezvous_init_method(), rank=rank,
                                world_size=world_size)
    try:
        yield Context(rank, world_size, settings.backend, device, dist.group.WORLD, item, settings.item_timeout)
    finally:
        if settings.backend != THREADED:
            from ..process_groups.teardown import destroy_process_groups

            destroy_process_groups()
