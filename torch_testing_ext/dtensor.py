"""DTensor tests without migrating: the main names of ``distributed._tensor.common_dtensor``
under a short public path.

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

from .distributed._tensor.common_dtensor import (
    DEVICE_TYPE,
    NUM_DEVICES,
    PG_BACKEND,
    DTensorConverter,
    DTensorOpTestBase,
    DTensorTestBase,
    LocalDTensorTestBase,
    MLPModule,
    MLPStacked,
    ModelArgs,
    RMSNormPython,
    Transformer,
    TransformerBlock,
    create_local_tensor_test_class,
    map_local_for_rank,
    skip_unless_torch_gpu,
    with_comms,
)

__all__ = [
    "DEVICE_TYPE", "NUM_DEVICES", "PG_BACKEND", "DTensorTestBase", "DTensorOpTestBase",
    "LocalDTensorTestBase", "with_comms", "skip_unless_torch_gpu", "DTensorConverter",
    "MLPModule", "MLPStacked", "RMSNormPython", "ModelArgs", "Transformer", "TransformerBlock",
    "create_local_tensor_test_class", "map_local_for_rank",
]
