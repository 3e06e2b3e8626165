"""Ranks kept for the class: the processes and the default group are made once."""

import torch
import torch.distributed as dist

from minidist import average_gradients, global_mean
from torch_testing_ext.common_distributed import MultiProcContinuousTest
from torch_testing_ext.common_utils import run_tests


class TestOnKeptRanks(MultiProcContinuousTest):
    world_size = 2

    def test_global_mean_of_equal_tensors(self):
        self.assertEqual(global_mean(torch.ones(3, device=self.device)), 1.0)

    def test_average_of_rank_numbers(self):
        model = torch.nn.Linear(1, 1, bias=False).to(self.device)
        model.weight.grad = torch.full_like(model.weight, float(self.rank))
        average_gradients(model)
        self.assertEqual(model.weight.grad, [[0.5]])

    def test_the_group_is_the_class_group(self):
        self.assertEqual(dist.get_world_size(), self.world_size)


if __name__ == "__main__":
    run_tests()
