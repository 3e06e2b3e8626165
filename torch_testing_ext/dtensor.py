"""DTensor tests without migrating: every name of ``distributed._tensor.common_dtensor``, under
a short public path.

Example::

    import torch
    from torch.distributed.tensor import Shard, distribute_tensor
    from torch_testing_ext.common_utils import run_tests
    from torch_testing_ext.dtensor import DTensorTestBase, with_comms

    class TestShard(DTensorTestBase):
        @with_comms
        def test_shard(self):
            dt = distribute_tensor(torch.arange(8.0), self.build_device_mesh(), [Shard(0)])
            self.assertEqual(dt.full_tensor(), torch.arange(8.0))

    if __name__ == "__main__":
        run_tests()
"""

from __future__ import annotations

from .distributed._tensor.common_dtensor import *  # noqa: F403
from .distributed._tensor.common_dtensor import __all__  # noqa: F401
