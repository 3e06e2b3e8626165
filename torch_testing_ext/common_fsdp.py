"""FSDP test bases, named as in ``torch.testing._internal.common_fsdp``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``fsdp_bases/``.
"""

from __future__ import annotations

from .fsdp_bases import collective_patches
from .fsdp_bases.collective_patches import *  # noqa: F403  # the face re-exports exactly collective_patches.__all__
from .fsdp_bases.compiled_fsdp import compiled_fsdp_test
from .fsdp_bases.fsdp_continuous import FSDPTestContinuous
from .fsdp_bases.fsdp_cpu_limits import requires_pinned_memory
from .fsdp_bases.fsdp_test_case import FSDPTest
from .fsdp_bases.fsdp_thread_case import FSDPTestMultiThread
from .fsdp_bases.init_modes import DEVICEInitMode, FSDPInitMode, get_devtype
from .fsdp_bases.sharded_parity import (
    check_sharded_parity,
    get_full_params,
    reduce_scatter_with_assert,
)
from .models.fsdp1_models import (
    AlwaysWrapNestedWrappedModule,
    FSDPTestModel,
    NestedWrappedModule,
    TransformerWithSharedParams,
)
from .models.fsdp2_models import MLP, DoubleLinear, MLPStack

__all__ = [
    "FSDPTest",
    "FSDPTestContinuous",
    "FSDPTestMultiThread",
    "FSDPInitMode",
    "DEVICEInitMode",
    "get_devtype",
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
    *collective_patches.__all__,
]
