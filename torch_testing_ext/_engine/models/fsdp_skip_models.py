"""``SkipModel`` and its parts: a model whose middle layer FSDP auto-wrapping is meant to skip
(``fsdp/test_fsdp_state_dict.py``, ``test_distributed_checkpoint.py``).

``SkipModel(double_nest)``: ``linear`` (Linear(10, 10), no bias), ``linear_skip``
(``SkipModule``: the same layer as ``lin``), and ``nested_linear`` (``NestedLinear``), which
is wrapped with ``torch.distributed.fsdp.wrap.wrap`` and so becomes an FSDP unit only when built
inside ``enable_wrap(wrapper_cls=FullyShardedDataParallel)``; with ``double_nest`` its inner
layer is wrapped the same way. Everything is on the tests' device type.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from ... import devices

__all__ = ["SkipModule", "NestedLinear", "SkipModel"]

__unittest = True


def _linear10() -> nn.Linear:
    return nn.Linear(10, 10, bias=False)


class SkipModule(nn.Module):
    """One bias-free Linear(10, 10), ``lin``."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = _linear10()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


class NestedLinear(nn.Module):
    """One bias-free Linear(10, 10) on the device, ``nested_linear``, passed through ``wrap()``
    when ``fsdp_wrap``."""

    def __init__(self, fsdp_wrap: bool) -> None:
        super().__init__()
        from torch.distributed.fsdp.wrap import wrap

        layer = _linear10().to(devices.device_type())
        self.nested_linear = wrap(layer) if fsdp_wrap else layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nested_linear(x)


class SkipModel(nn.Module):
    """``linear`` -> ``linear_skip`` -> ``nested_linear`` (see the module's docstring)."""

    def __init__(self, double_nest: bool) -> None:
        super().__init__()
        from torch.distributed.fsdp.wrap import wrap

        device = devices.device_type()
        self.linear = _linear10().to(device)
        self.linear_skip = SkipModule().to(device)
        self.nested_linear = wrap(NestedLinear(fsdp_wrap=double_nest), device_id=device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nested_linear(self.linear_skip(self.linear(x)))
