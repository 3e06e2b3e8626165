"""Named as in ``torch.testing._internal.distributed.rpc.tensorpipe_rpc_agent_test_fixture``."""

from __future__ import annotations

from ..._engine.distributed_bases.rpc_fixtures import RpcAgentTestFixture, TensorPipeRpcAgentTestFixture

__all__ = ["RpcAgentTestFixture", "TensorPipeRpcAgentTestFixture"]
