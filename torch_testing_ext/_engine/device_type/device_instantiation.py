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

Test ids are upstream's: ``<test>[_<parametrize name>]_<device type>[_<dtype>...]``, the dtype
part from the test's ``dtype`` or ``dtypes`` argument whether ``@dtypes`` or ``@parametrize``
gave it (``@parametrize("dtype", [torch.float32])``: ``test_x_float32_cpu_float32``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

from .._torch_private import privateuse1_backend_name
from ..testcase.parametrize import add_test, dtype_name, parametrize_layers, variants, variants_of
from .device_bases import DeviceTypeTestBase, desired_device_types, device_test_base
from .op_tests import op_cases, ops_position
from .tolerances import tolerances_for

__all__ = ["instantiate_device_type_tests"]

__unittest = True


def _dtype_choices(fn: Callable[..., Any], device_type: str) -> list[dict[str, Any]]:
    """The keyword arguments of each ``@dtypes`` choice of ``fn`` on ``device_type``: ``dtype``,
    or ``dtypes`` for a tuple of dtypes (one empty choice without ``@dtypes``)."""
    chosen = getattr(fn, "dtypes", None)
    if chosen is None:
        return [{}]
    if "all" not in chosen:
        raise ValueError(f"{fn.__name__}: @dtypes is needed besides @dtypes(device_type=...)")
    return [{"dtypes": choice} if isinstance(choice, (list, tuple)) else {"dtype": choice}
            for choice in chosen.get(device_type, chosen["all"])]


def _dtype_suffix(kwargs: dict[str, Any]) -> str:
    """The name part after the device type, from the test's ``dtypes`` or ``dtype`` argument
    (whether ``@dtypes`` or ``@parametrize`` gave it): ``_float32``, ``_int8_float32``."""
    given = kwargs.get("dtypes", kwargs.get("dtype"))
    if isinstance(given, (list, tuple)):
        return "".join(f"_{dtype_name(dtype)}" for dtype in given)
    return f"_{dtype_name(given)}" if given else ""


def _device_arguments(cls: type[DeviceTypeTestBase], fn: Callable[..., Any]) -> dict[str, Any]:
    """``device`` (or ``devices``) for ``fn``, if its signature takes it."""
    parameters = inspect.signature(fn).parameters
    if "device" not in parameters and "devices" not in parameters:
        return {}
    if hasattr(fn, "num_required_devices"):
        return {"devices": cls.get_all_devices()}
    return {"device": cls.get_primary_device()}


def _with_dtype_tolerances(test: Any, body: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call ``body`` with the tolerances its ``precisionOverride``/``toleranceOverride`` give the
    test's dtype as ``test.precision``/``test.rel_tol`` (as upstream), restored after."""
    dtype = kwargs.get("dtypes", kwargs.get("dtype"))
    before = test.precision, test.rel_tol
    if dtype:
        test.precision, test.rel_tol = tolerances_for(body, dtype, test.precision, test.rel_tol)
    try:
        return body(test, **kwargs)
    finally:
        test.precision, test.rel_tol = before


def _instantiate_ops(cls: type[DeviceTypeTestBase], generic_name: str, name: str, fn: Callable[..., Any],
                     below: int) -> None:
    """Add ``<name>_<op>[_<parametrize name>]_<device type>[_<dtype>]`` to ``cls`` per OpInfo, dtype
    and ``@parametrize`` combination (``below``: how many ``@parametrize`` layers are under
    ``@ops``; their name parts follow the op's)."""
    if getattr(fn, "dtypes", None) is not None:
        raise RuntimeError(f"{fn.__name__}: @dtypes and @ops both give the test its dtype")
    device_kwargs = _device_arguments(cls, fn)
    layers = parametrize_layers(fn)
    above, under = variants_of(layers[:len(layers) - below], fn.__name__), variants_of(layers[len(layers) - below:],
                                                                                     fn.__name__)
    for case in op_cases(fn, generic_name, cls.device_type, device_kwargs):
        for top in above:
            for bottom in under:
                kwargs = {**case.kwargs, **top.kwargs, **bottom.kwargs}
                if len(kwargs) != len(case.kwargs) + len(top.kwargs) + len(bottom.kwargs):
                    raise RuntimeError(f"{fn.__name__}: a parameter is given by both @ops and @parametrize")
                kwargs.update(device_kwargs)
                suffix = "_".join(part for part in (top.suffix, case.name, bottom.suffix) if part)
                add_test(cls, f"{name}_{suffix}_{cls.device_type}{_dtype_suffix(kwargs)}", case.body, kwargs,
                         (*top.decorators, *bottom.decorators, *case.decorators), around=_with_dtype_tolerances)


def _instantiate(cls: type[DeviceTypeTestBase], generic_name: str, name: str, fn: Callable[..., Any]) -> None:
    """Add ``<name>[_<parametrize name>]_<device type>[_<dtypes>]`` to ``cls`` per combination."""
    below = ops_position(fn)
    if below is not None:
        _instantiate_ops(cls, generic_name, name, fn, below)
        return
    device_kwargs = _device_arguments(cls, fn)
    for dtype_kwargs in _dtype_choices(fn, cls.device_type):
        for variant in variants(fn):
            twice = dtype_kwargs.keys() & variant.kwargs.keys()
            if twice:
                raise RuntimeError(f"{fn.__name__}: {sorted(twice)} given by both @dtypes and @parametrize")
            kwargs = {**dtype_kwargs, **variant.kwargs, **device_kwargs}
            suffix = f"_{variant.suffix}" if variant.suffix else ""
            add_test(cls, f"{name}{suffix}_{cls.device_type}{_dtype_suffix(kwargs)}", fn, kwargs,
                     variant.decorators, around=_with_dtype_tolerances)


def instantiate_device_type_tests(
    generic_test_class: type,
    scope: MutableMapping[str, Any],
    except_for: str | Iterable[str] | None = None,
    only_for: str | Iterable[str] | None = None,
    include_lazy: bool = False,
    allow_mps: bool = False,
    allow_xpu: bool = False,
) -> None:
    """Define ``<Generic><TYPE>`` in ``scope`` for each device type (``<Generic>PRIVATEUSE1`` for
    a PrivateUse1 backend, as upstream), and remove the generic class.

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
        # Upstream names a PrivateUse1 backend's class by the alias (its tests by the backend).
        alias = "privateuse1" if device_type == privateuse1_backend_name() else device_type
        class_name = generic_test_class.__name__ + alias.upper()
        device_class: type[DeviceTypeTestBase] = type(
            class_name, (device_test_base(device_type), generic_test_class),
            {"__module__": generic_test_class.__module__, "__qualname__": class_name})
        for name, fn in tests.items():
            _instantiate(device_class, generic_test_class.__name__, name, fn)
        scope[class_name] = device_class
    for name in tests:
        delattr(generic_test_class, name)
