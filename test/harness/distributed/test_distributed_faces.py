"""Self-tests of the faces at upstream's ``torch.testing._internal.distributed`` paths:
``distributed.fake_pg.FakeStore`` and ``distributed.checkpoint_utils`` (``with_temp_dir``,
``Rot13Example``, ``get_test_extension_registry``)."""

import io
import os
import subprocess
import sys
import unittest

import torch
import torch.distributed as dist

from torch_testing_ext._engine.fresh import fork_server
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed.checkpoint_utils import Rot13Example, get_test_extension_registry, with_temp_dir
from torch_testing_ext.distributed.fake_pg import FakeStore

from fixtures import distributed_ranks, rank_hooks
from fixtures.runs import checkout_env


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


class TestCheckpointUtilsImport(TestCase):
    def test_the_face_loads_the_checkpoint_extensions_when_first_asked(self):
        code = ("import sys\nfrom torch_testing_ext.distributed import checkpoint_utils\n"
                "before = 'torch.distributed.checkpoint' in sys.modules\n"
                "checkpoint_utils.Rot13Example\n"
                "print(before, 'torch.distributed.checkpoint' in sys.modules)")
        result = subprocess.run([sys.executable, "-c", code], env=checkout_env(), capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.stdout.split(), ["False", "True"], result.stderr[-2000:])


class TestRot13Example(TestCase):
    """The round trip through a checkpoint writer and reader is the contract test of
    ``_torch_private.checkpoint_extension_api``; here, the transform itself."""

    def test_swaps_letter_case_both_ways(self):
        stored = io.BytesIO()
        writer = Rot13Example().transform_to(stored)
        given = bytearray(b"Hello, World: 42 \xff")
        self.assertEqual(writer.write(given), len(given))
        writer.close()
        self.assertEqual(given, bytearray(b"Hello, World: 42 \xff"), "the caller's buffer is left alone")
        self.assertEqual(stored.getvalue(), b"hELLO, wORLD: 42 \xff")
        reader = Rot13Example().transform_from(io.BytesIO(stored.getvalue()))
        self.assertEqual(reader.read(), b"Hello, World: 42 \xff")

    def test_reader_seeks_and_reads_in_parts(self):
        reader = Rot13Example().transform_from(io.BytesIO(b"abcDEF"))
        self.assertTrue(reader.seekable())
        self.assertEqual(reader.read(2), b"AB")
        self.assertEqual(reader.tell(), 2)
        reader.seek(4)
        self.assertEqual(reader.read(), b"ef")
        self.assertEqual(reader.read(), b"")

    def test_descriptor_and_registry(self):
        extension = Rot13Example()
        self.assertEqual((Rot13Example.registry_name(), extension.get_descriptor()), ("stream.rot13", "stream.rot13/1"))
        self.assertIsInstance(Rot13Example.from_descriptor("1.2"), Rot13Example)
        with self.assertRaisesRegex(ValueError, "Unknown extension"):
            Rot13Example.from_descriptor("2")
        [found] = get_test_extension_registry().from_descriptor_list(["stream.rot13/1"])
        self.assertIsInstance(found, Rot13Example)
        self.assertIsNot(get_test_extension_registry(), get_test_extension_registry())
