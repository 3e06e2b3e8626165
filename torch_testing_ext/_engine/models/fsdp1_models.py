"""Test models for ``FullyShardedDataParallel`` (FSDP1) tests, built plain or FSDP-wrapped.

Each model's static ``init(group, fsdp_init_mode, device_init_mode, fsdp_kwargs=None,
deterministic=False, ...)`` builds it; parameter names and shapes are upstream's. Models
move to the machine's device type (``cpu`` here), and FSDP wrappers get
``device_id=cpu`` on a CPU-only machine unless ``fsdp_kwargs`` names one (FSDP1 refuses
CPU-only modules otherwise).
"""

from __future__ import annotations

import abc
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn

from ... import devices
from .._torch_private import fsdp_hybrid_sharding_strategies
from ..fsdp_bases.fsdp1_state_helpers import fsdp_wrap
from ..fsdp_bases.init_modes import DEVICEInitMode, FSDPInitMode

__all__ = ["FSDPTestModel", "TransformerWithSharedParams", "NestedWrappedModule",
           "AlwaysWrapNestedWrappedModule", "fsdp_wrap"]

__unittest = True


def _wraps(fsdp_init_mode: FSDPInitMode) -> bool:
    """Whether ``init`` wraps with FSDP: ``RECURSIVE`` does, ``NO_FSDP`` does not."""
    if fsdp_init_mode not in (FSDPInitMode.NO_FSDP, FSDPInitMode.RECURSIVE):
        raise ValueError(f"Unsupported FSDP init mode: {fsdp_init_mode!r} "
                         "(expected an FSDPInitMode)")
    return fsdp_init_mode == FSDPInitMode.RECURSIVE


def _moved_if_after(model: nn.Module, device_init_mode: DEVICEInitMode) -> nn.Module:
    """``model`` on the device type when it moves after wrapping (``DEVICE_AFTER``)."""
    if device_init_mode == DEVICEInitMode.DEVICE_AFTER:
        return model.to(devices.device_type())
    return model


