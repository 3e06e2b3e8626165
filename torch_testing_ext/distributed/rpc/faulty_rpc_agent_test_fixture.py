"""Named as in ``torch.testing._internal.distributed.rpc.faulty_rpc_agent_test_fixture``."""

from __future__ import annotations

from ..._engine.distributed_bases.rpc_fixtures import (
    FaultyRpcAgentTestFixture,
    RpcAgentTestFixture,
    default_messages_to_delay,
    retryable_message_types,
)

__all__ = ["RpcAgentTestFixture", "FaultyRpcAgentTestFixture", "retryable_message_types",
           "default_messages_to_delay"]
