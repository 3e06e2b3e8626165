"""gloo tests: DDP in a single process, and the ``torch.distributed.nn`` autograd collectives.

The collective tests come from ``TestDistributedNNFunctions`` in the sibling module
``test_c10d_spawn`` (importable by plain name: this file's directory is on ``sys.path`` when
it runs directly, and pytest puts it there for a test directory without ``__init__.py``).
"""

import copy
import os
import tempfile

import torch
import torch.distributed as c10d
from test_c10d_spawn import TestDistributedNNFunctions, _torch_dist_nn_available
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from torch_testing_ext import devices
from torch_testing_ext.common_distributed import requires_gloo, skip_if_lt_x_gpu
from torch_testing_ext.common_utils import (
    TEST_CUDA,
    TEST_WITH_DEV_DBG_ASAN,
    TestCase,
    run_tests,
    skip_but_pass_in_sandcastle_if,
)

device_type = devices.device_type()


class DistributedDataParallelSingleProcessTest(TestCase):
    """DDP over a world-size-1 gloo group trains exactly like the module it wraps."""

    def setUp(self):
        super().setUp()
        self.rank = 0
        self.world_size = 1
        with tempfile.NamedTemporaryFile(delete=False) as store_file:
            self.file = store_file

    def tearDown(self):
        # Upstream leaves the default group alive, which breaks the next test in this process.
        if c10d.is_initialized():
            c10d.destroy_process_group()
        try:
            os.remove(self.file.name)
        except OSError:
            pass
        super().tearDown()

    def _test_base(self, net, inp, check_allclose=True):
        store = c10d.FileStore(self.file.name, self.world_size)
        c10d.init_process_group(backend="gloo", store=store, rank=self.rank,
                                world_size=self.world_size)
        process_group = c10d.distributed_c10d._get_default_group()
        on_accelerator = inp[0].device.type != "cpu"
        device_ids = [torch.accelerator.current_device_index()] if on_accelerator else None

        ddp = DistributedDataParallel(copy.deepcopy(net), device_ids=device_ids,
                                      process_group=process_group)
        net_opt = torch.optim.Adam(net.parameters(), lr=0.001)
        ddp_opt = torch.optim.Adam(ddp.parameters(), lr=0.001)

        for i, j in zip(ddp.parameters(), net.parameters(), strict=True):
            self.assertTrue(i.allclose(j))

        # Gradients are never zeroed: both sides accumulate them the same way.
        for _ in range(10):
            net_out = net(*inp)
            ddp_out = ddp(*inp)
            net_out.sum().backward()
            ddp_out.sum().backward()
            net_opt.step()
            ddp_opt.step()

        if check_allclose:
            for i, j in zip(ddp.parameters(), net.parameters(), strict=True):
                self.assertTrue(i.allclose(j))

    @requires_gloo()
    def test_cpu(self):
        self._test_base(nn.Linear(2, 2), [torch.randn(30, 2)])

    @requires_gloo()
    @skip_but_pass_in_sandcastle_if(not TEST_CUDA, "At least 1 CUDA GPUS needed")
    def test_cuda(self):
        device = torch.device(device_type, 0)
        self._test_base(nn.Linear(2, 2).to(device), [torch.randn(30, 2, device=device)])

    @requires_gloo()
    @skip_but_pass_in_sandcastle_if(not TEST_CUDA, "At least 1 CUDA GPUS needed")
    def test_rnn(self):
        # Regression test: DDP with an LSTM whose weights cuDNN flattens.
        BATCH_SIZE = 12
        INPUT_DIM = 256
        OUTPUT_DIM = 256
        HIDDEN_DIM = 256
        N_LAYERS = 3
        SEQ_LEN = 100

        class Net(nn.Module):
            def __init__(self, input_dim, hidden_dim, output_dim, hidden_layers):
                super().__init__()
                self.input_dim = input_dim
                self.hidden_dim = hidden_dim
                self.output_dim = output_dim
                self.hidden_layers = hidden_layers
                self.lstm = nn.LSTM(input_dim, hidden_dim, hidden_layers, batch_first=True)
                self.h2o = nn.Linear(hidden_dim, output_dim)

            def forward(self, x, y):
                self.lstm.flatten_parameters()
                sequence, _ = self.lstm(x)
                return nn.functional.mse_loss(self.h2o(sequence), y)

        device = torch.device(device_type, 0)
        net = Net(INPUT_DIM, HIDDEN_DIM, OUTPUT_DIM, N_LAYERS).to(device)
        inp = [
            torch.randn((BATCH_SIZE, SEQ_LEN, INPUT_DIM), device=device),
            torch.rand((BATCH_SIZE, SEQ_LEN, OUTPUT_DIM), device=device),
        ]
        # The parameters are known to drift apart: this checks that training runs at all.
        self._test_base(net, inp, check_allclose=False)


