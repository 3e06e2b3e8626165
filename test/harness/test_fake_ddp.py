"""Self-tests of FakeDDP, including the private DDP/Dynamo contract it relies on."""

import inspect

import torch
import torch._dynamo
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from torch_testing_ext.fake_ddp import FakeDDP, FakeDDPTestCase, active_ddp_module


class ThreeLayers(nn.Module):
    """Three 512x512 layers: 1 MiB of weights each, so 1 MB buckets hold one layer each."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(512, 512)
        self.second = nn.Linear(512, 512)
        self.third = nn.Linear(512, 512)

    def forward(self, x):
        return self.third(torch.relu(self.second(torch.relu(self.first(x)))))


class CountingBackend:
    def __init__(self):
        self.calls = 0

    def compile_fn(self, gm, example_inputs):
        self.calls += 1
        return gm


class TestDDPDynamoContract(FakeDDPTestCase):
    """Fails loudly when a torch release changes how Dynamo finds the active DDP module."""

    def test_active_module_hook_exists(self):
        self.assertTrue(hasattr(DistributedDataParallel, "_active_ddp_module"),
                        "torch changed DDP: DistributedDataParallel._active_ddp_module is gone; "
                        "update torch_testing_ext.fake_ddp")
        self.assertTrue(callable(getattr(DistributedDataParallel, "_get_active_ddp_module", None)))
        marker = nn.Linear(1, 1)
        with active_ddp_module(marker):
            self.assertIs(DistributedDataParallel._get_active_ddp_module(), marker)
        self.assertIsNone(DistributedDataParallel._get_active_ddp_module())

    def test_dynamo_reads_the_hook_and_the_bucket_cap(self):
        source = inspect.getsource(torch._dynamo.convert_frame)
        self.assertIn("_get_active_ddp_module()", source,
                      "Dynamo no longer asks DDP for its active module; update torch_testing_ext.fake_ddp")
        self.assertIn("bucket_bytes_cap", source)


class TestFakeDDP(FakeDDPTestCase):
    def test_three_buckets_give_three_subgraphs(self):
        backend = CountingBackend()
        model = FakeDDP(ThreeLayers(), bucket_cap_mb=1)
        x = torch.randn(4, 512)
        expected = model.module(x)
        self.assertEqual(torch.compile(model, backend=backend.compile_fn)(x), expected)
        self.assertEqual(backend.calls, 3)

    def test_without_fake_ddp_there_is_one_graph(self):
        backend = CountingBackend()
        torch.compile(ThreeLayers(), backend=backend.compile_fn)(torch.randn(4, 512))
        self.assertEqual(backend.calls, 1)

    def test_bucket_bytes_cap(self):
        self.assertEqual(FakeDDP(nn.Linear(1, 1)).bucket_bytes_cap, 25 * 1024 * 1024)
        self.assertEqual(FakeDDP(nn.Linear(1, 1), bucket_cap_mb=1.5).bucket_bytes_cap, int(1.5 * 1024 * 1024))

    def test_forward_registers_itself_only_while_running(self):
        seen = []

        class Probe(nn.Module):
            def forward(self, x):
                seen.append(DistributedDataParallel._get_active_ddp_module())
                return x

        fake = FakeDDP(Probe())
        fake(torch.ones(1))
        self.assertEqual(seen, [fake])
        self.assertIsNone(DistributedDataParallel._get_active_ddp_module())

    def test_optimize_ddp_is_on(self):
        self.assertTrue(torch._dynamo.config.optimize_ddp)
