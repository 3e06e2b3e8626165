"""Faces at ``torch.testing._internal.distributed.rpc.examples``: the RPC example suites, each
the installed torch's own file on our harness.

- ``parameter_server_test``: ``ParameterServerTest``;
- ``reinforcement_learning_rpc_test``: ``ReinforcementLearningRpcTest``.
"""
