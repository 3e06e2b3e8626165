"""Self-tests of the faces at upstream's ``torch.testing._internal.distributed`` paths:
``distributed.fake_pg.FakeStore`` and ``distributed.checkpoint_utils.with_temp_dir``."""

import os
import unittest

import torch
import torch.distributed as dist

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.distributed.checkpoint_utils import with_temp_dir
from torch_testing_ext.distributed.fake_pg import FakeStore
from torch_testing_ext.fresh_ranks import fork_server

from fixtures import distributed_ranks, rank_hooks


class TestFakeStore(TestCase):
    """That importing the face alone registers the backend needs a fresh interpreter: test_imports.py."""

    def test_one_process_acts_as_any_rank(self):
        dist.init_process_group("fake", store=FakeStore(), rank=3, world_size=8)
        try:
            self.assertEqual((dist.get_rank(), dist.get_world_size()), (3, 8))
            tensor = torch.full((2,), 5.0)
            dist.all_reduce(tensor)  # communicates nothing
            self.assertEqual(tensor, [5.0, 5.0])
            dist.barrier()
        finally:
            dist.destroy_process_group()


class TestWithTempDir(TestCase):
    def test_without_a_group(self):
        seen = []

        class Cases(TestCase):
            @with_temp_dir
            def test_x(self):
                seen.append(self.temp_dir)
                self.assertTrue(os.path.isdir(self.temp_dir))
                with open(os.path.join(self.temp_dir, "f"), "w") as f:
                    f.write("x")

        result = unittest.TestResult()
        Cases("test_x").run(result)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(len(seen), 1)
        self.assertFalse(os.path.exists(seen[0]))

    def test_removed_after_a_failure(self):
        seen = []

        @with_temp_dir
        def body(test):
            seen.append(test.temp_dir)
            raise ValueError("boom")

        with self.assertRaises(ValueError):
            body(self)
        self.assertFalse(os.path.exists(seen[0]))

    def test_with_a_group_rank_0_chooses(self):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            @with_temp_dir
            def body(test):
                self.assertTrue(os.path.isdir(test.temp_dir))
                return test.temp_dir

            chosen = body(self)
        finally:
            dist.destroy_process_group()
        self.assertFalse(os.path.exists(chosen))

    def test_must_decorate_a_function(self):
        with self.assertRaises(TypeError):
            with_temp_dir()

    def test_ranks_share_one_directory_inside_the_tests_own(self):
        result = unittest.TestResult()
        distributed_ranks.SharedTempDir("test_ranks_share_it").run(result)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        reported = rank_hooks.take_logs("test_ranks_share_it")
        self.assertEqual(reported[0], reported[1])
        shared = reported[0][0]
        self.assertTrue(shared.startswith(fork_server.run_directory()), shared)
        self.assertFalse(os.path.exists(shared), "the harness removes it with the test's directory")

    def test_ranks_without_a_group_each_have_their_own(self):
        # Upstream gives each rank its own directory when no default group exists yet: ranks that
        # save and load their own files must not meet in one.
        result = unittest.TestResult()
        distributed_ranks.SharedTempDir("test_each_rank_its_own_without_a_group").run(result)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        reported = rank_hooks.take_logs("test_each_rank_its_own_without_a_group")
        self.assertNotEqual(reported[0], reported[1])
        for [directory] in reported.values():
            self.assertTrue(directory.startswith(fork_server.run_directory()), directory)
            self.assertFalse(os.path.exists(directory), "the harness removes it with the test's directory")


if __name__ == "__main__":
    run_tests()
