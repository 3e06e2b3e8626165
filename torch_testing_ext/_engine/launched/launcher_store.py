"""The launcher's store as this process sees it, and the per-test rendezvous on it.

Every rank of a launched job reaches one ``TCPStore`` at ``MASTER_ADDR:MASTER_PORT``: under
``torchrun`` its agent hosts it (``TORCHELASTIC_USE_AGENT_STORE=True``) and every rank is a
client; under another launcher rank 0 hosts it, shared with any ``env://`` group rank 0 makes
(multi-tenant), as ``env://`` does. The harness keeps its keys under ``torch_testing_ext/``.
A process holds two connections: one for the test's own work, and one for the watchdog,
which must be able to report while the test blocks the first in a long wait.

A test's process groups meet under a key of their own in that store, so rendezvous needs no
port and no shared filesystem, and works across machines: ``init_method`` is
``tte-launcher://store/<test key>/rendezvous-<n>`` (``process_groups.rendezvous`` hands these out).
"""

from __future__ import annotations

import datetime
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import torch.distributed as dist

from .launcher_env import LaunchedRank

__all__ = ["launcher_store", "WATCHDOG", "MAIN", "rendezvous_base", "RENDEZVOUS_SCHEME",
           "KEY_ROOT", "CONNECT_TIMEOUT"]

__unittest = True

RENDEZVOUS_SCHEME = "tte-launcher"
KEY_ROOT = "torch_testing_ext"
CONNECT_TIMEOUT = 300.0  # seconds a connection waits for the store's host
MAIN = "main"  # the connection the test's thread uses
WATCHDOG = "watchdog"  # the watchdog's own connection

_lock = threading.Lock()
_stores: dict[str, dist.Store] = {}
_handler_registered = False


def _connect(launched: LaunchedRank, host: bool) -> dist.Store:
    store = dist.TCPStore(
        launched.master_addr, launched.master_port, is_master=host,
        timeout=datetime.timedelta(seconds=CONNECT_TIMEOUT), wait_for_workers=False,
        multi_tenant=True)
    return dist.PrefixStore(f"{KEY_ROOT}/attempt-{launched.restart_count}", store)


def launcher_store(launched: LaunchedRank, connection: str = MAIN) -> dist.Store:
    """This process's ``connection`` (:data:`MAIN` or :data:`WATCHDOG`) to the job's store,
    under the harness's prefix; made on first use. Rank 0's main connection hosts the store
    unless the launcher's agent does."""
    with _lock:
        if connection not in _stores:
            host = connection == MAIN and launched.rank == 0 and not launched.agent_store
            _stores[connection] = _connect(launched, host)
            _register_rendezvous()
        return _stores[connection]


def rendezvous_base(test_key: str) -> str:
    """The base of the ``init_method`` URLs of one test (``process_groups.rendezvous`` appends
    ``/rendezvous-<n>``)."""
    return f"{RENDEZVOUS_SCHEME}://store/{urllib.parse.quote(test_key, safe='')}"


def _rendezvous(url: str, **kwargs: Any) -> Iterator[tuple[dist.Store, int, int]]:
    """torch's rendezvous handler for :data:`RENDEZVOUS_SCHEME`: the launcher's store under the
    URL's key, with the rank and world size ``init_process_group`` put in the query."""
    parsed = urllib.parse.urlparse(url)
    query = urllib.parse.parse_qs(parsed.query)
    store = _stores.get(MAIN)
    if store is None or "rank" not in query or "world_size" not in query:
        raise ValueError(f"{url}: a {RENDEZVOUS_SCHEME}:// rendezvous is made by the harness for a "
                         "test that a launched rank runs, with the rank and world size given")
    key = urllib.parse.unquote(parsed.path.lstrip("/"))
    yield dist.PrefixStore(f"rendezvous/{key}/", store), int(query["rank"][0]), int(query["world_size"][0])
    raise RuntimeError(f"{RENDEZVOUS_SCHEME}:// cannot rendezvous again; make a new group")


def _register_rendezvous() -> None:
    global _handler_registered
    if not _handler_registered:
        dist.register_rendezvous_handler(RENDEZVOUS_SCHEME, _rendezvous)
        _handler_registered = True
