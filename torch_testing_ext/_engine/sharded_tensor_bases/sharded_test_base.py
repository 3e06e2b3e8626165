"""``ShardedTensorTestBase``: ranks for ``torch.distributed._shard`` tests, with the default
group (and RPC when asked) made by ``with_comms`` or by the test itself.

Example::

    class TestChunks(ShardedTensorTestBase):
        @with_comms(init_rpc=False, backend="gloo")
        def test_rows(self):
            spec = ChunkShardingSpec(dim=0, placements=[f"rank:{r}/cpu" for r in range(4)])
            st = sharded_tensor.ones(spec, 8, 2)
            self.assertEqual(st.local_tensor(), torch.ones(2, 2))

The group and RPC meet through fresh files in the test's directory, never ``file_name``
(which stays free for the test's own use) and never a fixed port.
"""

from __future__ import annotations

import unittest
from typing import Any

import torch.distributed as dist
from torch.distributed import rpc

from ... import devices
from .._torch_private import tensorpipe_options
from ..fresh.multiprocess_test_case import MultiProcessTestCase
from ..process_groups.rendezvous import rendezvous_init_method
from ..process_groups.tcp_store import TRANSPORTS_WITHOUT_INFINIBAND
from ..process_groups.teardown import destroy_process_groups
from ..skips.distributed_skips import ACCELERATOR_DIST_BACKENDS
from ..worlds.rank_facts import rank_device_index

__all__ = ["ShardedTensorTestBase", "TEST_GPU_NUM", "KNOWN_BACKENDS", "ACCELERATOR_BACKENDS",
           "accelerator_backend_shortfall", "abandon_comms"]

__unittest = True

# The rank count the sharded-tensor tests (and their 4-placement specs) are written for.
TEST_GPU_NUM = 4

ACCELERATOR_BACKENDS = ACCELERATOR_DIST_BACKENDS
KNOWN_BACKENDS = ("gloo", "mpi", *ACCELERATOR_BACKENDS)


def accelerator_backend_shortfall(backend: str, world_size: int) -> str | None:
    """Why ``backend`` cannot serve ``world_size`` ranks here, or None when it can (or needs
    no accelerator): an accelerator backend needs the machine's own accelerator, whose
    default backend it is, with a device for every rank."""
    if backend not in ACCELERATOR_BACKENDS:
        return None
    accelerator = devices.accelerator_type()
    if accelerator is None:
        return (f"backend {backend!r} needs {world_size} accelerator devices; this machine has "
                "none (a CPU-only test names backend='gloo')")
    if devices.default_backend(accelerator) != backend:
        return f"backend {backend!r} is not the {accelerator} backend of this machine"
    if devices.device_count() < world_size:
        return f"Need at least {world_size} {accelerator.upper()} devices for backend {backend!r}, " \
               f"found {devices.device_count()}"
    return None


def abandon_comms() -> None:
    """Leave RPC and destroy the groups without waiting for the other ranks (after a failure,
    when they may never get to a barrier)."""
    if rpc.is_available() and _rpc_running():
        rpc.shutdown(graceful=False)
    destroy_process_groups()


def _rpc_running() -> bool:
    try:
        rpc.get_worker_info()
    except RuntimeError:  # "RPC has not been initialized"
        return False
    return True


class ShardedTensorTestBase(MultiProcessTestCase):
    """Each test on ``world_size`` ranks (default :data:`TEST_GPU_NUM`, 4; a subclass may
    override it as a property or class attribute)."""

    @property
    def world_size(self) -> int:  # type: ignore[override]  # upstream's property over an attribute
        return TEST_GPU_NUM

    def init_pg(self, backend: str = "nccl") -> None:
        """Create the default group on ``backend`` (upstream's default: nccl).

        An accelerator backend selects the rank's device; on a machine without a device of
        its kind for every rank the test skips (``unittest.SkipTest`` naming the shortfall).
        """
        if backend not in KNOWN_BACKENDS:
            raise ValueError(f"backend {backend!r} not supported: expected one of {', '.join(KNOWN_BACKENDS)}")
        shortfall = accelerator_backend_shortfall(backend, self.world_size)
        if shortfall:
            raise unittest.SkipTest(shortfall)
        dist.init_process_group(backend=backend, init_method=rendezvous_init_method(),
                                rank=self.rank, world_size=self.world_size)
        if backend in ACCELERATOR_BACKENDS:
            devices.select_rank_device(rank_device_index(self.rank))

    def init_rpc(self) -> None:
        """Start RPC as ``worker<rank>``. With an accelerator device for every rank, tensors
        sent between ranks move between their devices (upstream's device maps); on CPU none."""
        options = tensorpipe_options(list(TRANSPORTS_WITHOUT_INFINIBAND), init_method=rendezvous_init_method())
        if devices.accelerator_type() is not None and devices.device_count() >= self.world_size:
            mine = rank_device_index(self.rank)
            for peer in range(self.world_size):
                options.set_device_map(f"worker{peer}", {peer: mine, mine: peer})
        rpc.init_rpc(name=f"worker{self.rank}", rank=self.rank, world_size=self.world_size,
                     rpc_backend_options=options)

    def init_comms(self, init_rpc: bool = True, backend: str = "nccl") -> None:
        """RPC (unless ``init_rpc=False``), then the default group on ``backend``."""
        if init_rpc:
            self.init_rpc()
        self.init_pg(backend=backend)

    def destroy_comms(self, destroy_rpc: bool = True) -> None:
        """Wait for every rank, then shut RPC down (with ``destroy_rpc``) and destroy the
        default group and its subgroups."""
        dist.barrier()
        if destroy_rpc:
            rpc.shutdown()
        destroy_process_groups()

    def assert_sharded_tensor_equal(self, st1: Any, st2: Any) -> None:
        """Assert two sharded tensors agree on this rank: local shards (tensors and metadata,
        in order), global metadata, sharding spec and how many shards are remote."""
        shards1, shards2 = st1.local_shards(), st2.local_shards()
        self.assertEqual(len(shards1), len(shards2), "number of local shards")
        for index, (one, two) in enumerate(zip(shards1, shards2, strict=True)):
            self.assertEqual(one.tensor, two.tensor, f"local shard {index}: tensor")
            self.assertEqual(one.metadata, two.metadata, f"local shard {index}: metadata")
        self.assertEqual(st1.metadata(), st2.metadata(), "metadata")
        self.assertEqual(st1.sharding_spec(), st2.sharding_spec(), "sharding spec")
        self.assertEqual(len(st1.remote_shards()), len(st2.remote_shards()), "number of remote shards")
