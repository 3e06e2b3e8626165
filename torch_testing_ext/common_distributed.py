"""Distributed test cases and decorators, named as in
``torch.testing._internal.common_distributed``.

A test written for PyTorch's harness moves here by rewriting its import. The definitions live
in ``multiprocess/`` (the rank machinery), ``dynamo_distributed``, ``dist_init`` and
``dist_skips``; this module is their upstream-named face.
"""

from __future__ import annotations

from .dist_init import dynamo_dist_per_rank_init, init_single_process_group, rendezvous_init_method
from .dist_skips import (
    import_transformers_or_skip,
    requires_accelerator_dist_backend,
    requires_gloo,
    requires_nccl,
    requires_world_size,
    skip_if_lt_x_gpu,
)
from .dynamo_distributed import DynamoDistributedMultiProcTestCase, DynamoDistributedSingleProcTestCase
from .multiprocess.outcome import TEST_SKIPS, TestSkip
from .multiprocess.testcase import MultiProcessTestCase

__all__ = [
    "MultiProcessTestCase",
    "DynamoDistributedSingleProcTestCase",
    "DynamoDistributedMultiProcTestCase",
    "_dynamo_dist_per_rank_init",
    "dynamo_dist_per_rank_init",
    "rendezvous_init_method",
    "init_single_process_group",
    "skip_if_lt_x_gpu",
    "requires_gloo",
    "requires_nccl",
    "requires_accelerator_dist_backend",
    "import_transformers_or_skip",
    "requires_world_size",
    "TEST_SKIPS",
    "TestSkip",
]

# The upstream name.
_dynamo_dist_per_rank_init = dynamo_dist_per_rank_init
