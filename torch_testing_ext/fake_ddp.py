"""``FakeDDP``: DDPOptimizer graph splitting in one process, without a process group.

Dynamo applies its DDPOptimizer (one compiled subgraph per gradient bucket) to any frame that
runs while a module is registered as DistributedDataParallel's *active module*; it reads the
bucket size from that module's ``bucket_bytes_cap``. ``FakeDDP`` registers itself the same way
and forwards to the wrapped module, so graph splitting can be tested with no communication.

That registration is a private contract between DDP and Dynamo (the class attribute
``DistributedDataParallel._active_ddp_module``, read through ``_get_active_ddp_module()``). It is
touched only by :func:`active_ddp_module` here; ``test/harness/test_fake_ddp.py`` fails loudly
if a torch release changes it.

Example::

    model = FakeDDP(MyModel(), bucket_cap_mb=1)
    torch.compile(model, backend=my_counting_backend)(x)   # one call per bucket
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from .dynamo_test_case import DynamoTestCase

__all__ = ["FakeDDP", "FakeDDPTestCase", "active_ddp_module"]


@contextlib.contextmanager
def active_ddp_module(module: torch.nn.Module | None) -> Iterator[None]:
    """Register ``module`` as DDP's active module (what Dynamo looks for) for the block."""
    previous = DistributedDataParallel._active_ddp_module
    DistributedDataParallel._active_ddp_module = module  # type: ignore[assignment]
    try:
        yield
    finally:
        DistributedDataParallel._active_ddp_module = previous


class FakeDDP(torch.nn.Module):
    """Looks like DDP to Dynamo's DDPOptimizer; communicates nothing.

    ``bucket_bytes_cap`` is ``int(bucket_cap_mb * 1024 * 1024)``, as in DDP. ``forward`` calls
    the wrapped module's ``forward`` (not ``__call__``) with itself registered as the active DDP
    module, unless a module is already registered.
    """

    def __init__(self, module: torch.nn.Module, bucket_cap_mb: float = 25) -> None:
        super().__init__()
        self.module = module
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)

    @contextlib.contextmanager
    def _inside_ddp_forward(self) -> Iterator[None]:
        with active_ddp_module(self):
            yield

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if DistributedDataParallel._get_active_ddp_module():
            return self.module.forward(*inputs, **kwargs)
        with self._inside_ddp_forward():
            return self.module.forward(*inputs, **kwargs)


class FakeDDPTestCase(DynamoTestCase):
    """Base for single-process DDPOptimizer tests: a Dynamo-resetting TestCase with
    ``optimize_ddp`` on (DDPOptimizer mode) for every test of the class."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        import torch._dynamo.config

        cls._dynamo_config.enter_context(torch._dynamo.config.patch(optimize_ddp=True))
