"""Tests of the composable ``replicate()`` API (data parallelism applied to a module in place).

Every test runs on rank processes of the multi-process harness with a gloo process group
rendezvousing through a ``FileStore``. The harness seeds every rank alike, so models and
inputs built without reseeding are identical on all ranks.
"""

import os
from copy import deepcopy

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed._composable.replicate import replicate
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from torch_testing_ext import devices
from torch_testing_ext.common_distributed import MultiProcessTestCase, skip_if_lt_x_gpu
from torch_testing_ext.common_utils import TEST_XPU, run_tests, skip_but_pass_in_sandcastle_if

device_type = devices.device_type()
device_module = torch.get_device_module(device_type)


class Net(nn.Module):
    """Three 2x2 linear layers applied one after another."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(2, 2)
        self.fc2 = nn.Linear(2, 2)
        self.fc3 = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc3(self.fc2(self.fc1(x)))


def _replicate_each_layer(model: Net) -> Net:
    """A deep copy of ``model`` with ``replicate`` applied to each of its layers separately."""
    replicated = deepcopy(model)
    for layer in (replicated.fc1, replicated.fc2, replicated.fc3):
        replicate(layer)
    return replicated


class _ReplicateTestBase(MultiProcessTestCase):
    """Spawns the ranks per test, and gives each rank a gloo group on the test's FileStore."""

    def setUp(self) -> None:
        super().setUp()
        self._spawn_processes()

    def tearDown(self) -> None:
        super().tearDown()
        try:
            os.remove(self.file_name)
        except OSError:
            pass

    def _init_pg(self) -> None:
        # gloo on every machine: most tests replicate a CPU module, which NCCL cannot serve.
        store = dist.FileStore(self.file_name, self.world_size)
        dist.init_process_group(backend="gloo", rank=self.rank, world_size=self.world_size,
                                store=store)


class ReplicateStateDictTest(_ReplicateTestBase):
    """``replicate`` leaves a module's state dict unchanged (no wrapper prefix); 4 ranks."""

    def _check_state_dict_parity(self, expected: dict, actual: dict) -> None:
        self.assertEqual(len(expected), len(actual))
        for expected_key, actual_key in zip(expected.keys(), actual.keys(), strict=True):
            self.assertEqual(expected_key, actual_key)
        for expected_value, actual_value in zip(expected.values(), actual.values(), strict=True):
            self.assertEqual(expected_value, actual_value)

    def test_replicate_single_module_save_load(self):
        self._init_pg()
        model = Net()
        replicated = replicate(deepcopy(model))
        self._check_state_dict_parity(model.state_dict(), replicated.state_dict())

    def test_replicate_non_root_multiple_save_load(self):
        self._init_pg()
        model = Net()
        replicated = _replicate_each_layer(model)
        self._check_state_dict_parity(model.state_dict(), replicated.state_dict())


