"""RPC test generation, named as in ``torch.testing._internal.distributed.rpc_utils``: the suites
are placeholders that skip (this package does not provide PyTorch's RPC test suites)."""

from __future__ import annotations

from .._engine.distributed_bases.rpc_suites import (
    FAULTY_AGENT_TESTS,
    GENERIC_CUDA_TESTS,
    GENERIC_DEVICE_TESTS,
    GENERIC_TESTS,
    TENSORPIPE_CUDA_TESTS,
    TENSORPIPE_DEVICE_TESTS,
    TENSORPIPE_TESTS,
    generate_tests,
)

__all__ = ["GENERIC_TESTS", "GENERIC_CUDA_TESTS", "GENERIC_DEVICE_TESTS", "TENSORPIPE_TESTS",
           "TENSORPIPE_CUDA_TESTS", "TENSORPIPE_DEVICE_TESTS", "FAULTY_AGENT_TESTS", "generate_tests"]
