"""Faces at ``torch.testing._internal.distributed.rpc``: the RPC agents' test fixtures (ours,
from ``distributed_bases``) and the RPC suites (the installed torch's own files on our harness).

- ``rpc_agent_test_fixture``: ``RpcAgentTestFixture``;
- ``tensorpipe_rpc_agent_test_fixture``: ``TensorPipeRpcAgentTestFixture``;
- ``faulty_rpc_agent_test_fixture``: ``FaultyRpcAgentTestFixture``;
- ``rpc_test``: ``RpcTest``, ``TensorPipeAgentRpcTest`` & co;
- ``dist_autograd_test``: ``DistAutogradTest`` & co;
- ``dist_optimizer_test``: ``DistOptimizerTest``;
- ``faulty_agent_rpc_test``: ``FaultyAgentRpcTest``;
- ``jit``: the TorchScript RPC suites;
- ``examples``: the parameter-server and reinforcement-learning suites.
"""
