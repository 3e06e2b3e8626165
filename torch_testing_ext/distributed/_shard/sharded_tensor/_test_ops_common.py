"""Sharding specs and helpers for sharded-op tests, named as in
``torch.testing._internal.distributed._shard.sharded_tensor._test_ops_common``.

The upstream-named face; the definitions live in ``_engine/sharded_tensor_bases/``.
"""

from __future__ import annotations

from ...._engine.sharded_tensor_bases.op_helpers import clone_module_parameter, gen_binary_op_func
from ...._engine.sharded_tensor_bases.spec_makers import (
    generate_chunk_sharding_specs_for_test,
    generate_enumerable_sharding_specs_for_test,
    generate_local_weight_sharding_params_for_test,
)

__all__ = ["generate_chunk_sharding_specs_for_test", "generate_enumerable_sharding_specs_for_test",
           "generate_local_weight_sharding_params_for_test", "clone_module_parameter", "gen_binary_op_func"]
