"""DTensor test bases and helpers, named as in
``torch.testing._internal.distributed._tensor.common_dtensor``.

The upstream-named face; the definitions live in ``_engine/dtensor_bases/``. ``DTensorOpTestBase``
runs on rank processes here, not threads (see docs/migration.md).
"""

from __future__ import annotations

from ..._engine.distributed_bases.subtests import run_subtests
from ..._engine.dtensor_bases.converter import DTensorConverter
from ..._engine.dtensor_bases.dtensor_continuous import DTensorContinuousTestBase
from ..._engine.dtensor_bases.dtensor_facts import (
    DEVICE_COUNT,
    DEVICE_TYPE,
    NUM_DEVICES,
    PG_BACKEND,
    TEST_CUDA,
    TEST_HPU,
    TEST_PRIVATEUSE1,
    TEST_XPU,
)
from ..._engine.dtensor_bases.dtensor_test_base import DTensorTestBase, DTensorTestMixin, skip_unless_torch_gpu
from ..._engine.dtensor_bases.group_per_rank import DTensorOpTestBase
from ..._engine.dtensor_bases.local_tensor_cases import (
    LocalDTensorContinuousTestBase,
    LocalDTensorOpTestBase,
    LocalDTensorTestBase,
)
from ..._engine.dtensor_bases.local_tensor_variants import (
    create_local_tensor_test_class,
    make_wrapped,
    map_local_for_rank,
    map_local_tensor_for_rank,
    reduce_local_int,
)
from ..._engine.dtensor_bases.shard_order import (
    generate_shard_orders,
    make_full_tensor,
    patched_distribute_tensor,
    redistribute,
    shard_order_to_placement,
)
from ..._engine.dtensor_bases.sharding_rules import (
    op_strategy_context,
    validate_sharding_rule_sample,
    validate_sharding_rule_sample_backward,
)
from ..._engine.dtensor_bases.with_comms import with_comms
from ..._engine.fresh.multiprocess_test_case import MultiProcessTestCase
from ..._engine.models.dtensor_models import (
    Attention,
    ExpertLayer,
    Experts,
    FeedForward,
    MLPModule,
    MLPStacked,
    ModelArgs,
    RMSNormPython,
    Transformer,
    TransformerBlock,
)
from ..._engine.models.transformer_parallel import (
    ExpertParallel,
    ExpertParallelWithTP,
    TensorParallelForExpert,
)
from ..._engine.skips.distributed_skips import skip_if_lt_x_gpu
from ..._engine.skips.skip_codes import TEST_SKIPS

__all__ = [
    "DEVICE_TYPE", "DEVICE_COUNT", "PG_BACKEND", "NUM_DEVICES",
    # Read by the bases when they choose a device (a test may patch them to pretend a machine).
    "TEST_CUDA", "TEST_XPU", "TEST_HPU", "TEST_PRIVATEUSE1",
    "DTensorTestMixin", "DTensorTestBase", "DTensorOpTestBase", "DTensorContinuousTestBase",
    "LocalDTensorTestBase", "LocalDTensorOpTestBase", "LocalDTensorContinuousTestBase",
    "with_comms", "skip_unless_torch_gpu", "DTensorConverter",
    "RMSNormPython", "MLPModule", "MLPStacked", "ModelArgs", "Attention", "FeedForward",
    "Experts", "ExpertLayer", "TransformerBlock", "Transformer",
    "TensorParallelForExpert", "ExpertParallel", "ExpertParallelWithTP",
    "create_local_tensor_test_class", "make_wrapped", "map_local_for_rank",
    "map_local_tensor_for_rank", "reduce_local_int",
    "redistribute", "patched_distribute_tensor", "make_full_tensor", "shard_order_to_placement",
    "generate_shard_orders",
    "validate_sharding_rule_sample", "validate_sharding_rule_sample_backward", "op_strategy_context",
    # Upstream's module imports these from common_distributed, and tests import them from it.
    "MultiProcessTestCase", "TEST_SKIPS", "run_subtests", "skip_if_lt_x_gpu",
]
