"""DTensor test bases whose ranks are simulated in the test's own process by LocalTensor.

Under ``LocalTensorMode`` one process holds every rank's shard of each tensor, and ``self.rank``
is a symbolic int with one value per rank; the group is a ``fake`` one of ``world_size``.
``create_local_tensor_test_class`` (in ``local_tensor_variants``) derives such a class from an
ordinary DTensor test class. LocalTensor is private to torch (``torch.distributed._local_tensor``):
where the installed torch lacks it, every test of these classes skips, saying so.
"""

from __future__ import annotations

import contextlib
import unittest
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from .._torch_private import local_tensor_api, reset_dtensor_rng_tracker, set_record_function_enabled
from ..process_groups.fake_store import FakeStore
from ..process_groups.teardown import destroy_process_groups
from ..testcase.tensor_testcase import TestCase
from .dtensor_continuous import DTensorContinuousTestBase
from .dtensor_test_base import DTensorTestBase
from .group_per_rank import DTensorOpTestBase

__all__ = ["HAS_LOCAL_TENSOR", "LocalDTensorTestBase", "LocalDTensorOpTestBase",
           "LocalDTensorContinuousTestBase"]

__unittest = True

HAS_LOCAL_TENSOR: bool = local_tensor_api() is not None
_SKIP_REASON = f"LocalTensor is not in torch {torch.__version__} (no torch.distributed._local_tensor)"


def _local_tensor_mode_off() -> contextlib.AbstractContextManager[Any]:
    """A context that suspends an active ``LocalTensorMode`` (a no-op without one)."""
    api = local_tensor_api()
    return api.maybe_disable_local_tensor_mode() if api else contextlib.nullcontext()


class _LocalRanks:
    """All ranks in this process: no rank process starts, the group is ``fake``."""

    world_size: int
    _testMethodName: str

    def __init__(self, methodName: str = "runTest") -> None:
        # Not the rank-process bases' __init__, which would send the method to rank processes.
        TestCase.__init__(self, methodName)  # type: ignore[arg-type]  # a mixin of TestCases

    @property
    def is_local_tensor_enabled(self) -> bool:
        return True

    @property
    def rank(self) -> Any:
        """A symbolic int whose value on simulated rank ``r`` is ``r``."""
        node = local_tensor_api().LocalIntNode({r: r for r in range(self.world_size)})
        return torch.SymInt(node)

    @property
    def device(self) -> str:
        return self.device_type  # type: ignore[attr-defined]  # from the DTensor base after it

    def setUp(self) -> None:
        TestCase.setUp(self)  # type: ignore[arg-type]  # a mixin of TestCases
        if not HAS_LOCAL_TENSOR:
            raise unittest.SkipTest(_SKIP_REASON)
        set_record_function_enabled(False)

    def tearDown(self) -> None:
        reset_dtensor_rng_tracker()
        destroy_process_groups()  # a test that failed inside with_comms left its fake group
        TestCase.tearDown(self)  # type: ignore[arg-type]  # a mixin of TestCases
        set_record_function_enabled(True)

    def _get_local_tensor_mode(self) -> Any:
        """A ``LocalTensorMode`` over ranks ``0..world_size-1``."""
        return local_tensor_api().LocalTensorMode(frozenset(range(self.world_size)))

    def build_device_mesh(self) -> DeviceMesh:
        with _local_tensor_mode_off():
            return super().build_device_mesh()  # type: ignore[misc]  # from the DTensor base after it

    def init_pg(self, eager_init: bool = False, backend: str | None = None) -> None:
        """Create a ``fake`` default group of ``world_size`` (this process is rank 0)."""
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=self.world_size)

    def destroy_pg(self, device_id: int | None = None) -> None:
        destroy_process_groups()

    def init_manual_seed_for_rank(self) -> None:
        torch.manual_seed(0)  # one process: the same stream for every simulated rank


class LocalDTensorTestBase(_LocalRanks, DTensorTestBase):  # type: ignore[override]  # rank: a symbolic int
    """``DTensorTestBase`` with its ranks simulated by LocalTensor in one process."""


class LocalDTensorOpTestBase(_LocalRanks, DTensorOpTestBase):  # type: ignore[override]  # rank: a symbolic int
    """``DTensorOpTestBase`` with its ranks simulated by LocalTensor in one process."""


class LocalDTensorContinuousTestBase(  # type: ignore[misc, override]  # device_type as in its base; rank: symbolic
    _LocalRanks, DTensorContinuousTestBase):
    """``DTensorContinuousTestBase`` with its ranks simulated by LocalTensor; the fake group
    lives for the whole test (the test methods have no ``with_comms``)."""

    def setUp(self) -> None:
        super().setUp()
        self.init_pg()
