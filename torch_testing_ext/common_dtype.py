"""Named as in ``torch.testing._internal.common_dtype``: the installed torch's own module, loaded
with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). Dtype lists and helpers (``floating_types``,
``all_types_and``, ...) that OpInfos name their dtypes with. (A bare ``import torch`` also
imports torch's own copy, for ``torch._refs``; this one is the package's, as every other face.)"""

from ._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["all_types", "all_types_and", "all_types_and_complex", "all_types_and_complex_and",
           "complex_types", "floating_types", "floating_types_and", "floating_and_complex_types",
           "floating_and_complex_types_and", "integral_types", "integral_types_and", "double_types",
           "custom_types", "get_all_dtypes"]

_load_shipped_module(globals(), "common_dtype.py")
