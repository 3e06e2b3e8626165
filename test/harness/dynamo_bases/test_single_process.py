"""Self-tests of DynamoDistributedSingleProcTestCase: a real world-size-1 group per class."""

import unittest

import torch.distributed as dist

from torch_testing_ext import devices
from torch_testing_ext.common_distributed import DynamoDistributedSingleProcTestCase
from torch_testing_ext.common_utils import TestCase

from fixtures import inprocess_cases


class TestSingleProcessGroup(TestCase):
    def test_group_lives_exactly_as_long_as_the_class(self):
        self.assertFalse(dist.is_initialized())
        result = unittest.defaultTestLoader.loadTestsFromTestCase(inprocess_cases.Probe).run(
            unittest.TestResult())
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(inprocess_cases.Probe.observed, {
            "initialized": True, "world_size": 1, "rank": 0,
            "backend": devices.default_backend(), "all_reduce": [3.0, 3.0],
        })
        self.assertFalse(dist.is_initialized(), "the group outlived its class")

    def test_class_attributes(self):
        self.assertEqual(inprocess_cases.Probe.rank, 0)
        self.assertEqual(inprocess_cases.Probe.world_size, 1)
        inprocess_cases.Probe.setUpClass()
        try:
            self.assertEqual(inprocess_cases.Probe.device, devices.rank_device(0))
            self.assertEqual(inprocess_cases.Probe.device_ids, None if devices.accelerator_type() is None else [0])
        finally:
            inprocess_cases.Probe.tearDownClass()
        self.assertFalse(dist.is_initialized())

    def test_dynamo_is_reset_around_each_test(self):
        class Compiles(DynamoDistributedSingleProcTestCase):
            def test_a(self):
                import torch._dynamo.utils

                self.assertEqual(sum(torch._dynamo.utils.counters["frames"].values()), 0)
                torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
                self.assertGreater(sum(torch._dynamo.utils.counters["frames"].values()), 0)

            test_b = test_a

        result = unittest.defaultTestLoader.loadTestsFromTestCase(Compiles).run(
            unittest.TestResult())
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
