"""``DTensorContinuousTestBase``: DTensor tests on ranks kept for the class.

The ranks and their default group are made once per class (``MultiProcContinuousTest``);
each test sees what a DTensor test sees (``self.rank``, ``self.world_size``, a live default
group, ``build_device_mesh()``, ``device_type`` and ``device`` from the device facts), and
the subgroups its meshes make are destroyed after it. Without an accelerator for every rank
the ranks run on CPU with gloo, as ``DTensorTestBase``'s do::

    class TestAdd(DTensorContinuousTestBase):
        def test_add(self):
            mesh = self.build_device_mesh()
            x = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)])
            self.assertEqual((x + x).full_tensor(), torch.full((4, 4), 2.0))
"""

from __future__ import annotations

from ... import devices
from ..kept.continuous_test_case import MultiProcContinuousTest
from ..kept.subgroup_cleanup import GroupsPerTest
from .dtensor_facts import NUM_DEVICES, mesh_device_type
from .dtensor_test_base import DTensorTestMixin

__all__ = ["DTensorContinuousTestBase"]

__unittest = True


class DTensorContinuousTestBase(  # type: ignore[misc]  # device_type: the mixin's property wins the classmethod
        GroupsPerTest, DTensorTestMixin, MultiProcContinuousTest):
    """DTensor tests sharing ``world_size`` kept ranks (default :data:`NUM_DEVICES`)."""

    world_size: int = NUM_DEVICES

    @classmethod
    def backend_str(cls) -> str:
        """The default backend of the ranks' device type (gloo when they run on CPU)."""
        return devices.default_backend(mesh_device_type(cls.world_size))
