"""Distributed test cases and decorators, named as in
``torch.testing._internal.common_distributed``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``multiprocess/`` (the rank machinery), ``dynamo/``,
``process_groups/`` and ``skips/``.
"""

from __future__ import annotations

from .dynamo.dynamo_distributed_cases import (
    DynamoDistributedMultiProcTestCase,
    DynamoDistributedSingleProcTestCase,
)
from .dynamo.per_rank_init import dynamo_dist_per_rank_init
from .multiprocess.multiprocess_test_case import MultiProcessTestCase
from .multiprocess.skip_exit_codes import TEST_SKIPS, TestSkip
from .process_groups.rendezvous import init_single_process_group, rendezvous_init_method
from .skips import distributed_skips
from .skips.distributed_skips import (
    import_transformers_or_skip,
    requires_accelerator_dist_backend,
    requires_gloo,
    requires_nccl,
    requires_world_size,
    skip_if_lt_x_gpu,
    transformers_import_error,
)

__all__ = [
    "MultiProcessTestCase",
    "DynamoDistributedSingleProcTestCase",
    "DynamoDistributedMultiProcTestCase",
    "_dynamo_dist_per_rank_init",
    "dynamo_dist_per_rank_init",
    "rendezvous_init_method",
    "init_single_process_group",
    "TEST_SKIPS",
    "TestSkip",
]
__all__ += distributed_skips.__all__

# The upstream name.
_dynamo_dist_per_rank_init = dynamo_dist_per_rank_init
