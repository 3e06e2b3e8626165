"""``DTensorOpTestBase``: DTensor tests whose ranks have the default group before the test
method runs.

Upstream runs its ranks as threads of one process; here they are fresh rank processes per
test, each with its group made before the method (the rank destroys it as it ends, once every
rank has finished: no barrier that could wait on a failed peer). Test bodies see what they see
upstream (``self.rank``, ``self.world_size``, a live default group, ``build_device_mesh()``);
``with_comms`` leaves their methods as they are::

    class TestGather(DTensorOpTestBase):
        def test_shard_to_replicate(self):
            mesh = self.build_device_mesh()
            rows = distribute_tensor(torch.arange(8.0).view(4, 2), mesh, [Shard(0)])
            whole = rows.redistribute(mesh, [Replicate()]).to_local()
            self.assertEqual(whole, torch.arange(8.0).view(4, 2))
"""

from __future__ import annotations

from typing import Any

from ..fresh.multiprocess_test_case import MultiProcessTestCase
from .dtensor_test_base import DTensorTestMixin, init_dtensor_group

__all__ = ["DTensorOpTestBase"]

__unittest = True


class DTensorOpTestBase(DTensorTestMixin, MultiProcessTestCase):
    """Op tests on ``world_size`` ranks (default ``NUM_DEVICES``) whose default group is made
    in ``setUpRank``."""

    def setUpRank(self) -> None:
        super().setUpRank()
        init_dtensor_group(self)

    def assertEqualOnRank(self, x: Any, y: Any, msg: str | None = None, *, rank: int = 0) -> None:
        """``assertEqual`` on rank ``rank`` only, as upstream's threaded base has it (its rank
        threads share one RNG; here each rank checks its own values, and only ``rank``'s count)."""
        if self.rank == rank:
            self.assertEqual(x, y, msg)

    def assertNotEqualOnRank(self, x: Any, y: Any, msg: str | None = None, *, rank: int = 0) -> None:
        """``assertNotEqual`` on rank ``rank`` only."""
        if self.rank == rank:
            self.assertNotEqual(x, y, msg)
