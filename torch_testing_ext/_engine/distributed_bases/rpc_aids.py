"""What RPC test bodies call besides ``dist_init``, named as in upstream's ``dist_utils``: worker
names, an init-method template, waiting for a peer to fail or for RRef bookkeeping to settle,
a gloo group beside RPC, and finding a profiler event.

Example::

    rpc.rpc_sync(worker_name(1), torch.add, args=(t, 1))
    wait_until_pending_futures_and_users_flushed()     # before checking RRef debug info
    initialize_pg(self.file_init_method, self.rank, self.world_size)   # for dist.barrier()
"""

from __future__ import annotations

import re
import time
from typing import Any

from .._torch_private import rref_context_debug_info
from ..skips.platform_skips import FILE_SCHEMA

__all__ = ["INIT_METHOD_TEMPLATE", "noop", "worker_name", "wait_until_node_failure",
           "wait_until_pending_futures_and_users_flushed", "get_num_owners_and_forks",
           "wait_until_owners_and_forks_on_rank", "initialize_pg", "get_function_event"]

INIT_METHOD_TEMPLATE = FILE_SCHEMA + "{file_name}"  # .format(file_name=...) gives a file:// init method


def noop() -> None:
    """Does nothing: what a probing RPC runs on its peer."""


def worker_name(rank: int) -> str:
    """The RPC name of ``rank``'s worker in these suites: ``worker<rank>``."""
    return f"worker{rank}"


def wait_until_node_failure(rank: int, expected_error_regex: str = ".*") -> str:
    """Send ``noop`` RPCs to ``rank`` until one fails with an error matching
    ``expected_error_regex``; that error's message."""
    from torch.distributed import rpc

    while True:
        try:
            rpc.rpc_sync(worker_name(rank), noop, args=())
        except Exception as error:  # the failure being waited for, if it matches
            if re.search(expected_error_regex, str(error)):
                return str(error)
        else:
            time.sleep(0.1)


def _wait(settled: Any, timeout: float, pause: float, describe: Any) -> None:
    """Call ``settled()`` until it is true; past ``timeout`` seconds, ``ValueError(describe())``."""
    start = time.monotonic()
    while not settled():
        if time.monotonic() - start > timeout:
            raise ValueError(describe())
        time.sleep(pause)


def wait_until_pending_futures_and_users_flushed(timeout: int = 20) -> None:
    """Wait until this process's RRef context has no pending futures or users (the owner's
    confirmations processed), or raise ``ValueError`` after ``timeout`` seconds."""
    counts: dict[str, int] = {}

    def settled() -> bool:
        info = rref_context_debug_info()
        counts.update(futures=int(info["num_pending_futures"]), users=int(info["num_pending_users"]))
        return counts["futures"] == 0 and counts["users"] == 0

    _wait(settled, timeout, 0.1, lambda: f"Timed out after {timeout} s waiting to flush pending futures and "
                                         f"users: {counts['futures']} futures and {counts['users']} users pending")


def get_num_owners_and_forks() -> tuple[str, str]:
    """This process's numbers of owner RRefs and of forks, as RPC's debug info gives them."""
    info = rref_context_debug_info()
    return info["num_owner_rrefs"], info["num_forks"]


def wait_until_owners_and_forks_on_rank(num_owners: int, num_forks: int, rank: int, timeout: int = 20) -> None:
    """Ask ``rank`` every second until it holds ``num_owners`` owner RRefs and ``num_forks``
    forks, or raise ``ValueError`` after ``timeout`` seconds."""
    from torch.distributed import rpc

    seen: list[int] = []

    def settled() -> bool:
        owners, forks = rpc.rpc_sync(worker_name(rank), get_num_owners_and_forks, args=(), timeout=5)
        seen[:] = [int(owners), int(forks)]
        return seen == [num_owners, num_forks]

    _wait(settled, timeout, 1.0, lambda: f"Timed out after {timeout} s waiting for {num_owners} owners and "
                                         f"{num_forks} forks on rank {rank}: it had {seen[0]} and {seen[1]}")


def initialize_pg(init_method: str, rank: int, world_size: int) -> None:
    """Start the default gloo group on ``init_method`` unless one is up (for tests that call
    ``dist.barrier`` beside RPC)."""
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="gloo", init_method=init_method, rank=rank, world_size=world_size)


def get_function_event(function_events: Any, partial_event_name: str) -> Any:
    """The first of a profiler's ``function_events`` whose name contains ``partial_event_name``
    (``IndexError`` if none does)."""
    return [event for event in function_events if partial_event_name in event.name][0]  # noqa: RUF015  # IndexError when none, as upstream
