"""Faces at ``torch.testing._internal.distributed.rpc``: the RPC agents' test fixtures (from
``distributed_bases``). The RPC test suites themselves are not provided (see ``rpc_utils``).

- ``rpc_agent_test_fixture``: ``RpcAgentTestFixture``;
- ``tensorpipe_rpc_agent_test_fixture``: ``TensorPipeRpcAgentTestFixture``;
- ``faulty_rpc_agent_test_fixture``: ``FaultyRpcAgentTestFixture``.
"""
