"""One test on 2 fresh rank processes: gradient averaging matches a single process."""

import torch
import torch.distributed as dist

from minidist import average_gradients, global_mean
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests


class TestAverageGradients(MultiProcessTestCase):
    world_size = 2

    def init_group(self):
        dist.init_process_group(self.backend, init_method=f"file://{self.file_name}",
                                rank=self.rank, world_size=self.world_size)

    def test_matches_the_full_batch(self):
        self.init_group()
        torch.manual_seed(0)  # the same model on every rank
        model = torch.nn.Linear(4, 2).to(self.device)
        batch = torch.randn(2 * self.world_size, 4, device=self.device)
        reference = torch.nn.Linear(4, 2).to(self.device)
        reference.load_state_dict(model.state_dict())
        reference(batch).pow(2).mean().backward()

        model(batch.chunk(self.world_size)[self.rank]).pow(2).mean().backward()
        average_gradients(model)
        for ours, expected in zip(model.parameters(), reference.parameters(), strict=True):
            self.assertEqual(ours.grad, expected.grad)

    def test_global_mean(self):
        self.init_group()
        mine = torch.full((self.rank + 1,), float(self.rank), device=self.device)
        self.assertEqual(global_mean(mine), 2.0 / 3.0)  # (0 + 1 + 1) / 3


if __name__ == "__main__":
    run_tests()
