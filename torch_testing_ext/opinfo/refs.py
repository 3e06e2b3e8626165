"""Named as in ``torch.testing._internal.opinfo.refs``: the installed torch's own module, loaded
with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). The ``PythonRefInfo`` kinds (OpInfos of
``torch._refs``)."""

from .._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["PythonRefInfo", "ReductionPythonRefInfo", "ElementwiseUnaryPythonRefInfo",
           "ElementwiseBinaryPythonRefInfo"]

_load_shipped_module(globals(), "opinfo/refs.py")
