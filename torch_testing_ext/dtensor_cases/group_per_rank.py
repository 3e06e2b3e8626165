"""DTensor test bases whose ranks have the default group before the test method runs.

``DTensorOpTestBase`` (upstream: ranks as threads) and ``DTensorContinuousTestBase``
(upstream: rank processes kept for the whole class) both run here on fresh rank processes per
test, each with its group made before the method (the rank destroys it as it ends, once every
rank has finished: no barrier that could wait on a failed peer). Test bodies see what they see
upstream (``self.rank``, ``self.world_size``, a live default group, ``build_device_mesh()``);
``with_comms`` leaves their methods as they are::

    class TestAdd(DTensorOpTestBase):
        def test_add(self):
            mesh = self.build_device_mesh()
            x = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)])
            self.assertEqual((x + x).full_tensor(), torch.full((4, 4), 2.0))
"""

from __future__ import annotations

from .. import devices
from ..multiprocess.multiprocess_test_case import MultiProcessTestCase
from .dtensor_facts import NUM_DEVICES, mesh_device_type
from .dtensor_test_base import DTensorTestMixin, init_dtensor_group

__all__ = ["DTensorOpTestBase", "DTensorContinuousTestBase"]

__unittest = True


class _GroupPerRank(DTensorTestMixin, MultiProcessTestCase):
    """Ranks that make the default group in ``setUpRank``."""

    def setUpRank(self) -> None:
        super().setUpRank()
        init_dtensor_group(self)


class DTensorOpTestBase(_GroupPerRank):
    """Op tests on ``world_size`` ranks (default :data:`NUM_DEVICES`) with a live group."""


class DTensorContinuousTestBase(_GroupPerRank):
    """Upstream's continuous-rank DTensor base; here every test gets fresh ranks and group."""

    @classmethod
    def backend_str(cls) -> str:
        """The backend the ranks' group uses (that of the device type)."""
        world_size = cls.world_size if isinstance(cls.world_size, int) else NUM_DEVICES
        return devices.default_backend(mesh_device_type(world_size))
