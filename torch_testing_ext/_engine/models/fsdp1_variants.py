"""More FSDP1 test models: ``NestedWrappedModule`` variants with some frozen parameters, with
delays, with experts, and ``DummyDDP``.

- ``NonUniformReqGradNWM``: only the last two linear layers train (ranks whose shards hold
  only frozen parameters exist, as ``ShardedGradScaler`` tests need);
- ``ModuleWithDelay`` / ``NestedWrappedModuleWithDelay``: a delay after the loss and/or before
  the gradient reduce-scatter;
- ``MixtureOfExperts``: an expert layer each rank owns (its own one-rank FSDP group), a
  shared layer, and gradients of the shared parameters averaged by hand when not wrapped;
- ``DummyDDP``: a module that just calls the one it holds (a reference for models that
  reduce their own gradients).

Delays happen only where the device runs asynchronously to the host (an accelerator): there
the host sleeps (``time.sleep``) before going on. On a CPU-only machine collectives and
compute are synchronous, nothing can race, and a delay is skipped, as upstream does on CPU.
"""

from __future__ import annotations

import re
import time
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn

from ... import devices
from ..fsdp_bases.fsdp1_state_helpers import _move_to_device
from ..fsdp_bases.init_modes import DEVICEInitMode, FSDPInitMode
from .fsdp1_models import FSDPTestModel, NestedWrappedModule, _moved_if_after, _wraps, fsdp_wrap

__all__ = ["NonUniformReqGradNWM", "ModuleWithDelay", "NestedWrappedModuleWithDelay",
           "DummyDDP", "MixtureOfExperts", "delay"]

__unittest = True


def delay(ms: float) -> None:
    """Hold the host ``ms`` milliseconds where an accelerator runs asynchronously; nothing on
    a CPU-only machine (see the module's docstring)."""
    if ms > 0 and devices.accelerator_type() is not None:
        time.sleep(ms / 1000)


class NonUniformReqGradNWM(NestedWrappedModule):
    """As ``NestedWrappedModule``, but its last two linear layers (16 -> 4 -> 8) sit together in
    one ``nn.Sequential`` (FSDP-wrapped as one unit with ``wrap_fsdp``), and ``init`` freezes
    every parameter except those of the very last layer (``module.2.1``)."""

    TRAINED = re.compile(r"module\.2.*\.1.*")  # with or without FSDP's wrapper prefixes

    def __init__(self, group: dist.ProcessGroup, wrap_fsdp: bool, device_init_mode: DEVICEInitMode,
                 deterministic: bool, **fsdp_kwargs: Any) -> None:
        FSDPTestModel.__init__(self)
        self.rank, self.world_size = group.rank(), group.size()
        before = device_init_mode == DEVICEInitMode.DEVICE_BEFORE

        def layer(n_in: int, n_out: int) -> nn.Module:
            return _move_to_device(nn.Linear(n_in, n_out), before)

        def wrapped(module: nn.Module) -> nn.Module:
            return fsdp_wrap(module, group, **fsdp_kwargs) if wrap_fsdp else module

        if deterministic:
            torch.manual_seed(0)
        self.module = nn.Sequential(
            layer(8, 4),
            wrapped(nn.Sequential(wrapped(layer(4, 16)), layer(16, 16))),
            wrapped(nn.Sequential(layer(16, 4), layer(4, 8))),
        )

    @staticmethod
    def _set_nonuniform_req_grad(model: nn.Module, req_grad_mask: re.Pattern[str] | str) -> None:
        """Freeze every parameter whose name does not match ``req_grad_mask`` (from the start)."""
        for name, param in model.named_parameters():
            if not re.match(req_grad_mask, name):
                param.requires_grad_(False)

    @staticmethod
    def init(group: dist.ProcessGroup, fsdp_init_mode: FSDPInitMode,
             device_init_mode: DEVICEInitMode, fsdp_kwargs: dict[str, Any] | None = None,
             deterministic: bool = False) -> nn.Module:
        """Plain (``NO_FSDP``) or with nested units wrapped (``RECURSIVE``, not the top level);
        either way only ``module.2.1`` keeps ``requires_grad``."""
        wrap = _wraps(fsdp_init_mode)
        model: nn.Module = NonUniformReqGradNWM(
            group, wrap_fsdp=wrap, device_init_mode=device_init_mode,
            deterministic=deterministic, **((fsdp_kwargs or {}) if wrap else {}))
        if wrap:
            model = _moved_if_after(model, device_init_mode)
        NonUniformReqGradNWM._set_nonuniform_req_grad(model, NonUniformReqGradNWM.TRAINED)
        return model


