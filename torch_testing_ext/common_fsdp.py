"""FSDP test bases, named as in ``torch.testing._internal.common_fsdp``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``_engine/fsdp_bases/``.
"""

from __future__ import annotations

from ._engine.fsdp_bases import collective_patches
from ._engine.fsdp_bases.collective_patches import *  # noqa: F403  # the face re-exports exactly collective_patches.__all__
from ._engine.fsdp_bases.compiled_fsdp import compiled_fsdp_test
from ._engine.fsdp_bases.fsdp1_parity import FSDPTestMixin
from ._engine.fsdp_bases.fsdp1_state_helpers import (
    _assert_module_states,
    _broadcast_state_dict,
    _get_state_dict,
    _maybe_wrap_fsdp,
    _move_to_device,
    _zero_model,
    subtest_name,
)
from ._engine.fsdp_bases.fsdp_continuous import FSDPTestContinuous
from ._engine.fsdp_bases.fsdp_cpu_limits import requires_pinned_memory
from ._engine.fsdp_bases.fsdp_test_case import FSDPTest
from ._engine.fsdp_bases.fsdp_thread_case import FSDPTestMultiThread
from ._engine.fsdp_bases.init_modes import (
    DEVICE_COUNT,
    DEVICE_TYPE,
    DISTRIBUTED_BACKEND,
    DEVICEInitMode,
    FSDPInitMode,
    get_devtype,
)
from ._engine.fsdp_bases.sharded_parity import (
    check_sharded_parity,
    get_full_params,
    reduce_scatter_with_assert,
)
from ._engine.models.fsdp1_models import (
    AlwaysWrapNestedWrappedModule,
    FSDPTestModel,
    NestedWrappedModule,
    TransformerWithSharedParams,
)
from ._engine.models.fsdp1_variants import (
    DummyDDP,
    MixtureOfExperts,
    ModuleWithDelay,
    NestedWrappedModuleWithDelay,
    NonUniformReqGradNWM,
)
from ._engine.models.fsdp2_models import MLP, DoubleLinear, MLPStack
from ._engine.models.fsdp_skip_models import NestedLinear, SkipModel, SkipModule
from ._engine.process_groups.dummy_process_group import DummyProcessGroup

__all__ = [
    "FSDPTest",
    "FSDPTestContinuous",
    "FSDPTestMultiThread",
    "FSDPInitMode",
    "DEVICEInitMode",
    "get_devtype",
    "DISTRIBUTED_BACKEND",
    "DEVICE_TYPE",
    "DEVICE_COUNT",
    "FSDPTestMixin",
    "FSDPTestModel",
    "TransformerWithSharedParams",
    "NestedWrappedModule",
    "AlwaysWrapNestedWrappedModule",
    "MLP",
    "MLPStack",
    "DoubleLinear",
    "check_sharded_parity",
    "reduce_scatter_with_assert",
    "get_full_params",
    "compiled_fsdp_test",
    "requires_pinned_memory",
    "NonUniformReqGradNWM",
    "ModuleWithDelay",
    "NestedWrappedModuleWithDelay",
    "DummyDDP",
    "MixtureOfExperts",
    "SkipModule",
    "NestedLinear",
    "SkipModel",
    "DummyProcessGroup",
    "subtest_name",
    "_assert_module_states",
    "_zero_model",
    "_get_state_dict",
    "_broadcast_state_dict",
    "_move_to_device",
    "_maybe_wrap_fsdp",
    *collective_patches.__all__,
]
