"""Sharded models and seeded chunk specs, named as in
``torch.testing._internal.distributed._shard.sharded_tensor._test_st_common``.

The upstream-named face; the definitions live in ``_engine/models/sharded_models.py`` and
``_engine/sharded_tensor_bases/spec_makers.py``.
"""

from __future__ import annotations

from ...._engine.models.sharded_models import MyShardedModel1, MyShardedModel2
from ...._engine.sharded_tensor_bases.spec_makers import (
           DEFAULT_GPU_NUM,
           PLACEMENTS,
           _chunk_sharding_specs_list_for_test,
)

__all__ = ["MyShardedModel1", "MyShardedModel2", "PLACEMENTS", "DEFAULT_GPU_NUM",
           "_chunk_sharding_specs_list_for_test"]
