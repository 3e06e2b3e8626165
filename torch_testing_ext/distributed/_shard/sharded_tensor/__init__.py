"""Sharded-tensor test bases, named as in
``torch.testing._internal.distributed._shard.sharded_tensor``.

The upstream-named face; the definitions live in ``_engine/sharded_tensor_bases/``. Its submodules:

- ``_test_st_common``: ``MyShardedModel1``, ``MyShardedModel2``, ``PLACEMENTS``,
  ``DEFAULT_GPU_NUM``, ``_chunk_sharding_specs_list_for_test``;
- ``_test_ops_common``: the spec generators, ``generate_local_weight_sharding_params_for_test``,
  ``clone_module_parameter``, ``gen_binary_op_func``.
"""

from __future__ import annotations

from ...._engine.fresh.multiprocess_test_case import MultiProcessTestCase
from ...._engine.sharded_tensor_bases.comms_decorator import with_comms
from ...._engine.sharded_tensor_bases.sharded_test_base import TEST_GPU_NUM, ShardedTensorTestBase
from ...._engine.skips.skip_codes import TEST_SKIPS

__all__ = [
    "ShardedTensorTestBase", "with_comms", "TEST_GPU_NUM",
    # Upstream's module imports these from common_distributed.
    "MultiProcessTestCase", "TEST_SKIPS",
]
