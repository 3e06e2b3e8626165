"""General test utilities, named as in ``torch.testing._internal.common_utils``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. Definitions live in ``_engine/testcase/`` (TestCase, parametrize, temporary paths, the
tensor factories, NumPy dtypes and tracked sample inputs of OpInfo tests),
``_engine/runner/`` (run_tests), ``_engine/skips/`` (flags and generic skip decorators) and ``_engine/process_groups/``
(free ports).
"""

from __future__ import annotations

import contextlib

from ._engine.process_groups.ports import (
    ADDRESS_IN_USE,
    CONNECT_TIMEOUT,
    find_free_port,
    retry_on_connect_failures,
)
from ._engine.runner.main import load_tests, run_tests
from ._engine.skips import platform_skips
from ._engine.skips.platform_skips import *  # noqa: F403  # the face re-exports exactly platform_skips.__all__
from ._engine.testcase.autograd_checks import (
    GRADCHECK_NONDET_TOL,
    TEST_WITH_SLOW_GRADCHECK,
    _assertGradAndGradgradChecks,
    dtype2prec_DONTUSE,
    gradcheck,
    gradgradcheck,
    skipIfSlowGradcheckEnv,
)
from ._engine.testcase.hw_classification import HardwareClassification, filter_by_hw_classification
from ._engine.testcase.numpy_dtypes import numpy_to_torch_dtype, numpy_to_torch_dtype_dict, torch_to_numpy_dtype_dict
from ._engine.testcase.parametrize import (
    decorateIf,
    instantiate_parametrized_tests,
    parametrize,
    subtest,
    validate_test_name,
)
from ._engine.testcase.temp_paths import TemporaryDirectoryName, TemporaryFileName
from ._engine.testcase.tensor_factories import (
    is_iterable_of_tensors,
    make_fullrank_matrices_with_distinct_singular_values,
    noncontiguous_like,
    random_hermitian_pd_matrix,
    random_symmetric_pd_matrix,
    random_well_conditioned_matrix,
)
from ._engine.testcase.tensor_testcase import TestCase, current_seed
from ._engine.testcase.testing_aids import (
    DeterministicGuard,
    NoTest,
    check_leaked_tensors,
    device_sleep,
    get_cycles_per_ms,
    serialTest,
    suppress_warnings,
    wrapSwapTensorsTest,
)
from ._engine.testcase.tracked_inputs import (
    OPINFO_SAMPLE_INPUT_INDEX,
    TrackedInput,
    TrackedInputIter,
    clear_tracked_input,
    extract_test_fn,
    get_tracked_input,
)

# As upstream's common_utils does, importing this module imports pytest when it is installed:
# libraries tell a pytest run by "pytest" in sys.modules (spmd_types words its errors by it), so
# a test written on upstream's harness has always run with it imported, under pytest or not.
with contextlib.suppress(ImportError):
    import pytest  # noqa: F401

__all__ = [
    "TestCase",
    "run_tests",
    "parametrize",
    "subtest",
    "decorateIf",
    "instantiate_parametrized_tests",
    "validate_test_name",
    "load_tests",
    "serialTest",
    "TemporaryFileName",
    "TemporaryDirectoryName",
    "find_free_port",
    "retry_on_connect_failures",
    "ADDRESS_IN_USE",
    "CONNECT_TIMEOUT",
    "NoTest",
    "suppress_warnings",
    "check_leaked_tensors",
    "wrapSwapTensorsTest",
    "DeterministicGuard",
    "get_cycles_per_ms",
    "device_sleep",
    "HardwareClassification",
    "filter_by_hw_classification",
    "TEST_WITH_SLOW_GRADCHECK",
    "gradcheck",
    "gradgradcheck",
    "_assertGradAndGradgradChecks",
    "dtype2prec_DONTUSE",
    "SEED",  # noqa: F405  # defined by the module __getattr__ below, read when asked
    "GRADCHECK_NONDET_TOL",
    "skipIfSlowGradcheckEnv",
    "numpy_to_torch_dtype",
    "numpy_to_torch_dtype_dict",
    "torch_to_numpy_dtype_dict",
    "noncontiguous_like",
    "is_iterable_of_tensors",
    "random_symmetric_pd_matrix",
    "random_hermitian_pd_matrix",
    "random_well_conditioned_matrix",
    "make_fullrank_matrices_with_distinct_singular_values",
    "TrackedInput",
    "TrackedInputIter",
    "extract_test_fn",
    "get_tracked_input",
    "clear_tracked_input",
    "OPINFO_SAMPLE_INPUT_INDEX",
    *platform_skips.__all__,
]


def __getattr__(name: str) -> int:
    """``SEED``: the seed every ``TestCase.setUp`` starts the random generators from (1234, or
    ``run_tests``' ``--seed N``), read when asked, so ``common_utils.SEED`` in a test body sees
    the seed of the run."""
    if name == "SEED":
        return current_seed()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
