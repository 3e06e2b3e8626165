"""``FSDP1ParityMixin``: ``_test_fsdp_parity`` and ``_train_for_several_steps``, the way FSDP1
(``FullyShardedDataParallel``) tests check training against a data-parallel reference; and
``FSDPTestMixin``, upstream's helpers shared by ``FSDPTest`` and ``FSDPTestContinuous`` (the
parity check, ``run_subtests`` and the checks of an FSDP1 module's settings).

A test model class (a ``FSDPTestModel``) is built twice with the same seed: plain, wrapped by
the reference (DDP by default), and with FSDP (``fsdp_init_mode``, then FSDP at the top level
if ``init`` did not put it there). Both train ``num_iters`` steps of SGD with momentum; the
last losses must be close, and (without mixed precision or pure fp16) every unsharded FSDP
parameter equal to DDP's, on the same device. On a CPU-only machine DDP and FSDP run on CPU
ranks with gloo, FSDP with ``device_id=cpu``.

Example::

    class TestCore(FSDPTest):
        def test_nested(self):
            self._test_fsdp_parity(NestedWrappedModule, FSDPInitMode.RECURSIVE,
                                   DEVICEInitMode.DEVICE_BEFORE)
"""

from __future__ import annotations

import contextlib
import unittest
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn

from ... import devices
from .._torch_private import fsdp_unsharded_between_forward_and_backward
from ..distributed_bases.subtests import SubtestsMixin
from ..worlds.rank_facts import rank_device_index
from .fsdp1_state_helpers import _zero_model, fsdp_wrap
from .init_modes import DEVICEInitMode, FSDPInitMode
from .sharded_parity import get_full_params

__all__ = ["FSDP1ParityMixin", "FSDPTestMixin"]

__unittest = True



def _test_case(mixin: Any) -> Any:  # a unittest.TestCase, maybe with our assertEqual's options
    if not isinstance(mixin, unittest.TestCase):
        raise TypeError("FSDP1ParityMixin must be mixed into a unittest.TestCase")
    return mixin


