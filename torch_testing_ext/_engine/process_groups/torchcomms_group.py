"""``setup_torchcomms_pg``: a process group over a torchcomms communicator.

torchcomms is PyTorch's separate communications library. Upstream's tests of it build a bare
process group whose backend is a torchcomms communicator, registered in c10d's world under a
name of the test's choosing (so ``symm_mem.rendezvous(..., group=name)`` finds it). Where
torchcomms is not installed, calling this skips the test, saying so.

Example::

    group = setup_torchcomms_pg("nccl", self.rank, self.world_size, torch.device("cuda", self.rank),
                                self.file_name, "tc_group")
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import unittest
from typing import Any

from .._torch_private import torchcomms_process_group

__all__ = ["setup_torchcomms_pg", "TORCHCOMMS_MISSING", "torchcomms_backends_built", "TORCHCOMM_HAS_GLOO",
           "TORCHCOMM_HAS_XCCL", "TORCHCOMM_HAS_NCCL", "TORCHCOMM_HAS_RCCL", "TORCHCOMM_HAS_NCCLX",
           "TORCHCOMM_HAS_RCCLX"]

TORCHCOMMS_MISSING = "setup_torchcomms_pg needs torchcomms, which is not installed (pip install torchcomms)"


def _torchcomms() -> Any:
    try:
        return importlib.import_module("torchcomms")
    except ImportError:
        raise unittest.SkipTest(TORCHCOMMS_MISSING) from None


def torchcomms_backends_built() -> frozenset[str]:
    """The torchcomms backends built into the installed torchcomms (``"gloo"``, ``"nccl"``,
    ``"ncclx"``, ``"rccl"``, ``"rcclx"``, ``"xccl"``); empty when torchcomms is not installed."""
    if importlib.util.find_spec("torchcomms") is None:
        return frozenset()
    torchcomms = importlib.import_module("torchcomms")
    names = ("gloo", "xccl", "nccl", "rccl", "ncclx", "rcclx")
    return frozenset(name for name in names if torchcomms.is_backend_built(name))


# Whether torchcomms is installed with each backend built, read once at import, as upstream's flags.
_BUILT = torchcomms_backends_built()
TORCHCOMM_HAS_GLOO: bool = "gloo" in _BUILT
TORCHCOMM_HAS_XCCL: bool = "xccl" in _BUILT
TORCHCOMM_HAS_NCCL: bool = "nccl" in _BUILT
TORCHCOMM_HAS_RCCL: bool = "rccl" in _BUILT
TORCHCOMM_HAS_NCCLX: bool = "ncclx" in _BUILT
TORCHCOMM_HAS_RCCLX: bool = "rcclx" in _BUILT


def setup_torchcomms_pg(backend: str, rank: int, world_size: int, device: Any, store_path: str,
                        group_name: str) -> Any:
    """A process group of ``world_size`` ranks (this one ``rank``) whose backend is a torchcomms
    communicator of ``backend`` (``"nccl"``, ``"ncclx"``...) on ``device``, meeting in a
    ``FileStore`` at ``store_path``, named ``group_name`` in c10d's world.

    ``group_name`` and ``store_path`` must be new in this process (c10d and the store refuse a
    name twice). Raises ``unittest.SkipTest`` when torchcomms is not installed.
    """
    torchcomms = _torchcomms()
    import torch.distributed as dist

    file_store = dist.FileStore(store_path, world_size)
    # torchcomms reads this rank's place in the world from the environment.
    os.environ["TORCHCOMM_RANK"] = str(rank)
    os.environ["TORCHCOMM_SIZE"] = str(world_size)
    comm = torchcomms.new_comm(backend, device, name=f"{group_name}_comm",
                               store=dist.PrefixStore(f"{group_name}_tc/", file_store),
                               hints={"persistent_store": "true"})
    return torchcomms_process_group(comm, dist.PrefixStore(f"{group_name}_pg/", file_store), file_store,
                                    group_name, backend, world_size)
