"""``FakeStore``: a store for the ``fake`` process-group backend, which never uses it.

A fake group communicates nothing (collectives leave their tensors as they are), so one
process can act as any rank of any world size::

    dist.init_process_group("fake", store=FakeStore(), rank=3, world_size=8)

Importing this module makes sure the ``fake`` backend is registered.
"""

from __future__ import annotations

import torch.distributed as dist

from .._torch_private import register_fake_backend

__all__ = ["FakeStore"]

__unittest = True


class FakeStore(dist.Store):
    """A key-value store that holds nothing: the ``fake`` backend needs a store, not its data."""


register_fake_backend()
