"""Distributed test cases and decorators, named as in
``torch.testing._internal.common_distributed``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``_engine/fresh/`` (process ranks), ``_engine/kept/`` (ranks
kept for a class), ``_engine/threads/`` (the threaded world), ``_engine/distributed_bases/``, ``_engine/dynamo_bases/``,
``_engine/process_groups/``, ``_engine/skips/`` and ``_engine/testcase/``.
"""

from __future__ import annotations

import logging

from ._engine.distributed_bases.dist_backend_suite import (
    DistTestCases,
    cleanup_temp_dir,
    current_temp_dir,
    initialize_temp_directories,
)
from ._engine.distributed_bases.distributed_test_base import DistributedTestBase
from ._engine.distributed_bases.sparse_reduce_cases import simple_sparse_reduce_tests
from ._engine.distributed_bases.subtests import run_subtests
from ._engine.distributed_bases.upstream_aids import (
    DDP_RANK_DEVICES,
    TIMEOUT_DEFAULT,
    TIMEOUT_OVERRIDE,
    core_dumps_disabled,
    get_timeout,
    init_multigpu_helper,
    requires_ddp_rank,
    retrieve_result_from_completion_queue,
    verify_ddp_error_logged,
    with_nccl_blocking_wait,
)
from ._engine.dynamo_bases.dynamo_distributed_cases import (
    DynamoDistributedMultiProcTestCase,
    DynamoDistributedSingleProcTestCase,
)
from ._engine.dynamo_bases.per_rank_init import dynamo_dist_per_rank_init
from ._engine.fresh.multiprocess_test_case import MultiProcessTestCase
from ._engine.kept.continuous_test_case import MultiProcContinousTest, MultiProcContinuousTest
from ._engine.kept.torchcomms_test_case import C10dTorchCommsTestBase
from ._engine.models.forward_inputs_models import SaveForwardInputsModel, SaveForwardInputsModule
from ._engine.process_groups.debug_levels import with_dist_debug_levels
from ._engine.process_groups.gloo_device import create_device
from ._engine.process_groups.rendezvous import init_single_process_group, rendezvous_init_method
from ._engine.process_groups.tcp_store import create_tcp_store, tp_transports
from ._engine.process_groups.torchcomms_group import (
    TORCHCOMM_HAS_GLOO,
    TORCHCOMM_HAS_NCCL,
    TORCHCOMM_HAS_NCCLX,
    TORCHCOMM_HAS_RCCL,
    TORCHCOMM_HAS_RCCLX,
    TORCHCOMM_HAS_XCCL,
    setup_torchcomms_pg,
)
from ._engine.skips import distributed_skips
from ._engine.skips.distributed_skips import *  # noqa: F403  # the face re-exports exactly distributed_skips.__all__
from ._engine.skips.platform_skips import skip_but_pass_in_sandcastle, skip_but_pass_in_sandcastle_if
from ._engine.skips.skip_codes import TEST_SKIPS, TestSkip
from ._engine.testcase.testing_aids import captured_output
from ._engine.threads.spawn_threads import spawn_threads_and_init_comms
from ._engine.threads.threaded_test_case import MultiThreadedTestCase
from ._engine.worlds.settings import DEFAULT_WORLD_SIZE
from .devices import at_least_x_gpu, sm_is_or_higher_than

__all__ = [
    "MultiProcessTestCase",
    "MultiProcContinuousTest",
    "MultiProcContinousTest",
    "DynamoDistributedSingleProcTestCase",
    "DynamoDistributedMultiProcTestCase",
    "_dynamo_dist_per_rank_init",
    "dynamo_dist_per_rank_init",
    "rendezvous_init_method",
    "init_single_process_group",
    "TEST_SKIPS",
    "TestSkip",
    "DistributedTestBase",
    "run_subtests",
    "with_dist_debug_levels",
    "captured_output",
    "verify_ddp_error_logged",
    "create_device",
    "init_multigpu_helper",
    "requires_ddp_rank",
    "MultiThreadedTestCase",
    "spawn_threads_and_init_comms",
    "at_least_x_gpu",
    "sm_is_or_higher_than",
    "with_nccl_blocking_wait",
    "simple_sparse_reduce_tests",
    "get_timeout",
    "SaveForwardInputsModule",
    "SaveForwardInputsModel",
    "create_tcp_store",
    "tp_transports",
    "setup_torchcomms_pg",
    "skip_but_pass_in_sandcastle",
    "skip_but_pass_in_sandcastle_if",
    "logger",
    "DistTestCases",
    "initialize_temp_directories",
    "cleanup_temp_dir",
    "tmp_dir",  # noqa: F405  # module state, read through __getattr__ below
    "DEFAULT_WORLD_SIZE",
    "DDP_RANK_DEVICES",
    "TIMEOUT_DEFAULT",
    "TIMEOUT_OVERRIDE",
    "retrieve_result_from_completion_queue",
    "core_dumps_disabled",
    "C10dTorchCommsTestBase",
    "TORCHCOMM_HAS_GLOO",
    "TORCHCOMM_HAS_XCCL",
    "TORCHCOMM_HAS_NCCL",
    "TORCHCOMM_HAS_RCCL",
    "TORCHCOMM_HAS_NCCLX",
    "TORCHCOMM_HAS_RCCLX",
    *distributed_skips.__all__,
]

# The upstream name.
_dynamo_dist_per_rank_init = dynamo_dist_per_rank_init

# Upstream's module logger (tests log through it), at INFO.
logger = logging.getLogger(__name__)
logger.setLevel(logging.INFO)


def __getattr__(name: str) -> object:
    # Upstream's module state: the directory the last initialize_temp_directories() made
    # (a tempfile.TemporaryDirectory), None before it and after cleanup_temp_dir().
    if name == "tmp_dir":
        return current_temp_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
