"""Self-test of ``DynamoDistributedMultiProcTestCase.device_ids``: what DDP needs in each rank."""

import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from torch_testing_ext import devices
from torch_testing_ext.common_distributed import (
    DynamoDistributedMultiProcTestCase,
    dynamo_dist_per_rank_init,
)


class TestDeviceIds(DynamoDistributedMultiProcTestCase):
    def test_device_ids_fit_ddp(self):
        expected = [self.rank] if devices.accelerator_type() else None
        self.assertEqual(self.device_ids, expected)
        with dynamo_dist_per_rank_init(self.rank, self.world_size):
            model = DDP(nn.Linear(2, 2).to(self.device), device_ids=self.device_ids)
            self.assertEqual(model.device_ids, expected)
            self.assertEqual(dist.get_world_size(), self.world_size)
