"""``FakeDDP``: Dynamo's DDPOptimizer graph splitting in one process, without a process group.

When ``torch._dynamo.config.optimize_ddp`` is on, Dynamo applies its DDPOptimizer to a frame
that runs while a module is registered as DistributedDataParallel's *active module*: it splits
the captured graph into one subgraph per gradient bucket, sized by that module's
``bucket_bytes_cap``. ``FakeDDP`` registers itself the same way and forwards to the wrapped
module, so the splitting can be tested with no communication.

That is all it imitates. It reduces no gradients and has none of DDP's other behaviour
(parameter broadcast, ``find_unused_parameters``, ``static_graph``, ``no_sync``...). The
registration is a private DDP/Dynamo contract, kept in ``_torch_private`` and guarded by
``test/harness/test_torch_private.py`` and ``test/harness/test_fake_ddp.py``.

Example::

    model = FakeDDP(MyModel(), bucket_cap_mb=1)
    torch.compile(model, backend=my_counting_backend)(x)   # one call per bucket
"""

from __future__ import annotations

from typing import Any

import torch

from ._engine._torch_private import active_ddp_module, get_active_ddp_module, patch_dynamo_config
from ._engine.dynamo_bases.dynamo_case import DynamoTestCase

__all__ = ["FakeDDP", "FakeDDPTestCase", "active_ddp_module"]


class FakeDDP(torch.nn.Module):
    """Registers itself as DDP's active module while it runs; communicates nothing.

    ``bucket_bytes_cap`` is ``int(bucket_cap_mb * 1024 * 1024)``, as in DDP. ``forward`` calls
    the wrapped module's ``forward`` (not ``__call__``) with itself registered as the active DDP
    module, unless a module is already registered.
    """

    def __init__(self, module: torch.nn.Module, bucket_cap_mb: float = 25) -> None:
        super().__init__()
        self.module = module
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if get_active_ddp_module():
            return self.module.forward(*inputs, **kwargs)
        with active_ddp_module(self):
            return self.module.forward(*inputs, **kwargs)


class FakeDDPTestCase(DynamoTestCase):
    """Base for single-process DDPOptimizer tests: a Dynamo-resetting TestCase with
    ``optimize_ddp`` on (DDPOptimizer mode) for every test of the class."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls._dynamo_config.enter_context(patch_dynamo_config(optimize_ddp=True))
