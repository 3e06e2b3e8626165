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
import os
import unittest
from typing import Any

from .._torch_private import torchcomms_process_group

__all__ = ["setup_torchcomms_pg", "TORCHCOMMS_MISSING"]

TORCHCOMMS_MISSING = "setup_torchcomms_pg needs torchcomms, which is not installed (pip install torchcomms)"


def _torchcomms() -> Any:
    try:
        return importlib.import_module("torchcomms")
    except ImportError:
        raise unittest.SkipTest(TORCHCOMMS_MISSING) from None


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
