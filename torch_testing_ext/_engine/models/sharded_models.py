"""Small modules holding sharded tensors, for state-dict and module tests.

``MyShardedModel1`` holds a 10x20 sharded tensor ``sharded_tensor1`` (``torch.rand``
values), a 2x2 parameter ``random_tensor1`` and a ``MyShardedModel2`` as ``submodule``, which
holds ``sharded_tensor2`` and ``random_tensor2`` alike. Without a spec the sharded
attributes are None (a module to load a state dict into).

Example::

    m = MyShardedModel1(spec, init_rrefs=False)
    assert m.submodule.sharded_tensor2.size() == (10, 20)
"""

from __future__ import annotations

from typing import Any

import torch

from .._torch_private import sharded_tensor_api

__all__ = ["MyShardedModel1", "MyShardedModel2", "SHARDED_SIZE"]

# The size of every sharded tensor these modules hold.
SHARDED_SIZE = (10, 20)


def _sharded_rand(spec: Any, group: Any, init_rrefs: bool) -> Any:
    if spec is None:
        return None
    return sharded_tensor_api().rand(spec, *SHARDED_SIZE, process_group=group, init_rrefs=init_rrefs)


class MyShardedModel2(torch.nn.Module):
    """``sharded_tensor2`` (10x20 on ``spec`` over ``group``, or None) and ``random_tensor2``
    (a 2x2 parameter). ``init_rrefs`` as in ``sharded_tensor.rand`` (True needs RPC)."""

    def __init__(self, spec: Any = None, group: Any = None, init_rrefs: bool = True) -> None:
        super().__init__()
        self.sharded_tensor2 = _sharded_rand(spec, group, init_rrefs)
        self.random_tensor2 = torch.nn.Parameter(torch.rand(2, 2))


class MyShardedModel1(torch.nn.Module):
    """``sharded_tensor1`` and ``random_tensor1`` as in :class:`MyShardedModel2`, and a
    :class:`MyShardedModel2` on the same spec and group as ``submodule``."""

    def __init__(self, spec: Any = None, group: Any = None, init_rrefs: bool = True) -> None:
        super().__init__()
        self.sharded_tensor1 = _sharded_rand(spec, group, init_rrefs)
        self.random_tensor1 = torch.nn.Parameter(torch.rand(2, 2))
        self.submodule = MyShardedModel2(spec, group, init_rrefs)
