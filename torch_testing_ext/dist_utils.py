"""RPC test helpers, named as in ``torch.testing._internal.dist_utils``: ``dist_init``, RPC around
a test method (defined in ``_engine/distributed_bases/rpc_fixtures.py``)."""

from __future__ import annotations

from ._engine.distributed_bases.rpc_fixtures import dist_init

__all__ = ["dist_init"]
