"""Self-tests of the kept-rank DTensor and FSDP bases, written as their users write tests.

Each class's tests run on one world: its first test notes each rank's pid in a directory
the test process made, and its last test checks that it runs in the same processes (it skips,
visibly, when the first did not run); the DTensor class also checks that what an earlier
test's meshes made is gone.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

from torch_testing_ext._torch_private import live_process_groups
from torch_testing_ext.common_fsdp import FSDPTestContinuous
from torch_testing_ext.common_utils import run_tests
from torch_testing_ext.distributed._tensor.common_dtensor import DTensorContinuousTestBase

from fixtures.fsdp_shared_checks import RunSubtestsChecks, TrainParityChecks

NOTES_ENV = "TTE_KEPT_RANK_NOTES"


class KeptRanksChecks:
    """test_0 notes each rank's pid; test_z, the class's last test, runs in the same ones."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.notes = tempfile.TemporaryDirectory(prefix="tte-kept-ranks-")
        os.environ[NOTES_ENV] = cls.notes.name  # set before the world starts: its ranks see it

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()  # the world closes first
        os.environ.pop(NOTES_ENV, None)
        cls.notes.cleanup()

    def _note(self):
        return os.path.join(os.environ[NOTES_ENV], f"rank{self.rank}")

    def test_0_notes_its_ranks(self):
        with open(self._note(), "w") as note:
            note.write(str(os.getpid()))

    def test_z_runs_on_the_ranks_of_the_first_test(self):
        if not os.path.exists(self._note()):
            self.skipTest("test_0_notes_its_ranks did not run in this run")
        with open(self._note()) as note:
            self.assertEqual(os.getpid(), int(note.read()))


class TestDTensorContinuous(KeptRanksChecks, DTensorContinuousTestBase):
    world_size = 4

    def test_1_shard_replicate_partial(self):
        mesh = self.build_device_mesh()
        full = torch.arange(16.0, device=self.device_type).reshape(4, 4)
        sharded = distribute_tensor(full, mesh, [Shard(0)])
        self.assertEqual(sharded.to_local(), full[self.rank:self.rank + 1])
        replicated = sharded.redistribute(mesh, [Replicate()])
        self.assertEqual(replicated.to_local(), full)
        # Each rank holds a quarter of the value: the partial sum is the full tensor.
        partial = DTensor.from_local(full / self.world_size, mesh, [Partial()])
        self.assertEqual(partial.full_tensor(), full)
        self.assertEqual(partial.redistribute(mesh, [Shard(0)]).to_local(), full[self.rank:self.rank + 1])

    def test_2_a_2d_mesh_makes_subgroups(self):
        mesh = init_device_mesh(self.device_type, (2, self.world_size // 2), mesh_dim_names=("dp", "tp"))
        self.assertGreater(len(live_process_groups()), 1)
        x = distribute_tensor(torch.ones(4, 4, device=self.device_type), mesh, [Shard(0), Shard(1)])
        self.assertEqual(x.to_local().shape, (2, 2))

    def test_3_only_the_default_group_is_left(self):
        self.assertEqual(live_process_groups(), [dist.group.WORLD])
        self.assertIs(dist.group.WORLD, type(self).pg)


class TestFSDPContinuous(KeptRanksChecks, RunSubtestsChecks, TrainParityChecks, FSDPTestContinuous):
    def test_the_class_group_is_the_process_group(self):
        self.assertIs(self.process_group, dist.group.WORLD)
        self.assertEqual(self.process_group.size(), self.world_size)
        self.assertEqual(dist.get_backend(), self.backend_str())


if __name__ == "__main__":
    run_tests()
