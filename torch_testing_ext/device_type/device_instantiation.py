"""``instantiate_device_type_tests``: one test class per device type from a generic class.

Example::

    class TestAdd(TestCase):
        @dtypes(torch.float32, torch.int64)
        def test_add(self, device, dtype):
            self.assertEqual(torch.ones(2, device=device, dtype=dtype) + 1, [2, 2])

    instantiate_device_type_tests(TestAdd, globals())

defines ``TestAddCPU`` with ``test_add_cpu_float32`` and ``test_add_cpu_int64`` (and
``TestAddCUDA`` with ``test_add_cuda_float32``... on a CUDA machine) and removes ``TestAdd``.
A test gets ``device`` (``"cpu"``, ``"cuda:0"``), or ``devices`` under ``deviceCountAtLeast``,
if its signature asks for it; ``@parametrize``, ``subtest`` and ``decorateIf`` apply as in
``instantiate_parametrized_tests`` (``decorateIf`` also sees ``device`` and ``dtype``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

import torch

from ..testcase.parametrize import add_test, variants
from .device_bases import DeviceTypeTestBase, desired_device_types, device_test_base

__all__ = ["instantiate_device_type_tests"]

__unittest = True


def _dtype_variants(fn: Callable[..., Any], device_type: str) -> list[tuple[str, dict[str, Any]]]:
    """(name suffix, keyword arguments) for each dtype choice of ``fn`` on ``device_type``."""
    chosen = getattr(fn, "dtypes", None)
    if chosen is None:
        return [("", {})]
    if "all" not in chosen:
        raise ValueError(f"{fn.__name__}: @dtypes is needed besides @dtypes(device_type=...)")
    found = []
    for choice in chosen.get(device_type, chosen["all"]):
        if isinstance(choice, (list, tuple)):
            found.append(("_" + "_".join(_dtype_name(d) for d in choice), {"dtypes": tuple(choice)}))
        else:
            found.append((f"_{_dtype_name(choice)}", {"dtype": choice}))
    return found


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _device_arguments(cls: type[DeviceTypeTestBase], fn: Callable[..., Any]) -> dict[str, Any]:
    """``device`` (or ``devices``) for ``fn``, if its signature takes it."""
    parameters = inspect.signature(fn).parameters
    if "device" not in parameters and "devices" not in parameters:
        return {}
    if hasattr(fn, "num_required_devices"):
        return {"devices": cls.get_all_devices()}
    return {"device": cls.get_primary_device()}


def _instantiate(cls: type[DeviceTypeTestBase], name: str, fn: Callable[..., Any]) -> None:
    device_kwargs = _device_arguments(cls, fn)
    for variant in variants(fn):
        for dtype_suffix, dtype_kwargs in _dtype_variants(fn, cls.device_type):
            kwargs = {**variant.kwargs, **device_kwargs, **dtype_kwargs}
            suffix = f"_{variant.suffix}" if variant.suffix else ""
            add_test(cls, f"{name}{suffix}_{cls.device_type}{dtype_suffix}", fn, kwargs,
                     variant.decorators)


def instantiate_device_type_tests(
    generic_test_class: type,
    scope: MutableMapping[str, Any],
    except_for: str | Iterable[str] | None = None,
    only_for: str | Iterable[str] | None = None,
    include_lazy: bool = False,
    allow_mps: bool = False,
    allow_xpu: bool = False,
) -> None:
    """Define ``<Generic><TYPE>`` in ``scope`` for each device type, and remove the generic class.

    Device types: ``cpu`` and the machine's accelerator (any kind: ``allow_xpu`` and
    ``allow_mps`` change nothing), kept to ``only_for`` and without ``except_for`` (a name or
    names; ``"privateuse1"`` names the PrivateUse1 backend). The lazy TorchScript device
    (``include_lazy=True``) is not offered.
    """
    if include_lazy:
        raise NotImplementedError("instantiate_device_type_tests(include_lazy=True): torch_testing_ext "
                                  "has no lazy TorchScript device type")
    scope.pop(generic_test_class.__name__, None)
    tests = {name: fn for name, fn in vars(generic_test_class).items()
             if name.startswith("test") and callable(fn)}
    for device_type in desired_device_types(only_for, except_for):
        class_name = generic_test_class.__name__ + device_type.upper()
        device_class: type[DeviceTypeTestBase] = type(
            class_name, (device_test_base(device_type), generic_test_class),
            {"__module__": generic_test_class.__module__, "__qualname__": class_name})
        for name, fn in tests.items():
            _instantiate(device_class, name, fn)
        scope[class_name] = device_class
    for name in tests:
        delattr(generic_test_class, name)
