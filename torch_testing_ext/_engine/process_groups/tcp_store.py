"""A ``TCPStore`` on a free port, and the tensorpipe transports this machine can use.

The harness's own rendezvous uses files; these are for tests of the TCP store itself and of
RPC, named as in ``common_distributed``.

Example::

    store = create_tcp_store(world_size=1)   # a master store on localhost, free port
    store.set("key", "value")
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from datetime import timedelta
from typing import Any

from .._torch_private import jit_tcp_store
from .ports import find_free_port, retry_on_connect_failures

__all__ = ["create_tcp_store", "has_efa", "tp_transports", "TRANSPORTS_WITHOUT_INFINIBAND"]

# TensorPipe's transports that need no InfiniBand (its ibv transport fails on EFA machines).
TRANSPORTS_WITHOUT_INFINIBAND = ("shm", "uv")


@retry_on_connect_failures
def create_tcp_store(
    addr: str = "localhost",
    world_size: int = 1,
    is_master: bool = True,
    timeout: timedelta = timedelta(minutes=5),  # noqa: B008  # upstream's signature
    wait_for_workers: bool = True,
    jit_class: bool = False,
    use_libuv: bool = True,
) -> Any:
    """A ``TCPStore`` at ``addr`` on a port that was free, tried again (up to 10 calls) when
    another process took the port first. ``jit_class=True`` gives the TorchScript class
    (``torch.classes.dist_c10d.TCPStore``), which takes the timeout in milliseconds."""
    import torch.distributed as dist

    port = find_free_port()
    if jit_class:
        return jit_tcp_store(addr, port, world_size, is_master, int(timeout / timedelta(milliseconds=1)))
    return dist.TCPStore(addr, port, world_size, is_master, timeout=timeout,
                         wait_for_workers=wait_for_workers, use_libuv=use_libuv)


@functools.cache
def has_efa() -> bool:
    """Whether the machine has AWS EFA (Libfabric) interfaces: ``fi_info -p efa -t FI_EP_RDM``
    exists and succeeds. Asked once per process."""
    if shutil.which("fi_info") is None:
        return False
    completed = subprocess.run(["fi_info", "-p", "efa", "-t", "FI_EP_RDM"], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return completed.returncode == 0


def tp_transports() -> list[str] | None:
    """The tensorpipe transports for ``TensorPipeRpcBackendOptions(_transports=...)``:
    ``["shm", "uv"]`` on an EFA machine (tensorpipe's InfiniBand transport fails there), else
    None (tensorpipe's own choice)."""
    return list(TRANSPORTS_WITHOUT_INFINIBAND) if has_efa() else None
