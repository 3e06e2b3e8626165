"""Faces at ``torch.testing._internal.distributed.rpc.jit``: the TorchScript RPC suites, each the
installed torch's own file on our harness.

- ``rpc_test``: ``JitRpcTest`` & co;
- ``dist_autograd_test``: ``JitDistAutogradTest``;
- ``rpc_test_faulty``: ``JitFaultyAgentRpcTest``.
"""
