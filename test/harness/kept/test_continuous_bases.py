"""Self-tests of the kept-rank DTensor and FSDP bases, written as their users write tests.

Each class's tests run on one world (TestOneWorldPerClass runs two tests of each base and
compares the ranks' pids); the DTensor class also checks that what a test's meshes made is
gone after it.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

from torch_testing_ext._engine._torch_private import live_process_groups
from torch_testing_ext.common_fsdp import FSDPTestContinuous
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed._tensor.common_dtensor import DTensorContinuousTestBase

from fixtures import kept_bases
from fixtures.fsdp_shared_checks import RunSubtestsChecks, TrainParityChecks
from fixtures.runs import assert_outcomes, run_case


class TestOneWorldPerClass(TestCase):
    """Each base runs a class's tests on the same rank processes: two tests, one world."""

    def test_each_base_runs_the_tests_of_a_class_in_the_same_processes(self):
        for cls in (kept_bases.DTensorPids, kept_bases.FSDPPids):
            with self.subTest(base=cls.__mro__[1].__name__), tempfile.TemporaryDirectory() as notes:
                os.environ[kept_bases.NOTES_ENV] = notes  # before the world starts: its ranks see it
                try:
                    first = self.pids_of(cls, "test_note_pid", notes)
                    second = self.pids_of(cls, "test_note_pid_again", notes)
                finally:
                    cls.tearDownClass()  # closes the class's world
                    os.environ.pop(kept_bases.NOTES_ENV)
                self.assertEqual(sorted(first), list(range(cls.world_size)))
                self.assertEqual(first, second)

    def pids_of(self, cls, name, notes):
        assert_outcomes(self, run_case(cls, name), passed=1)
        pids = {}
        for note in os.listdir(notes):
            with open(os.path.join(notes, note)) as f:
                pids[int(note)] = int(f.read())
            os.remove(os.path.join(notes, note))
        return pids


class TestDTensorContinuous(DTensorContinuousTestBase):
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


class TestFSDPContinuous(RunSubtestsChecks, TrainParityChecks, FSDPTestContinuous):
    def test_the_class_group_is_the_process_group(self):
        self.assertIs(self.process_group, dist.group.WORLD)
        self.assertEqual(self.process_group.size(), self.world_size)
        self.assertEqual(dist.get_backend(), self.backend_str())