class FSDP1ParityMixin:
    """FSDP1 training parity for a test case with a ``process_group`` (``FSDPTest``,
    ``FSDPTestContinuous``)."""

    process_group: Any

    def _train_for_several_steps(
        self, model: nn.Module, num_steps: int, autocast: bool, lr: float = 0.01,
        fsdp_cpu_offload: Any = None, save_model: bool = False, mixed_precision: Any = None,
        enable_sharded_grad_scaler: bool = False, use_pure_fp16: bool = False,
        sharded_grad_scaler_kwargs: dict[str, Any] | None = None,
    ) -> torch.Tensor:
        """Train ``model`` (DDP or FSDP around a ``FSDPTestModel``, reached as ``model.module``)
        ``num_steps`` steps of SGD (momentum 0.9; Adam is scale-invariant) through a
        ``ShardedGradScaler`` (enabled if asked); the last loss, detached. Checks on the way:
        the loss's dtype (float32 unless mixed precision or fp16), offloaded FSDP parameters
        on CPU, and with ``save_model`` a state-dict save, zeroing and load after each step."""
        from torch.distributed.fsdp import FullyShardedDataParallel
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        test = _test_case(self)
        device = devices.device_type()
        offload = bool(fsdp_cpu_offload is not None and fsdp_cpu_offload.offload_params)
        is_fsdp = isinstance(model, FullyShardedDataParallel)
        wrapper: Any = model
        model_device = next(model.parameters()).device
        scaler_kwargs = {"device": device, **(sharded_grad_scaler_kwargs or {})}
        scaler = ShardedGradScaler(enabled=enable_sharded_grad_scaler, **scaler_kwargs)
        optim = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        inner: Any = model.module
        loss = torch.zeros(())
        for _ in range(num_steps):
            optim.zero_grad()
            with torch.amp.autocast(device, enabled=autocast):
                inputs = inner.get_input(torch.device(device))
                if use_pure_fp16 or (mixed_precision is not None and not is_fsdp):
                    inputs = inputs.half() if isinstance(inputs, torch.Tensor) \
                        else tuple(x.half() for x in inputs)
                output = model(*inputs)
                reshards = is_fsdp and wrapper.sharding_strategy not in fsdp_unsharded_between_forward_and_backward()
                if offload and reshards:
                    for param in model.parameters():
                        test.assertEqual(param.device, torch.device("cpu"))
                loss = inner.get_loss(inputs, output).to(model_device)
            loss = scaler.scale(loss)
            if mixed_precision is None and not use_pure_fp16:
                test.assertEqual(loss.dtype, torch.float32,
                                 "the loss of a float32 model must be float32")
            elif use_pure_fp16:
                test.assertEqual(loss.dtype, torch.float16)
            elif is_fsdp:
                test.assertEqual(loss.dtype, mixed_precision.param_dtype)
            else:
                test.assertEqual(loss.dtype, torch.float32)
            inner.run_backward(loss)
            if offload and is_fsdp:
                for param in model.parameters():
                    test.assertEqual(param.device, torch.device("cpu"))
            scaler.step(optim)
            scaler.update()
            if save_model:
                saved = {name: value.clone() for name, value in model.state_dict().items()}
                _zero_model(model)  # a broken save/load would now break parity
                model.load_state_dict(saved)
        return loss.detach()

    def _test_fsdp_parity(
        self, model_class: Any, fsdp_init_mode: FSDPInitMode, device_init_mode: DEVICEInitMode,
        ref_init_fn: Callable[[nn.Module], nn.Module] | None = None, num_iters: int = 2,
        save_model: bool = True, cpu_offload: Any = None, backward_prefetch: Any = None,
        sharding_strategy: Any = None, mixed_precision: Any = None, forward_prefetch: bool = False,
        use_orig_params: bool = False, enable_sharded_grad_scaler: bool = False,
        use_pure_fp16: bool = False, init_kwargs: dict[str, Any] | None = None,
        sharded_grad_scaler_kwargs: dict[str, Any] | None = None, **fsdp_kwargs: Any,
    ) -> None:
        """Train ``model_class`` under the reference (``ref_init_fn(model)``, default DDP) and
        under FSDP with the given settings, and compare (see the module's docstring).
        ``cpu_offload=None`` means ``CPUOffload()``. Offloading parameters with
        ``DEVICE_AFTER`` on an accelerator must fail FSDP's lazy init with its error."""
        from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel
        from torch.nn.parallel import DistributedDataParallel

        test = _test_case(self)
        if fsdp_init_mode == FSDPInitMode.NO_FSDP:
            raise ValueError("_test_fsdp_parity needs an FSDP init mode that wraps with FSDP")
        cpu_offload = CPUOffload() if cpu_offload is None else cpu_offload
        init_kwargs = init_kwargs or {}
        device = devices.device_type()
        lr = 1e-2
        group = self.process_group
        model = model_class.init(group, FSDPInitMode.NO_FSDP, DEVICEInitMode.DEVICE_BEFORE,
                                 deterministic=True, **init_kwargs)
        if ref_init_fn is not None:
            ref_model = ref_init_fn(model)
        elif devices.accelerator_type() is None:
            ref_model = DistributedDataParallel(model)
        else:
            index = rank_device_index(group.rank())
            ref_model = DistributedDataParallel(model, device_ids=[index], output_device=index)
        if use_pure_fp16:
            ref_model = ref_model.half()
        common = {"lr": lr, "fsdp_cpu_offload": cpu_offload, "mixed_precision": mixed_precision,
                  "enable_sharded_grad_scaler": enable_sharded_grad_scaler,
                  "use_pure_fp16": use_pure_fp16,
                  "sharded_grad_scaler_kwargs": sharded_grad_scaler_kwargs}
        ref_loss = self._train_for_several_steps(ref_model, num_iters,
                                                 autocast=mixed_precision is not None, **common)
        ref_params = list(ref_model.parameters())
        fsdp_kwargs.update(cpu_offload=cpu_offload, backward_prefetch=backward_prefetch,
                           sharding_strategy=sharding_strategy, mixed_precision=mixed_precision,
                           forward_prefetch=forward_prefetch, use_orig_params=use_orig_params)
        try:
            fsdp_model = model_class.init(group, fsdp_init_mode, device_init_mode, fsdp_kwargs,
                                          deterministic=True, **init_kwargs)
        except Exception as error:
            raise ValueError(f"Initializing {model_class} raised error {error}") from error
        if not isinstance(fsdp_model, FullyShardedDataParallel):
            fsdp_model = fsdp_wrap(fsdp_model, group, **fsdp_kwargs)
        if use_pure_fp16:
            fsdp_model = fsdp_model.half()
        if device_init_mode == DEVICEInitMode.DEVICE_AFTER:
            fsdp_model = fsdp_model.to(device)
        offload = cpu_offload is not None and cpu_offload.offload_params
        # On CPU, DEVICE_AFTER leaves the parameters where offloading wants them.
        expects_error = offload and device_init_mode == DEVICEInitMode.DEVICE_AFTER and device != "cpu"
        if offload and not expects_error:
            for param in fsdp_model.parameters():
                test.assertEqual(param.device, torch.device("cpu"))
        expected = (test.assertRaisesRegex(RuntimeError, "An FSDP-managed module with parameter "
                                           f"CPU offloading enabled has parameters on {device}")
                    if expects_error else contextlib.nullcontext())
        with expected:
            fsdp_loss = self._train_for_several_steps(fsdp_model, num_iters, autocast=False,
                                                      save_model=save_model, **common)
        if expects_error:
            return
        if offload:
            for param in fsdp_model.parameters():
                test.assertEqual(param.device, torch.device("cpu"))
            fsdp_loss = fsdp_loss.to(device)
        fsdp_params = get_full_params(fsdp_model)
        torch.testing.assert_close(ref_loss, fsdp_loss, check_dtype=False)
        if mixed_precision is None and not use_pure_fp16:
            test.assertEqual(ref_params, fsdp_params, exact_device=True, msg="FSDP did not match DDP")


class FSDPTestMixin(FSDP1ParityMixin, SubtestsMixin):
    """What ``FSDPTest`` and ``FSDPTestContinuous`` share, as upstream's mixin of that name."""

    def _check_cpu_offload(self, fsdp_model: Any, cpu_offload: Any) -> None:
        self.assertEqual(cpu_offload, fsdp_model.cpu_offload)  # type: ignore[attr-defined]

    def _check_backward_prefetch(self, fsdp_model: Any, backward_prefetch: Any) -> None:
        self.assertEqual(backward_prefetch, fsdp_model.backward_prefetch)  # type: ignore[attr-defined]

    def _check_forward_prefetch(self, fsdp_model: Any, forward_prefetch: Any) -> None:
        self.assertEqual(forward_prefetch, fsdp_model.forward_prefetch)  # type: ignore[attr-defined]