class FSDPTestModel(nn.Module, abc.ABC):
    """What FSDP1 parity tests need of a model: inputs, loss, backward and a builder."""

    @abc.abstractmethod
    def get_input(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        """One input for the model, as a tuple of positional arguments."""

    @abc.abstractmethod
    def get_loss(self, input: Any, output: Any) -> torch.Tensor:
        """The loss of ``output`` for ``input``."""

    @abc.abstractmethod
    def run_backward(self, loss: torch.Tensor) -> None:
        """The backward pass (at least ``loss.backward()``)."""

    @staticmethod
    @abc.abstractmethod
    def init(*args: Any, **kwargs: Any) -> nn.Module:
        """Build an instance (plain or FSDP-wrapped)."""


class TransformerWithSharedParams(FSDPTestModel):
    """A tiny ``nn.Transformer`` (d_model 16, 2+2 layers) whose embedding and output projection
    share one weight, with buffers ``vocab_bias`` (float) and ``long_buffer`` (long) and a
    ``BatchNorm1d`` (or ``Identity`` without ``add_bn``) on the target embedding."""

    vocab_bias: torch.Tensor
    long_buffer: torch.Tensor

    def __init__(self, group: dist.ProcessGroup, device_init_mode: DEVICEInitMode, add_bn: bool,
                 deterministic: bool) -> None:
        super().__init__()
        self.rank, self.world_size = group.rank(), group.size()
        if deterministic:
            torch.manual_seed(0)
        vocab, width = 23, 16
        self.embed_tokens = nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(d_model=width, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=8, dropout=0.1)
        self.output_proj = nn.Linear(width, vocab)
        self.output_proj.weight = self.embed_tokens.weight  # the shared parameter
        self.register_buffer("vocab_bias", self.embed_tokens.weight.new_ones((width,)))
        self.register_buffer("long_buffer", torch.zeros_like(self.vocab_bias, dtype=torch.long))
        self.bs = 2
        self.bn: nn.Module = nn.BatchNorm1d(self.bs) if add_bn else nn.Identity()
        if device_init_mode == DEVICEInitMode.DEVICE_BEFORE:
            self.to(devices.device_type())
        if deterministic:
            self.eval()  # no dropout

    def get_input(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(1 + self.rank)
        source = torch.arange(12, device=device).view(6, self.bs)  # time x batch
        target = torch.arange(self.bs * 4, device=device).view(4, self.bs)
        return source, target

    def forward(self, src_ids: torch.Tensor, tgt_ids: torch.Tensor) -> torch.Tensor:
        source = self.embed_tokens(src_ids)
        source = source + self.vocab_bias + self.long_buffer.type_as(source)
        target = self.bn(self.embed_tokens(tgt_ids))
        return self.output_proj(self.transformer(source, target))

    def get_loss(self, input: Any, output: torch.Tensor) -> torch.Tensor:
        _, target = input
        return nn.functional.cross_entropy(output.view(-1, output.size(-1)), target.view(-1),
                                           reduction="sum")

    def run_backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def get_ignored_modules(self) -> list[nn.Module]:
        return [self.transformer]

    @staticmethod
    def init(group: Any, fsdp_init_mode: FSDPInitMode, device_init_mode: DEVICEInitMode,
             fsdp_kwargs: dict[str, Any] | None = None, deterministic: bool = False,
             add_bn: bool = True) -> nn.Module:
        """Plain (``NO_FSDP``), or wrapped whole with FSDP1 (``RECURSIVE``), by default with a
        ``ModuleWrapPolicy`` for the encoder and decoder layers. ``group`` may be a tuple of
        groups for hybrid sharding (the model reads ranks from the first)."""
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy

        wrap = _wraps(fsdp_init_mode)
        model_group = group[0] if isinstance(group, tuple) else group
        model = TransformerWithSharedParams(model_group, device_init_mode, add_bn, deterministic)
        if not wrap:
            return model
        fsdp_kwargs = dict(fsdp_kwargs or {})
        if "auto_wrap_policy" in fsdp_kwargs:  # None included: no auto-wrapping
            policy = fsdp_kwargs.pop("auto_wrap_policy")
        else:
            policy = ModuleWrapPolicy({nn.TransformerEncoderLayer, nn.TransformerDecoderLayer})
        hybrid = fsdp_kwargs.get("sharding_strategy") in fsdp_hybrid_sharding_strategies()
        # A hybrid strategy given one group makes its own intra-/inter-node groups.
        fsdp_group = None if hybrid and not isinstance(group, tuple) else group
        wrapped = fsdp_wrap(model, fsdp_group, auto_wrap_policy=policy, **fsdp_kwargs)
        return _moved_if_after(wrapped, device_init_mode)


class NestedWrappedModule(FSDPTestModel):
    """``module``: Linear(8, 4), [Linear(4, 16), Linear(16, 16)], Linear(16, 4), Linear(4, 8) in
    an ``nn.Sequential``; with ``wrap_fsdp`` the bracketed pair, its first layer and
    Linear(16, 4) are FSDP-wrapped (the whole is not)."""

    def __init__(self, group: dist.ProcessGroup, wrap_fsdp: bool, device_init_mode: DEVICEInitMode,
                 deterministic: bool, **fsdp_kwargs: Any) -> None:
        super().__init__()
        self.rank, self.world_size = group.rank(), group.size()
        on_device = device_init_mode == DEVICEInitMode.DEVICE_BEFORE

        def placed(layer: nn.Module) -> nn.Module:
            return layer.to(devices.device_type()) if on_device else layer

        def wrapped(layer: nn.Module) -> nn.Module:
            return fsdp_wrap(layer, group, **fsdp_kwargs) if wrap_fsdp else layer

        if deterministic:
            torch.manual_seed(0)
        self.module = nn.Sequential(
            placed(nn.Linear(8, 4)),
            wrapped(nn.Sequential(wrapped(placed(nn.Linear(4, 16))), placed(nn.Linear(16, 16)))),
            wrapped(placed(nn.Linear(16, 4))),
            placed(nn.Linear(4, 8)),
        )

    def get_input(self, device: torch.device) -> tuple[torch.Tensor]:
        torch.manual_seed(1 + self.rank)
        return (torch.rand(4, 8, device=device),)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)

    def get_loss(self, input: Any, output: torch.Tensor) -> torch.Tensor:
        return output.sum()

    def run_backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    @staticmethod
    def init(group: dist.ProcessGroup, fsdp_init_mode: FSDPInitMode,
             device_init_mode: DEVICEInitMode, fsdp_kwargs: dict[str, Any] | None = None,
             deterministic: bool = False) -> nn.Module:
        """Plain (``NO_FSDP``) or with its nested modules FSDP-wrapped (``RECURSIVE``; the
        top level stays unwrapped, for the test to wrap if it wants)."""
        wrap = _wraps(fsdp_init_mode)
        model = NestedWrappedModule(group, wrap_fsdp=wrap, device_init_mode=device_init_mode,
                                    deterministic=deterministic, **(fsdp_kwargs or {}))
        return _moved_if_after(model, device_init_mode) if wrap else model


class AlwaysWrapNestedWrappedModule(NestedWrappedModule):
    """``NestedWrappedModule`` built plain, then (``RECURSIVE``) wrapped whole with FSDP1 and
    ``always_wrap_policy`` (every submodule its own FSDP unit)."""

    @staticmethod
    def init(group: dist.ProcessGroup, fsdp_init_mode: FSDPInitMode,
             device_init_mode: DEVICEInitMode, fsdp_kwargs: dict[str, Any] | None = None,
             deterministic: bool = False) -> nn.Module:
        from torch.distributed.fsdp.wrap import always_wrap_policy

        wrap = _wraps(fsdp_init_mode)
        model = NestedWrappedModule.init(group, FSDPInitMode.NO_FSDP, device_init_mode,
                                         deterministic=deterministic)
        if not wrap:
            return model
        wrapped = fsdp_wrap(model, auto_wrap_policy=always_wrap_policy, **(fsdp_kwargs or {}))
        return _moved_if_after(wrapped, device_init_mode)
