"""Faces at ``torch.testing._internal.distributed.nn.api``.

- ``remote_module_test``: ``RemoteModuleTest`` & co, the installed torch's suite on our harness.
"""