def _dist_nn_test(test):
    """The skips every ``torch.distributed.nn`` test carries: gloo, 2 accelerators (or a
    CPU-only machine) and an importable ``torch.distributed.nn``."""
    test = skip_but_pass_in_sandcastle_if(not _torch_dist_nn_available,
                                          "torch.distributed.nn is not available")(test)
    test = skip_if_lt_x_gpu(2, allow_cpu=True)(test)
    return requires_gloo()(test)


# As upstream: the multi-process tests are left out of dev-debug ASAN runs.
if not TEST_WITH_DEV_DBG_ASAN:

    class TestDistributedNNFunctionsGloo(TestDistributedNNFunctions):
        """The ``torch.distributed.nn`` collectives over gloo, on each rank's ``self.device``."""

        @_dist_nn_test
        def test_broadcast(self):
            self._test_broadcast("gloo")

        @_dist_nn_test
        def test_reduce(self):
            self._test_reduce("gloo")

        @_dist_nn_test
        def test_allreduce(self):
            self._test_allreduce("gloo")

        @_dist_nn_test
        def test_all_gather(self):
            self._test_all_gather("gloo")

        @_dist_nn_test
        def test_all_to_all(self):
            self._test_all_to_all("gloo")

        @_dist_nn_test
        def test_all_to_all_single(self):
            self._test_all_to_all_single("gloo")

        @_dist_nn_test
        def test_gather(self):
            # gather is implemented by gloo only, so it has no backend-generic helper.
            x = self._init_with_rank_tensor("gloo")
            device = x.device
            tensors = torch.distributed.nn.gather(x, 1)
            if self.rank == 1:
                for i, t in enumerate(tensors):
                    self.assertEqual(t, torch.ones(5, 5, device=device) + i)
            elif self.rank == 0:
                for t in tensors:
                    self.assertEqual(t, torch.zeros(5, 5, device=device))
            y = torch.sum(torch.stack(tensors), dim=0)
            y.sin().sum().backward()
            # The destination's gradient reaches every contributor.
            x_s = 3 * torch.ones(5, 5, device=device)
            self.assertEqual(x.grad, x_s.cos())

        @_dist_nn_test
        def test_scatter(self):
            # scatter is implemented by gloo only, so it has no backend-generic helper.
            self._init_process_group("gloo")
            device = torch.device(self.device)
            x0 = torch.ones(5, 5, device=device)
            x1 = torch.ones(5, 5, device=device) + 1
            x0.requires_grad = True
            x1.requires_grad = True
            y = torch.distributed.nn.scatter([x0, x1], 1)
            if self.rank == 1:
                self.assertEqual(y, 1 + torch.ones(5, 5, device=device))
            elif self.rank == 0:
                self.assertEqual(y, torch.ones(5, 5, device=device))
            y.sin().sum().backward()
            # Only the source holds the scattered inputs' gradients.
            if self.rank == 1:
                x0_s = torch.ones(5, 5, device=device).cos()
                x1_s = (2 * torch.ones(5, 5, device=device)).cos()
                self.assertEqual(x0.grad, x0_s)
                self.assertEqual(x1.grad, x1_s)
            if self.rank == 0:
                self.assertEqual(x0.grad, torch.zeros(5, 5, device=device))
                self.assertEqual(x1.grad, torch.zeros(5, 5, device=device))


if __name__ == "__main__":
    run_tests()