class ReplicateTest(_ReplicateTestBase):
    """Training with ``replicate`` matches local training on the global batch; 2 ranks."""

    @property
    def world_size(self) -> int:
        return 2

    def _compare_module(self, local: nn.Module, replicated: nn.Module) -> None:
        """Train ``local`` on the whole batch and ``replicated`` on this rank's row of it (two
        plain SGD steps, lr 1); the parameters must agree after every step."""
        local_batch = 1
        global_batch = self.world_size * local_batch
        inp = torch.randn(global_batch, 2)
        target = torch.randn(global_batch, 2)

        def sgd_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
            model.train()
            output = model(x)
            F.mse_loss(output, y.to(output.device)).backward()
            for param in model.parameters():
                with torch.no_grad():
                    param -= param.grad
                param.grad = None

        rows = slice(self.rank * local_batch, (self.rank + 1) * local_batch)
        for iteration in range(2):
            sgd_step(local, inp, target)
            sgd_step(replicated, inp[rows], target[rows])
            local_params = list(local.parameters())
            replicated_params = list(replicated.parameters())
            self.assertEqual(len(local_params), len(replicated_params))
            for expected, actual in zip(local_params, replicated_params, strict=True):
                self.assertEqual(actual, expected, rtol=1.3e-06, atol=5e-5)
            # Same permutation on every rank: the seed is the iteration, not the rank.
            torch.manual_seed(iteration)
            inp = inp[torch.randperm(global_batch)]

    def test_replicate_single_module(self):
        self._init_pg()
        model = Net()
        self._compare_module(model, replicate(deepcopy(model)))

    @skip_if_lt_x_gpu(2)
    @skip_but_pass_in_sandcastle_if(TEST_XPU, "XPU does not support gloo backend")
    def test_replicate_move_args_kwargs_to_device(self):
        class KwargNet(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = nn.Linear(2, 2)

            def forward(self, inp, *, kwarg=None):
                if kwarg is not None:
                    inp = inp @ kwarg
                return self.a(inp)

        self._init_pg()
        device = devices.select_rank_device(self.rank)
        model = KwargNet().to(self.device)
        replicate(model, device_id=device.index)
        # Both inputs stay on the CPU: replicate must move positional and keyword arguments.
        model(torch.randn(2, 2), kwarg=torch.randn(2, 2)).sum().backward()

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @skip_but_pass_in_sandcastle_if(TEST_XPU, "XPU does not support gloo backend")
    def test_replicate_ignore_module(self):
        self._init_pg()
        devices.select_rank_device(self.rank)
        # Different seeds: the ranks' models and inputs differ on purpose.
        torch.manual_seed(self.rank)
        if device_type != "cpu":  # torch.manual_seed already seeded the CPU generator
            device_module.manual_seed(self.rank)
        model = Net().to(self.device)
        replicate(model, ignored_modules=[model.fc1])
        inp = torch.randn(5, 2, device=self.device) * (self.rank + 1)
        (model(inp) * 10).sum().backward()

        def gathered(grad: torch.Tensor) -> list[torch.Tensor]:
            out = [torch.zeros_like(grad) for _ in range(dist.get_world_size())]
            dist.all_gather(out, grad)
            return out

        # The ignored fc1 is not synchronised: every other rank's gradient differs from rank 0's.
        first, *others = gathered(model.fc1.weight.grad)
        for grad in others:
            self.assertNotEqual(first, grad)
        # fc2 and fc3 are replicated: their gradients are averaged, hence equal on all ranks.
        for synced in (model.fc2.weight.grad, model.fc3.weight.grad):
            first, *others = gathered(synced)
            for grad in others:
                self.assertEqual(first, grad)

    def test_replicate_multi_module(self):
        self._init_pg()
        model = Net()
        replicated = _replicate_each_layer(model)
        self._compare_module(model, replicated)

    def test_replicate_with_kwargs(self):
        self._init_pg()
        model = Net()
        replicated = replicate(deepcopy(model), bucket_cap_mb=1, gradient_as_bucket_view=True)
        self._compare_module(model, replicated)

    @skip_if_lt_x_gpu(2)
    @skip_but_pass_in_sandcastle_if(TEST_XPU, "XPU does not support gloo backend")
    def test_replicate_device_id(self):
        self._init_pg()
        model = Net()
        model_on_device = deepcopy(model).to(device_type)
        model_on_device2 = deepcopy(model_on_device)

        def ddp_device_ids(module: nn.Module):
            # The DDP instance behind replicate is created at the first forward.
            module(torch.randn(2, 2))
            return replicate.state(module)._ddp_weakref().device_ids

        replicate(model, device_id=torch.device("cpu"))
        self.assertIsNone(ddp_device_ids(model))

        # The device index is never selected here, so it is 0 on every rank.
        index = torch.accelerator.current_device_index()
        replicate(model_on_device, device_id=torch.device(device_type, index))
        self.assertEqual(ddp_device_ids(model_on_device), [0])

        replicate(model_on_device2, device_id=int(index))
        self.assertEqual(ddp_device_ids(model_on_device2), [0])

    def test_replicate_wrong_device_id_type(self):
        self._init_pg()
        with self.assertRaisesRegex(RuntimeError, "Expected device_id to be int or torch.device"):
            replicate(Net(), device_id=[torch.device("cpu")])


class ReplicateFullyShardInit(ReplicateTest):
    """``replicate`` on top of ``fully_shard``: sharded weights stay DTensors (also after lazy
    init). Inherits and reruns every ``ReplicateTest`` test."""

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @skip_but_pass_in_sandcastle_if(TEST_XPU, "XPU does not support gloo backend")
    def test_replicate_fully_shard_init(self):
        class ToyModel(nn.Module):
            def __init__(self, dim: int) -> None:
                super().__init__()
                self.linears = nn.Sequential(*(nn.Linear(dim, dim, bias=False) for _ in range(3)))
                self.proj = nn.Linear(dim, dim, bias=False)

            def forward(self, x):
                return self.proj(self.linears(x))

        self._init_pg()
        device = devices.select_rank_device(self.rank)
        dim, batch = 3, 2
        model = ToyModel(dim).to(self.device)
        for linear in model.linears:
            fully_shard(linear)
        fully_shard(model.linears)
        # The rank's accelerator, or the CPU (for which replicate passes no device_ids to DDP).
        replicate(model, device_id=device)
        for linear in model.linears:
            self.assertIsInstance(linear.weight, DTensor)
        # The forward (with a CPU input) runs the lazy initialisation; weights stay sharded.
        model(torch.rand(batch, dim)).sum()
        for linear in model.linears:
            self.assertIsInstance(linear.weight, DTensor)


if __name__ == "__main__":
    run_tests()
