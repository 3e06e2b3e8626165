"""A DTensor test: with_comms makes the default group, build_device_mesh a 1-D mesh."""

import torch

from minidist import shard_rows
from torch_testing_ext.common_utils import run_tests
from torch_testing_ext.distributed._tensor.common_dtensor import DTensorTestBase, with_comms


class TestShardRows(DTensorTestBase):
    @property
    def world_size(self):
        return 2

    @with_comms
    def test_each_rank_holds_its_rows(self):
        full = torch.arange(12.0, device=self.device).reshape(6, 2)
        sharded = shard_rows(full, self.build_device_mesh())
        self.assertEqual(sharded.to_local(), full.chunk(self.world_size)[self.rank])
        self.assertEqual(sharded.full_tensor(), full)


if __name__ == "__main__":
    run_tests()
