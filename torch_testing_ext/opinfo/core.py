"""Named as in ``torch.testing._internal.opinfo.core``: the installed torch's own module, loaded
with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). ``OpInfo`` and its kinds, ``SampleInput``,
``ErrorInput``, ``DecorateInfo``."""

from .._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "DecorateInfo", "UnaryUfuncInfo", "BinaryUfuncInfo",
           "ReductionOpInfo", "ShapeFuncInfo", "SpectralFuncInfo", "ForeachFuncInfo"]

_load_shipped_module(globals(), "opinfo/core.py")
