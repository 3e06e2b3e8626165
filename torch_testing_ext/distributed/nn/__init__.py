"""Faces at ``torch.testing._internal.distributed.nn``.

- ``api``: the remote-module suite (``api.remote_module_test``), torch's own file on our harness.
"""