class ModuleWithDelay(FSDPTestModel):
    """A ``FSDPTestModel`` (``module``) with an optional delay after its loss is computed and
    one before each gradient reduce-scatter of its backward (see :func:`delay`)."""

    def __init__(self, module: nn.Module, delay_after_loss_ms: int,
                 delay_before_reduction_ms: int) -> None:
        super().__init__()
        self.module = module
        self.delay_after_loss_ms = delay_after_loss_ms
        self.delay_before_reduction_ms = delay_before_reduction_ms

    def get_input(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        return self.module.get_input(device)  # type: ignore[operator]  # nn.Module types its attributes as Module | Tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)

    def get_loss(self, input: Any, output: Any) -> torch.Tensor:
        loss = self.module.get_loss(input, output)  # type: ignore[operator]  # as in get_input
        if self.delay_after_loss_ms > 0:
            delay(self.delay_after_loss_ms)
        return loss

    def run_backward(self, loss: torch.Tensor) -> None:
        """The wrapped module's backward, with ``dist.reduce_scatter_tensor`` (FSDP1's gradient
        reduction) and ``dist.reduce_scatter_single`` delayed for its duration."""
        names = [n for n in ("reduce_scatter_tensor", "reduce_scatter_single") if hasattr(dist, n)]
        originals = {name: getattr(dist, name) for name in names}

        def delayed(original: Any) -> Any:
            def reduce_scatter_after_delay(*args: Any, **kwargs: Any) -> Any:
                if self.delay_before_reduction_ms > 0:
                    delay(self.delay_before_reduction_ms)
                return original(*args, **kwargs)
            return reduce_scatter_after_delay

        for name, original in originals.items():
            setattr(dist, name, delayed(original))
        try:
            self.module.run_backward(loss)  # type: ignore[operator]  # as in get_input
        finally:
            for name, original in originals.items():
                setattr(dist, name, original)

    @staticmethod
    def init(module_class: type[FSDPTestModel], *model_args: Any,
             delay_after_loss_ms: int, delay_before_reduction_ms: int,
             **model_kwargs: Any) -> nn.Module:
        """``module_class.init(*model_args, **model_kwargs)`` with the given delays."""
        return ModuleWithDelay(module_class.init(*model_args, **model_kwargs),
                               delay_after_loss_ms, delay_before_reduction_ms)


class NestedWrappedModuleWithDelay(ModuleWithDelay):
    """A ``NestedWrappedModule`` with delays (moved to the device after wrapping by default)."""

    @staticmethod
    def init(group: dist.ProcessGroup, fsdp_init_mode: FSDPInitMode,  # type: ignore[override]  # upstream's signature
             device_init_mode: DEVICEInitMode = DEVICEInitMode.DEVICE_AFTER,
             fsdp_kwargs: dict[str, Any] | None = None, deterministic: bool = False,
             delay_after_loss_ms: int = 0, delay_before_reduction_ms: int = 0) -> nn.Module:
        return ModuleWithDelay.init(
            NestedWrappedModule, group=group, fsdp_init_mode=fsdp_init_mode,
            device_init_mode=device_init_mode, fsdp_kwargs=fsdp_kwargs,
            deterministic=deterministic, delay_after_loss_ms=delay_after_loss_ms,
            delay_before_reduction_ms=delay_before_reduction_ms)


class DummyDDP(nn.Module):
    """Holds ``module`` and calls it: a stand-in for DDP around a model that reduces its own
    gradients (such as ``MixtureOfExperts``)."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)


class MixtureOfExperts(NestedWrappedModule):
    """``module``: Linear(8, 12), a shared Linear(12, 23), an expert Linear(23, 12) and
    Linear(12, 8). Expert parameters carry ``expert = True`` and, with ``deterministic``,
    differ between ranks (seed 42 + rank) while the rest is alike (seed 0). With ``wrap_fsdp``
    the expert is FSDP-wrapped on a one-rank group of its own (never sharded) and the shared
    layer on ``group``; without it ``run_backward`` averages the non-expert gradients over
    ``group`` itself. ``delay_before_free_ms`` delays the end of the expert's forward, before
    FSDP frees its unsharded parameters."""

    def __init__(self, group: dist.ProcessGroup, wrap_fsdp: bool, device_init_mode: DEVICEInitMode,
                 delay_before_free_ms: int, deterministic: bool, **fsdp_kwargs: Any) -> None:
        super().__init__(group=group, wrap_fsdp=wrap_fsdp, device_init_mode=device_init_mode,
                         deterministic=deterministic)
        self.group = group
        self.delay_before_free_ms = delay_before_free_ms
        self.wrap_fsdp = wrap_fsdp
        self.move_to_device = device_init_mode == DEVICEInitMode.DEVICE_BEFORE
        d_expert, d_shared, d_input = 23, 12, 8
        if deterministic:
            torch.manual_seed(42 + self.rank)
        expert = _move_to_device(nn.Linear(d_expert, d_shared), self.move_to_device)
        self.num_expert_params = sum(p.numel() for p in expert.parameters())
        for param in expert.parameters():
            param.expert = True  # type: ignore[attr-defined]  # a mark upstream's tests read on expert params
        if deterministic:
            torch.manual_seed(0)
        shared = _move_to_device(nn.Linear(d_shared, d_expert), self.move_to_device)
        inner_expert = expert
        if wrap_fsdp:
            expert_group = dist.new_group([group.rank()])  # one rank: nothing to shard
            expert = fsdp_wrap(expert, expert_group, **fsdp_kwargs)
            shared = fsdp_wrap(shared, group, **fsdp_kwargs)
        inner_expert.register_forward_hook(self._delay_before_free)
        self.module = nn.Sequential(
            _move_to_device(nn.Linear(d_input, d_shared), self.move_to_device),
            shared,
            expert,
            _move_to_device(nn.Linear(d_shared, d_input), self.move_to_device),
        )

    def _delay_before_free(self, module: nn.Module, args: Any, output: Any) -> None:
        # Runs as the expert's own forward ends, inside FSDP's forward: before its reshard.
        if self.delay_before_free_ms > 0 and self.wrap_fsdp:
            delay(self.delay_before_free_ms)

    def run_backward(self, loss: torch.Tensor) -> None:
        loss.backward()
        if self.wrap_fsdp:
            return
        with torch.no_grad():  # what FSDP would do for the shared parameters
            for param in self.parameters():
                if getattr(param, "expert", False) or param.grad is None:
                    continue
                param.grad.div_(self.world_size)
                dist.all_reduce(param.grad, group=self.group)

    @staticmethod
    def init(group: dist.ProcessGroup, fsdp_init_mode: FSDPInitMode,
             device_init_mode: DEVICEInitMode, fsdp_kwargs: dict[str, Any] | None = None,
             deterministic: bool = False, delay_before_free_ms: int = 0) -> nn.Module:
        """Plain (``NO_FSDP``) or with the expert and shared layers wrapped (``RECURSIVE``;
        not the top level)."""
        wrap = _wraps(fsdp_init_mode)
        model: nn.Module = MixtureOfExperts(
            group, wrap_fsdp=wrap, device_init_mode=device_init_mode,
            delay_before_free_ms=delay_before_free_ms, deterministic=deterministic,
            **((fsdp_kwargs or {}) if wrap else {}))
        return _moved_if_after(model, device_init_mode) if wrap else model
