"""``DTensorTestBase``: ranks that build device meshes, with the group made by ``with_comms``.

Example::

    class TestShard(DTensorTestBase):
        @with_comms
        def test_shard(self):
            mesh = self.build_device_mesh()          # 1-D mesh over world_size ranks
            dt = distribute_tensor(torch.arange(8.0), mesh, [Shard(0)])
            self.assertEqual(dt.to_local(), torch.arange(8.0).chunk(4)[self.rank])

``device_type`` and ``backend`` come from the device facts: the accelerator and its backend
when there is a device for every rank, else ``cpu`` with gloo.
"""

from __future__ import annotations

import unittest
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor

from ... import devices
from .._torch_private import tree_flatten, tree_unflatten
from ..distributed_bases.subtests import SubtestsMixin
from ..fresh.multiprocess_test_case import MultiProcessTestCase
from ..process_groups.rendezvous import rendezvous_init_method
from ..process_groups.teardown import destroy_process_groups
from ..skips.distributed_skips import ACCELERATOR_DIST_BACKENDS
from ..skips.skip_checks import skip_when
from ..skips.skip_codes import TEST_SKIPS
from ..worlds.rank_facts import rank_device_index
from .converter import DTensorConverter
from .dtensor_facts import NUM_DEVICES, mesh_device_type

__all__ = ["DTensorTestMixin", "DTensorTestBase", "init_dtensor_group", "skip_unless_torch_gpu"]

__unittest = True

# Backends that need one accelerator device per rank (ncclx: Meta's NCCL variant).
_ACCELERATOR_BACKENDS = (*ACCELERATOR_DIST_BACKENDS, "ncclx")
_KNOWN_BACKENDS = ("gloo", "mpi", "ucc", "fake", *_ACCELERATOR_BACKENDS)


def _backend_names(backend: str) -> list[str]:
    """The backend names in ``"gloo"`` or ``"cpu:gloo,cuda:nccl"``; ValueError if unknown."""
    names = [part.split(":")[-1].strip() for part in backend.split(",")]
    unknown = [name for name in names if name not in _KNOWN_BACKENDS]
    if unknown:
        raise ValueError(f"backend {backend!r} not supported: expected one of "
                         f"{', '.join(_KNOWN_BACKENDS)}, or a 'device:backend,...' list of them")
    return names


def init_dtensor_group(test: Any, eager_init: bool = False, backend: str | None = None) -> None:
    """Create this rank's default group for a DTensor test on ``test.device_type``.

    An accelerator backend selects the rank's device first (with ``eager_init`` the group is
    bound to it); it skips the test when the machine has fewer devices than ranks.
    """
    backend = backend or test.backend
    names = _backend_names(backend)
    device_id = None
    if any(name in _ACCELERATOR_BACKENDS for name in names):
        if devices.device_count() < test.world_size:
            raise unittest.SkipTest(TEST_SKIPS[f"multi-gpu-{test.world_size}"].message)
        device = devices.select_rank_device(rank_device_index(test.rank))
        device_id = device if eager_init else None
    dist.init_process_group(backend=backend, init_method=rendezvous_init_method(),
                            rank=test.rank, world_size=test.world_size, device_id=device_id)


class DTensorTestMixin(SubtestsMixin):
    """What DTensor tests call on ``self``: the mesh, the device type and op checks; by
    default they run on :data:`NUM_DEVICES` ranks."""

    world_size: int = NUM_DEVICES
    rank: int
    assertEqual: Callable[..., None]

    @property
    def is_local_tensor_enabled(self) -> bool:
        """Whether the ranks are simulated by LocalTensor in one process (False here)."""
        return False

    @property
    def device_type(self) -> str:
        """The accelerator type when it has a device per rank, else ``"cpu"``."""
        return mesh_device_type(self.world_size)

    @property
    def backend(self) -> str:
        """The default process-group backend of ``device_type``."""
        return devices.default_backend(self.device_type)

    @property
    def device(self) -> str:
        """This rank's device on ``device_type``: ``"cpu"``, or ``"<type>:<index>"`` (the
        rank; under a launcher, the local rank)."""
        return "cpu" if self.device_type == "cpu" else f"{self.device_type}:{rank_device_index(self.rank)}"

    def build_device_mesh(self) -> DeviceMesh:
        """A 1-D mesh of ``world_size`` ranks on ``device_type``."""
        return init_device_mesh(self.device_type, (self.world_size,))

    def init_manual_seed_for_rank(self) -> None:
        """Seed torch with this rank's number (different data on each rank)."""
        torch.manual_seed(self.rank)

    def _test_op_on_dtensor(self, op_call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Check ``op_call`` on the DTensors given against ``op_call`` on their full tensors."""
        flat, spec = tree_flatten(args)
        full_args = tree_unflatten(
            [a.full_tensor().detach().clone() if isinstance(a, DTensor) else a for a in flat], spec)
        full_kwargs = {k: v.full_tensor() if isinstance(v, DTensor) else v for k, v in kwargs.items()}
        expected, _ = tree_flatten(op_call(*full_args, **full_kwargs))
        actual, _ = tree_flatten(op_call(*args, **kwargs))
        self.assertEqual(expected, [dt.full_tensor() for dt in actual])

    def _test_op(self, mesh: DeviceMesh, op_call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Check ``op_call`` on every sharding of its tensor arguments against the plain op."""
        expected = op_call(*args, **kwargs)
        converter = DTensorConverter(mesh, args, kwargs)
        for dist_args, dist_kwargs in converter:
            self.assertEqual(converter.successful(), True)
            self.assertEqual(op_call(*dist_args, **dist_kwargs).full_tensor(), expected)


class DTensorTestBase(DTensorTestMixin, MultiProcessTestCase):
    """Each test on ``world_size`` ranks (default :data:`NUM_DEVICES`, 4 on CPU); ``with_comms``
    makes the default group around the test with :meth:`init_pg` and :meth:`destroy_pg`."""

    def init_pg(self, eager_init: bool = False, backend: str | None = None) -> None:
        """Create the default group (see :func:`init_dtensor_group`)."""
        init_dtensor_group(self, eager_init, backend)

    def destroy_pg(self, device_id: int | None = None) -> None:
        """Wait for every rank, then destroy the default group (and its subgroups)."""
        if not dist.is_initialized():
            return
        if self.device_type == "cpu":
            dist.barrier()
        else:
            dist.barrier(device_ids=[self.rank if device_id is None else device_id])
        destroy_process_groups()


def _needs_gpu(test: Any) -> str | None:
    count = devices.device_count()  # 0 without an accelerator
    if count >= NUM_DEVICES:
        return None
    return f"needs a GPU: {NUM_DEVICES} accelerator devices, found {count}"


skip_unless_torch_gpu = skip_when(_needs_gpu)
skip_unless_torch_gpu.__doc__ = "Skip the test unless torch has an accelerator device per rank."
