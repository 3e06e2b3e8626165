"""Named as in ``torch.testing._internal.opinfo.utils``: the installed torch's own module, loaded
with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). Dtype helpers of the OpInfos
(``_dynamic_dispatch_dtypes``) and NumPy references."""

from .._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["get_supported_dtypes", "np_unary_ufunc_integer_promotion_wrapper", "prod_numpy",
           "reference_reduction_numpy"]

_load_shipped_module(globals(), "opinfo/utils.py")
