"""``FSDPTestMultiThread``: FSDP tests whose ranks are threads of the test's process.

Example::

    class TestShardOnThreads(FSDPTestMultiThread):   # 2 rank threads on CPU (threaded backend)
        def test_shard(self):
            model = MLP(8)
            fully_shard(model)                         # on the default threaded group
            self.assertIsInstance(model.in_proj.weight, DTensor)

Cheaper than ``FSDPTest`` (no process per rank), but the ranks share one process: one RNG,
one set of module globals, one Dynamo cache (reset by every rank before and after its test).
"""

from __future__ import annotations

from ... import devices
from ..distributed_bases.subtests import SubtestsMixin
from ..dynamo_bases.dynamo_case import reset_dynamo
from ..threads.threaded_test_case import MultiThreadedTestCase

__all__ = ["FSDPTestMultiThread", "fsdp_thread_world_size", "CPU_THREAD_WORLD_SIZE"]

__unittest = True

CPU_THREAD_WORLD_SIZE = 2  # rank threads on a CPU-only machine; enough to shard anything


def fsdp_thread_world_size() -> int:
    """One rank thread per accelerator device; 2 on a CPU-only machine.

    Upstream uses the device count, which is 1 on CPU: nothing would be sharded there.
    """
    if devices.accelerator_type() is None:
        return CPU_THREAD_WORLD_SIZE
    return devices.device_count()


class FSDPTestMultiThread(SubtestsMixin, MultiThreadedTestCase):
    """A ``MultiThreadedTestCase`` for ``fully_shard`` tests: each rank thread resets Dynamo
    before and after the test method and has ``run_subtests`` (a failing combination is named).

    ``world_size`` is :func:`fsdp_thread_world_size` unless the class sets its own (a class
    attribute or a property). Rank threads start when the test method runs, after skips are
    decided; ``torch.distributed`` in a rank thread acts as that rank of the default
    ``threaded`` group, so ``fully_shard(model)`` shards over the rank threads.
    """

    @property
    def world_size(self) -> int:  # type: ignore[override]  # a property over the base's attribute
        return fsdp_thread_world_size()

    def perThreadSetUp(self) -> None:
        super().perThreadSetUp()
        reset_dynamo()

    def perThreadTearDown(self) -> None:
        reset_dynamo()
        super().perThreadTearDown()
