"""RPC test helpers, named as in ``torch.testing._internal.dist_utils``: ``dist_init``, RPC around
a test method, and the aids RPC test bodies call (defined in ``_engine/distributed_bases/``:
``rpc_fixtures.py`` and ``rpc_aids.py``)."""

from __future__ import annotations

from ._engine.distributed_bases.rpc_aids import (
    INIT_METHOD_TEMPLATE,
    get_function_event,
    get_num_owners_and_forks,
    initialize_pg,
    noop,
    wait_until_node_failure,
    wait_until_owners_and_forks_on_rank,
    wait_until_pending_futures_and_users_flushed,
    worker_name,
)
from ._engine.distributed_bases.rpc_fixtures import dist_init

__all__ = ["dist_init", "INIT_METHOD_TEMPLATE", "noop", "worker_name", "wait_until_node_failure",
           "wait_until_pending_futures_and_users_flushed", "get_num_owners_and_forks",
           "wait_until_owners_and_forks_on_rank", "initialize_pg", "get_function_event"]
